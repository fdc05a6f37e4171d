/** GeoJSON the tests and tools write into the STAC items they make. */

/** The polygon of a bounding box [west, south, east, north], counter-clockwise from the south-west corner. */
export function bboxPolygon(bbox: readonly number[]): { type: 'Polygon'; coordinates: number[][][] } {
  const [w, s, e, n] = bbox as [number, number, number, number];
  return {
    type: 'Polygon',
    coordinates: [
      [
        [w, s],
        [e, s],
        [e, n],
        [w, n],
        [w, s],
      ],
    ],
  };
}
