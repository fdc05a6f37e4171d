/**
 * A STAC item as tessera reads it: its bbox and the assets rio-tiler 6 would use (media types it can
 * read, or no type), with hrefs made absolute against the item's self link or its own URL.
 */
import { badRequest, TesseraError, pyList } from '../errors.js';
import type { BBox } from '../tms/grid.js';

/** rio-tiler 6's default `include_asset_types`. */
const READABLE_MEDIA_TYPES = new Set([
  'image/tiff; application=geotiff',
  'image/tiff; application=geotiff; profile=cloud-optimized',
  'image/tiff; profile=cloud-optimized; application=geotiff',
  'image/vnd.stac.geotiff; cloud-optimized=true',
  'image/tiff',
  'image/x.geotiff',
  'image/jp2',
  'application/x-hdf5',
  'application/x-hdf',
]);

export interface StacAsset {
  name: string;
  href: string;
  type: string | undefined;
  /** Per-band (min, max) from `raster:bands[].statistics`, when every band has both. */
  statistics: Array<[number, number]> | undefined;
  /** Extra fields of the asset (title, roles …), passed on as image metadata. */
  fields: Record<string, unknown>;
}

export interface StacItem {
  id: string;
  url: string;
  bbox: BBox;
  /** Readable assets, in item order. */
  assets: StacAsset[];
  /**
   * The item's own CRS from its projection extension, where rio-tiler 9's STACReader finds one
   * (`_extract_proj_info`): the CRS its readable assets with a transform and shape share (with the
   * item's), else the item's when it has a transform and shape too. TiTiler 2.x draws `/map` in it.
   */
  crs?: string;
  /** The grid of the item rio-tiler 9 makes from the projection extension, in `crs` (see `projection`). */
  grid?: StacGrid;
  /** The item's `renders` (the STAC render extension: named sets of tile parameters), as its document has them. */
  renders?: Record<string, unknown>;
}

/**
 * rio-tiler 9's grid of an item (`_extract_proj_info`): the union of its assets' grids (`proj:shape`,
 * `proj:transform`) cut at the finest asset's resolution, else the item's own grid. Its bounds and
 * zooms are TiTiler 2.x's for the item (the collision `stacProjection`).
 */
