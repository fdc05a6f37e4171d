/**
 * The demo as a catalogue without a database: the four mosaic crops as STAC items of collection
 * `demo`, written as stac-geoparquet (hyparquet-writer: WKB geometry, the bbox and assets as
 * structs, GeoParquet 1.1's `geo` metadata, as rustac writes it and reads it back) into
 * `catalog/items.parquet`, with the collection's document beside it (`catalog/demo.json`).
 * `make run` serves the folder as TESSERA_CATALOG: /collections/demo/… is the demo's mosaic.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';

export interface DemoCatalogItem {
  id: string;
  href: string;
  /** Closed lon/lat ring of the footprint. */
  ring: Array<[number, number]>;
  bbox: readonly [number, number, number, number];
  datetime: string;
}

const COG_MEDIA_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';

/** WKB of a one-ring polygon (little-endian). */
function polygonWkb(ring: ReadonlyArray<readonly [number, number]>): Uint8Array {
  const view = new DataView(new ArrayBuffer(13 + ring.length * 16));
  view.setUint8(0, 1);
  view.setUint32(1, 3, true);
  view.setUint32(5, 1, true);
  view.setUint32(9, ring.length, true);
  ring.forEach(([x, y], i) => {
    view.setFloat64(13 + i * 16, x, true);
    view.setFloat64(21 + i * 16, y, true);
  });
  return new Uint8Array(view.buffer);
}

const utf8 = (name: string, required = true) => ({
  name,
  type: 'BYTE_ARRAY' as const,
  converted_type: 'UTF8' as const,
  repetition_type: required ? ('REQUIRED' as const) : ('OPTIONAL' as const),
});
const double = (name: string) => ({ name, type: 'DOUBLE' as const, repetition_type: 'REQUIRED' as const });

/** Writes `catalog/items.parquet` and `catalog/demo.json` under `outDir`; returns their paths. */
export async function writeDemoCatalog(outDir: string, items: readonly DemoCatalogItem[]): Promise<string[]> {
  const dir = path.join(outDir, 'catalog');
  await fs.mkdir(dir, { recursive: true });
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: 'type', data: items.map(() => 'Feature') },
      { name: 'stac_version', data: items.map(() => '1.0.0') },
      { name: 'id', data: items.map((i) => i.id) },
      { name: 'collection', data: items.map(() => 'demo') },
      { name: 'datetime', data: items.map((i) => new Date(i.datetime)) },
      { name: 'geometry', data: items.map((i) => polygonWkb(i.ring)) },
      { name: 'bbox', data: items.map(({ bbox: [xmin, ymin, xmax, ymax] }) => ({ xmin, ymin, xmax, ymax })) },
      { name: 'assets', data: items.map((i) => ({ rgb: { href: i.href, type: COG_MEDIA_TYPE, roles: ['data'] } })) },
    ],
    schema: [
      { name: 'root', num_children: 8 },
      utf8('type'),
      utf8('stac_version'),
      utf8('id'),
      utf8('collection'),
      { name: 'datetime', type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' }, repetition_type: 'OPTIONAL' },
      { name: 'geometry', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED' },
      { name: 'bbox', repetition_type: 'REQUIRED', num_children: 4 },
      double('xmin'),
      double('ymin'),
      double('xmax'),
      double('ymax'),
      { name: 'assets', repetition_type: 'REQUIRED', num_children: 1 },
      { name: 'rgb', repetition_type: 'OPTIONAL', num_children: 3 },
      utf8('href', false),
      utf8('type', false),
      { name: 'roles', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      utf8('element', false),
    ],
    kvMetadata: [
      {
        key: 'geo',
        value: JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: ['Polygon'] } } }),
      },
      { key: 'stac-geoparquet', value: JSON.stringify({ version: '1.0.0' }) },
    ],
  });
  const parquet = path.join(dir, 'items.parquet');
  await fs.writeFile(parquet, Buffer.from(buffer));
  const bounds = [
    Math.min(...items.map((i) => i.bbox[0])),
    Math.min(...items.map((i) => i.bbox[1])),
    Math.max(...items.map((i) => i.bbox[2])),
    Math.max(...items.map((i) => i.bbox[3])),
  ];
  const collection = {
    type: 'Collection',
    stac_version: '1.0.0',
    id: 'demo',
    description: "tessera's demo: four overlapping crops of a synthetic shaded relief of the Bernese Alps",
    license: 'CC0-1.0',
    extent: { spatial: { bbox: [bounds] }, temporal: { interval: [[items[0]!.datetime, items[items.length - 1]!.datetime]] } },
    item_assets: { rgb: { type: COG_MEDIA_TYPE, roles: ['data'] } },
    links: [],
  };
  const doc = path.join(dir, 'demo.json');
  await fs.writeFile(doc, `${JSON.stringify(collection, null, 2)}\n`);
  return [parquet, doc];
}