export interface StacGrid {
  /** Native bounds (west, south, east, north) in the item's CRS. */
  bounds: BBox;
  width: number;
  height: number;
  /** GDAL's geotransform of the grid. */
  geoTransform: [number, number, number, number, number, number];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function rasterStatistics(asset: Record<string, unknown>): Array<[number, number]> | undefined {
  const bands = asset['raster:bands'];
  if (!Array.isArray(bands) || bands.length === 0) return undefined;
  const out: Array<[number, number]> = [];
  for (const band of bands) {
    const stats = isRecord(band) && isRecord(band['statistics']) ? band['statistics'] : undefined;
    const min = stats?.['minimum'];
    const max = stats?.['maximum'];
    if (typeof min !== 'number' || typeof max !== 'number') return undefined;
    out.push([min, max]);
  }
  return out;
}

function resolveHref(href: string, base: string): string {
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

/**
 * The href of an item's asset `name`, whatever its media type, resolved against the item's `self`
 * link where it is relative (pystac's `get_absolute_href`); undefined when the item has no such asset.
 */
export function assetHref(doc: unknown, name: string): string | undefined {
  if (!isRecord(doc) || !isRecord(doc['assets'])) return undefined;
  const asset = Object.hasOwn(doc['assets'], name) ? doc['assets'][name] : undefined;
  if (!isRecord(asset) || typeof asset['href'] !== 'string') return undefined;
  const links = Array.isArray(doc['links']) ? doc['links'] : [];
  const self = links.find((l) => isRecord(l) && l['rel'] === 'self' && typeof l['href'] === 'string') as { href: string } | undefined;
  return self ? resolveHref(asset['href'], self.href) : asset['href'];
}

/** Validates a fetched document as a STAC item; `url` is where it came from. */
export function parseItem(doc: unknown, url: string): StacItem {
  if (!isRecord(doc) || doc['type'] !== 'Feature' || !isRecord(doc['assets'])) {
    throw badRequest(`'${url}' is not a STAC item (a GeoJSON Feature with assets)`);
  }
  const rawBbox = doc['bbox'];
  if (!Array.isArray(rawBbox) || (rawBbox.length !== 4 && rawBbox.length !== 6) || !rawBbox.every((v) => typeof v === 'number')) {
    throw badRequest(`STAC item '${url}' has no valid bbox`);
  }
  const b = rawBbox as number[];
  const bbox: BBox = b.length === 6 ? [b[0]!, b[1]!, b[3]!, b[4]!] : [b[0]!, b[1]!, b[2]!, b[3]!];
  const links = Array.isArray(doc['links']) ? doc['links'] : [];
  const self = links.find((l) => isRecord(l) && l['rel'] === 'self' && typeof l['href'] === 'string') as { href: string } | undefined;
  const base = self ? resolveHref(self.href, url) : url;

  const assets: StacAsset[] = [];
  for (const [name, value] of Object.entries(doc['assets'])) {
    if (!isRecord(value) || typeof value['href'] !== 'string') continue;
    const type = typeof value['type'] === 'string' ? value['type'] : undefined;
    if (type !== undefined && !READABLE_MEDIA_TYPES.has(type)) continue;
    const { href, ...fields } = value;
    assets.push({ name, href: resolveHref(href as string, base), type, statistics: rasterStatistics(value), fields });
  }
  if (assets.length === 0) {
    throw badRequest("No valid asset found. Asset's media types not supported");
  }
  const projection = projectionOf(doc, assets);
  const properties = isRecord(doc['properties']) ? doc['properties'] : {};
  const renders = isRecord(properties['renders']) ? properties['renders'] : undefined;
  return {
    id: typeof doc['id'] === 'string' ? doc['id'] : '',
    url,
    bbox,
    assets,
    ...(projection ? { crs: projection.crs, ...(projection.grid ? { grid: projection.grid } : {}) } : {}),
    ...(renders ? { renders } : {}),
  };
}

/** pystac's `crs_string` of an object carrying projection fields: `proj:code` (or `EPSG:{proj:epsg}`), else `proj:wkt2`, else `proj:projjson`. */
function crsString(fields: Record<string, unknown>): string | undefined {
  const code = fields['proj:code'];
  if (typeof code === 'string' && code !== '') return code;
  const epsg = fields['proj:epsg'];
  if (typeof epsg === 'number' && Number.isInteger(epsg)) return `EPSG:${epsg}`;
  const wkt = fields['proj:wkt2'];
  if (typeof wkt === 'string' && wkt !== '') return wkt;
  const projjson = fields['proj:projjson'];
  return isRecord(projjson) ? JSON.stringify(projjson) : undefined;
}

/** Whether an object has a `proj:transform` and a `proj:shape` (non-empty, as pystac's `all([...])` asks). */
function hasGrid(fields: Record<string, unknown>): boolean {
  const full = (v: unknown): boolean => Array.isArray(v) && v.length > 0;
  return full(fields['proj:transform']) && full(fields['proj:shape']);
}

type Affine = [number, number, number, number, number, number];

/** `proj:shape` (rows, columns) and the affine `proj:transform` (a, b, c, d, e, f), where both are usable numbers. */
function gridFields(fields: Record<string, unknown>): { height: number; width: number; affine: Affine } | undefined {
  const shape = fields['proj:shape'];
  const transform = fields['proj:transform'];
  if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((v) => Number.isSafeInteger(v) && (v as number) > 0)) return undefined;
  if (!Array.isArray(transform) || transform.length < 6 || !transform.slice(0, 6).every((v) => typeof v === 'number' && Number.isFinite(v))) return undefined;
  return { height: shape[0] as number, width: shape[1] as number, affine: transform.slice(0, 6) as Affine };
}

/** rasterio's `array_bounds`: the (west, south, east, north) of a grid. */
function arrayBounds(height: number, width: number, [a, b, c, d, e, f]: Affine): BBox {
  if (b === 0 && d === 0) return [c, f + e * height, c + a * width, f];
  const xs = [c, b * height + c, a * width + b * height + c, a * width + c];
  const ys = [f, e * height + f, d * width + e * height + f, d * width + f];
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** GDAL's geotransform of rasterio's `from_bounds(west, south, east, north, width, height)`. */
function fromBounds([west, south, east, north]: BBox, width: number, height: number): StacGrid['geoTransform'] {
  return [west, (east - west) / width, 0, north, 0, (south - north) / height];
}

/**
 * rio-tiler 9's `_extract_proj_info`: the item's CRS and grid, or undefined (it then reads in WGS84).
 * The CRS its readable assets with a transform and shape share (with the item's), their grids'
 * union at the finest one's resolution; else the item's CRS, with its own transform and shape.
 * A CRS without a grid rio-tiler would fail on (a shape or transform that is not numbers) is kept
 * without one: tessera then answers as without the extension.
 */
function projectionOf(doc: Record<string, unknown>, assets: readonly StacAsset[]): { crs: string; grid?: StacGrid } | undefined {
  const extensions = Array.isArray(doc['stac_extensions']) ? doc['stac_extensions'] : [];
  if (!extensions.some((e) => typeof e === 'string' && e.startsWith('https://stac-extensions.github.io/projection/'))) return undefined;
  const properties = isRecord(doc['properties']) ? doc['properties'] : {};
  const itemCrs = crsString(properties);
  const gridded = assets.filter((a) => hasGrid(a.fields));
  if (gridded.length > 0) {
    const crss = new Set(gridded.map((a) => crsString(a.fields) ?? itemCrs));
    if (itemCrs) crss.add(itemCrs);
    // One CRS for every asset: the item's. Several would be too costly to read together, so rio-tiler looks no further at the assets.
    const crs = crss.size === 1 ? [...crss][0] : undefined;
    if (crss.size === 1 && crs === undefined) return undefined;
    if (crs !== undefined) {
      const grids = gridded.map((a) => gridFields(a.fields));
      if (grids.some((g) => g === undefined)) return { crs };
      const parts = grids as Array<NonNullable<(typeof grids)[number]>>;
      const boxes = parts.map((g) => arrayBounds(g.height, g.width, g.affine));
      const bounds: BBox = [
        Math.min(...boxes.map((b) => b[0])),
        Math.min(...boxes.map((b) => b[1])),
        Math.max(...boxes.map((b) => b[2])),
        Math.max(...boxes.map((b) => b[3])),
      ];
      // The finest asset (smallest pixel width, then height) sets the resolution of the item's grid.
      const finest = parts.reduce((best, g) =>
        Math.abs(g.affine[0]) < Math.abs(best.affine[0]) ||
        (Math.abs(g.affine[0]) === Math.abs(best.affine[0]) && Math.abs(g.affine[4]) < Math.abs(best.affine[4]))
          ? g
          : best,
      );
      const height = Math.abs(Math.floor((bounds[3] - bounds[1]) / finest.affine[4]));
      const width = Math.abs(Math.floor((bounds[2] - bounds[0]) / finest.affine[0]));
      if (!(width > 0 && height > 0 && Number.isSafeInteger(width) && Number.isSafeInteger(height))) return { crs };
      return { crs, grid: { bounds, width, height, geoTransform: fromBounds(bounds, width, height) } };
    }
  }
  if (!(hasGrid(properties) && itemCrs)) return undefined;
  const own = gridFields(properties);
  if (!own) return { crs: itemCrs };
  const [a, b, c, d, e, f] = own.affine;
  return {
    crs: itemCrs,
    grid: { bounds: arrayBounds(own.height, own.width, own.affine), width: own.width, height: own.height, geoTransform: [c, a, b, f, d, e] },
  };
}

/**
 * An item as a catalogue search returns it (titiler-pgstac's `SimpleSTACReader`: `id`, `collection`,
 * `bbox`, `assets`): every asset with an href, whatever its media type, its href as it is (the URL
 * policy still judges it where it is read). `url` names the item in messages.
 */
export function catalogueItem(doc: unknown, url: string): StacItem {
  if (!isRecord(doc) || !isRecord(doc['assets'])) throw badRequest(`the catalogue's item '${url}' has no assets`);
  const b = doc['bbox'];
  if (!Array.isArray(b) || (b.length !== 4 && b.length !== 6) || !b.every((v) => typeof v === 'number')) {
    throw badRequest(`the catalogue's item '${url}' has no valid bbox`);
  }
  const n = b as number[];
  const bbox: BBox = n.length === 6 ? [n[0]!, n[1]!, n[3]!, n[4]!] : [n[0]!, n[1]!, n[2]!, n[3]!];
  const assets: StacAsset[] = [];
  for (const [name, value] of Object.entries(doc['assets'])) {
    if (!isRecord(value) || typeof value['href'] !== 'string') continue;
    const { href, ...fields } = value;
    assets.push({
      name,
      href: href as string,
      type: typeof value['type'] === 'string' ? value['type'] : undefined,
      statistics: rasterStatistics(value),
      fields,
    });
  }
  if (assets.length === 0) throw badRequest("No valid asset found. Asset's media types not supported");
  return { id: typeof doc['id'] === 'string' ? doc['id'] : '', url, bbox, assets };
}

/** The assets named by the client, in the order given (TiTiler's InvalidAssetName → 404). */
export function selectAssets(item: StacItem, names: readonly string[] | undefined): StacAsset[] {
  if (!names || names.length === 0) return item.assets;
  const all = item.assets.map((a) => a.name);
  return names.map((name) => {
    const asset = item.assets.find((a) => a.name === name);
    if (!asset) throw new TesseraError('NotFound', `'${name}' is not valid, should be one of ${pyList(all)}`);
    return asset;
  });
}
