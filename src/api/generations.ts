/**
 * Where TiTiler 0.18.10 and TiTiler 2.x give the same URL different meanings (issue 37), declared in
 * one table: per collision, what each value of the setting TESSERA_TITILER_API (src/config/settings.ts)
 * makes tessera answer. A route that collides asks `choose(settings, id, answers)` with an answer for
 * each generation, so neither can be left out and the table is the only place that says which is
 * which. docs/titiler2.md carries the table as `withCollisionTable()` writes it between its markers
 * (`make docs`, tools/docs/collisions-table.ts; test/titiler2-routes.test.ts fails when the page differs).
 *
 * Requests only one generation sends (`tilesize=`, `/tiles/{tileMatrixSetId}`, `/conformance`,
 * `/{tileMatrixSetId}/map.html`, `@{scale}x`, `/{tileMatrixSetId}/WMTSCapabilities.xml` …) are not
 * collisions: they are answered whatever the setting says. `FORMS` names them, for /api
 * (api/openapi.ts marks the forms of the generation the deployment did not choose).
 *
 * What each generation does was read from TiTiler 0.18.10's and 2.4.0's installed sources
 * (titiler/core/factory.py, titiler/extensions/wmts.py, titiler/application/main.py).
 */
import type { Settings } from '../config.js';

/** The TiTiler 2.x release whose answers `TESSERA_TITILER_API=2` gives (what /healthz names). */
export const TITILER_2_RELEASE = '2.4.0';

/** A TiTiler generation, as the setting names it. */
export type Generation = '0.18' | '2';

/** The generation a deployment chose (the setting's parser admits only these). */
function generationOf(settings: Settings): Generation {
  const value = settings.titilerApi;
  if (value === '0.18' || value === '2') return value;
  throw new Error(`TESSERA_TITILER_API is ${value}, not 0.18 or 2`);
}

/** What a collision is, and what tessera answers under each value of the setting. */
interface Collision {
  /** The URL (or URLs) the two generations share. */
  readonly where: string;
  /** Those URLs as /api writes them (api/openapi.ts marks them with what the other value answers). */
  readonly paths: RegExp;
  readonly answers: Readonly<Record<Generation, string>>;
}

/** Every collision of the routes tessera answers in both dialects. */
export const COLLISIONS = {
  landing: {
    where: '`/`',
    paths: /^\/$/,
    answers: {
      '0.18': "tessera's landing page (HTML) whatever `Accept` says; `?f=json` (sent only by 2.x clients) answers the OGC landing document",
      '2': 'the OGC API landing document: JSON unless `Accept` prefers `text/html` (then the HTML landing page); `f=json` or `f=html` wins over `Accept`',
    },
  },
  prefixMap: {
    where: '`/{prefix}/map`',
    paths: /^\/(cog|stac|mosaicjson)\/map$/,
    answers: {
      '0.18':
        'the HTML map page, in the grid of the `tileMatrixSetId` query parameter (WebMercatorQuad by default): the grid-less form TiTiler 0.18 deprecated',
      '2': "OGC API – Maps: an image of the dataset (`bbox`, `bbox-crs`, `crs`, `width`, `height`, format from `f` or `Accept`); on `/mosaicjson` an image of `bbox` composed from the mosaic's assets, as TiTiler 2.4.0's MosaicTilerFactory with `add_ogc_maps` (without `bbox`: 400, where 2.4.0 answers 501)",
    },
  },
  wmts: {
    where: '`/{prefix}/WMTSCapabilities.xml`',
    paths: /^\/(cog|stac|mosaicjson)\/WMTSCapabilities\.xml$/,
    answers: {
      '0.18': 'one layer in the grid of the `tileMatrixSetId` query parameter, tiles `@{tile_scale}x` (the grid-less form TiTiler 0.18 deprecated)',
      '2': 'every grid as a layer (`{url}_{grid}_default`), zooms per grid from `zooms=grid::min,max`, tile URLs without a scale',
    },
  },
  tilejsonTiles: {
    where: '`/{prefix}/{tileMatrixSetId}/tilejson.json` without `tilesize`',
    paths: /^\/(cog|stac|mosaicjson)\/\{tileMatrixSetId\}\/tilejson\.json$/,
    answers: {
      '0.18': 'tile URLs `…/{z}/{x}/{y}@{tile_scale}x[.{tile_format}]`: 256 px tiles at scale 1',
      '2': 'tile URLs `…/{z}/{x}/{y}[.{tile_format}]?…&tilesize=512`, as TiTiler 2.x writes them: 512 px tiles',
    },
  },
  tilejsonBody: {
    where: '`/{prefix}/{tileMatrixSetId}/tilejson.json` (the document)',
    paths: /^\/(cog|stac|mosaicjson)\/\{tileMatrixSetId\}\/tilejson\.json$/,
    answers: {
      '0.18': "TileJSON 2.2.0; a mosaic's center is its document's",
      '2': "TileJSON 3.0.0 as 2.4.0 writes it: the center is the bounds' middle at minzoom (a mosaic's too), `raster_layers`, and on `/cog` the bands' descriptions (the name where a band has none) and `data_type`",
    },
  },
  defaultTileSize: {
    where: '`/{prefix}/tiles/{tileMatrixSetId}/{z}/{x}/{y}[.{format}]` without `tilesize` (or `@{scale}x`)',
    paths: /^\/(cog|stac|mosaicjson)\/tiles\/\{tileMatrixSetId\}\/\{z\}\/\{x\}\/\{y\}(\.\{format\})?$/,
    answers: {
      '0.18': '256 × 256 pixels in every grid',
      '2': "the tile size of the grid's matrix at that zoom (differs only in CDB1GlobalGrid, whose matrices have 1 to 1024 px tiles)",
    },
  },
  algorithms: {
    where: '`/algorithms`, `/algorithms/{algorithmId}`, and `algorithm=` where both generations have it (hillshade, contours, terrarium, terrainrgb)',
    paths: /^\/algorithms(\/\{algorithmId\})?$/,
    answers: {
      '0.18':
        "0.18.10's list (its five algorithms, as a JSON object by id) and entries; hillshade's azimuth and altitude default to 90/90; terrarium and terrainrgb take no `nodata_height`; output bands `b1…`. The 13 algorithms only 2.x has answer `algorithm=` all the same, and their `/algorithms/{id}`",
      '2': "2.4.0's list (`{algorithms: [{id, title, links}]}`, all 18) and entries (JSON, or HTML by `f` or `Accept`); hillshade 45/45 with `z_exaggeration`; `nodata_height`; named output bands (`hillshade`, `contours_r`, `terrain_r` …)",
    },
  },
  stacBandNames: {
    where:
      "the band names of a `/stac` read (or of a mosaic of STAC items) of plain `assets=` without an expression (a point's `band_names`, the keys of `/statistics`)",
    paths: /^\/stac\/(point\/\{lon\},\{lat\}|statistics)$|^\/mosaicjson\/point\/\{lon\},\{lat\}$/,
    answers: {
      '0.18': 'bands named `{asset}_b{i}` (`B01_b1` …), or after their assets with `asset_as_band`',
      '2': "bands named `b1 … bn`, numbered across the assets in their order, as rio-tiler 9 names them; an expression over `{asset}_b{i}` still reads them as 0.18's (requests with per-asset options, `:all:` or a positional expression are 2.x's under both settings)",
    },
  },
  stacProjection: {
    where: "a STAC item's bounds and zooms (`/stac` TileJSON, tilesets, WMTS documents, map pages)",
    // The route both generations have (the tilesets and map.html are 2.x's forms; the WMTS document collides already).
    paths: /^\/stac\/\{tileMatrixSetId\}\/tilejson\.json$/,
    answers: {
      '0.18': "rio-tiler 6's: the item's `bbox` and every zoom of the grid (the projection extension is not read)",
      '2': "rio-tiler 9's: where the projection extension gives the assets' grids (`proj:shape`, `proj:transform`, in `proj:code` or `proj:epsg`, one CRS for all) or the item's, the bounds of their union in longitude/latitude and the zooms a COG of that grid has; else the item's `bbox` and every zoom",
    },
  },
  colorMaps: {
    where: '`/colorMaps`, and the Accept header on `/colorMaps/{colorMapId}`',
    paths: /^\/colorMaps(\/\{colorMapId\})?$/,
    answers: {
      '0.18':
        "0.18.10's list (`{colorMaps: [names], links}`), JSON whatever `Accept` says; `f=` (html, json, or an image format on an entry: sent only by 2.x clients) is answered all the same",
      '2': "2.4.0's list (`{colormaps: [{id, links}]}`); list and entries answer HTML when `Accept` prefers it (`f` wins); `format=` on an entry still draws the legend",
    },
  },
  infoModel: {
    where: '`/cog/info`, `/stac/info`, `/mosaicjson/info` and their `.geojson`',
    paths: /^\/(cog|stac|mosaicjson)\/info(\.geojson)?$/,
    answers: {
      '0.18': 'rio-tiler 6\'s Info: bounds in longitude/latitude, `minzoom`/`maxzoom` in WebMercatorQuad, a band without a description described by `""`',
      '2': "rio-tiler 9's Info: bounds in the dataset's CRS with `crs` (its URI), no zooms, a band without a description described by its name (`b1`), `minmax` from the bands' GDAL statistics; a mosaic's as cogeo-mosaic 9's (`crs`, `mosaic_minzoom`, `mosaic_maxzoom`, `mosaic_tilematrixset`, `quadkeys` empty); the `.geojson` Feature with its `bbox`",
    },
  },
  stacAssets: {
    where: '`/stac/…` reads without `assets` (info, statistics, tiles, TileJSON, the map page, point, preview, bbox, feature)',
    paths: /^$/,
    answers: {
      '0.18':
        '`assets` or `expression` is required (400 `assets must be defined either via expression or assets options.`); info and statistics without them read every asset',
      '2': "`assets` is required (FastAPI's 422 `Field required`, checked first): an expression does not stand in for it, and info and statistics read no asset by default, as 2.4.0's AssetsParams; the WMTS document still answers 400 where no layer can be made",
    },
  },
  mosaicPoint: {
    where: '`/mosaicjson/point/{lon},{lat}`',
    paths: /^\/mosaicjson\/point\/\{lon\},\{lat\}$/,
    answers: {
      '0.18': "0.18.10's body: `{coordinates, values: [[asset, values, band_names], …]}`",
      '2': "2.4.0's body: `{coordinates, assets: [{name, values, band_names, band_descriptions}, …]}`",
    },
  },
  describedBands: {
    where: "`/cog` and `/stac` `/point/{lon},{lat}` and `/statistics` (GET and POST) bodies, `/stac/asset_statistics`, and a mosaic's POST `/statistics`",
    paths: /^\/(cog|stac)\/(point\/\{lon\},\{lat\}|statistics)$|^\/stac\/asset_statistics$|^\/mosaicjson\/statistics$/,
    answers: {
      '0.18':
        "0.18.10's models: a point's `values` as read (masked ones too) and `band_names`; each statistics band without a `description`, its `valid_percent` the share of the image's pixels that are valid",
      '2': "2.4.0's models: a point's masked `values` null and its `band_descriptions`; each statistics band's `description`, and `valid_percent` the share of the pixels a feature touches (its coverage); a band is described by its description in the file, else `b{i}` (`{asset}_…` on /stac), an expression's output by its block with each band replaced by its description, an algorithm's by its output band (`cast`, `ceil` and `floor` pass their input's on); after an expression or an algorithm the statistics are keyed `b1 … bn`",
    },
  },
  outputSize: {
    where: '`/{prefix}/preview`, `/bbox/…`, `/feature`, `/statistics` (GET and POST) asked with only one of `width` and `height`',
    paths: /^\/(cog|stac)\/(preview|statistics|feature|bbox\/)|^\/mosaicjson\/(feature|statistics|bbox\/)/,
    answers: {
      '0.18': "rio-tiler 6's sizing: the other side is the read's own (and `max_size`, where the route has one, still bounds the image)",
      '2': "rio-tiler 9's `output_size`: the other side keeps the read's aspect ratio, `max_size` ignored (as OGC API – Maps' `/map`, only 2.x's, always does)",
    },
  },
  imageEncoding: {
    where: 'images without a format (`/{prefix}/tiles/…/{y}` without extension, `/preview`, `/bbox/…` …) and `.npy`, GeoTIFF and JPEG 2000 images with a mask',
    paths: /^$/,
    answers: {
      '0.18':
        "0.18.10's `render_image`: without a format, JPEG or a uint8/uint16 PNG; the `.npy` mask band is 255 (valid) or 0, the array promoted to hold it (int8 → int16)",
      '2': "2.4.0's: without a format, JPEG or a PNG cast to uint8 (uint16 data too); the `.npy` mask band is in the data's dtype, its largest value where valid and its smallest where masked",
    },
  },
  healthz: {
    where: '`/healthz`',
    paths: /^\/healthz$/,
    answers: {
      '0.18': '`{"ping": "pong!"}`',
      '2': '`{"versions": {…}}` as 2.4.0 answers: `titiler` (the TiTiler release whose API tessera answers, 2.4.0), `tessera` and `gdal`; TiTiler\'s `rasterio`, `proj`, `geos`, `zarr` and `xarray` name libraries tessera does not have',
    },
  },
  api: {
    where: '`/api`, `/api.html`',
    paths: /^\/api(\.html)?$/,
    answers: {
      '0.18': 'the colliding routes as 0.18 has them; the forms only 2.x clients send are documented too, marked `x-titiler-generation: 2`',
      '2': 'the colliding routes as 2.x has them; the forms only 0.18 clients send are documented too, marked `x-titiler-generation: 0.18`',
    },
  },
} as const satisfies Record<string, Collision>;

export type CollisionId = keyof typeof COLLISIONS;

/** The answer the deployment's generation gives at collision `id`; the caller gives one per generation. */
export function choose<T>(settings: Settings, id: CollisionId, answers: Readonly<Record<Generation, T>>): T {
  if (!(id in COLLISIONS)) throw new Error(`undeclared collision ${id}`);
  return answers[generationOf(settings)];
}

/** Which generation's algorithms (the `algorithms` collision): their list, entries, defaults and band names. */
export function algorithmGeneration(settings: Settings): Generation {
  return choose(settings, 'algorithms', { '0.18': '0.18', '2': '2' });
}

/** URL forms only one generation's clients send (as /api writes them). */
const FORMS: ReadonlyArray<{ match: RegExp; generation: Generation; note: string }> = [
  {
    match: /\/tiles\/\{tileMatrixSetId\}\/\{z\}\/\{x\}\/\{y\}@\{scale\}x/,
    generation: '0.18',
    note: 'the tile URL with a scale, sent by TiTiler 0.18 clients',
  },
  {
    match: /^\/(cog|stac|mosaicjson)\/\{tileMatrixSetId\}\/map$/,
    generation: '0.18',
    note: 'the map page of TiTiler 0.18 (2.x: `/{tileMatrixSetId}/map.html`)',
  },
  {
    match: /^\/(cog|stac|mosaicjson)\/\{tileMatrixSetId\}\/WMTSCapabilities\.xml$/,
    generation: '0.18',
    note: 'WMTS of one grid, as TiTiler 0.18 has it (2.x: `/WMTSCapabilities.xml` lists every grid)',
  },
  { match: /^\/(cog|stac|mosaicjson)\/tiles\/\{z\}\//, generation: '0.18', note: 'the grid-less tile URL TiTiler 0.18 deprecated' },
  { match: /^\/(cog|stac|mosaicjson)\/tilejson\.json$/, generation: '0.18', note: 'the grid-less TileJSON TiTiler 0.18 deprecated' },
  { match: /^\/(cog|stac|mosaicjson)\/tiles$/, generation: '2', note: 'OGC API – Tiles tileset list, TiTiler 2.x' },
  { match: /^\/(cog|stac|mosaicjson)\/tiles\/\{tileMatrixSetId\}$/, generation: '2', note: 'OGC API – Tiles tileset, TiTiler 2.x' },
  { match: /^\/(cog|stac|mosaicjson)\/\{tileMatrixSetId\}\/map\.html$/, generation: '2', note: 'the map page of TiTiler 2.x' },
  { match: /^\/conformance$/, generation: '2', note: 'OGC API conformance classes, TiTiler 2.x' },
  { match: /^\/stac\/renders(\/|$)/, generation: '2', note: "a STAC item's renders (the render extension), TiTiler 2.x" },
];

/** What /api says of a documented path: which generation's form it is here, and why; undefined for the forms both send. */
export function formOf(path: string, settings: Settings): { generation: Generation; note: string } | undefined {
  const chosen = generationOf(settings);
  const other: Generation = chosen === '2' ? '0.18' : '2';
  // A URL may collide more than once (a TileJSON's tile URLs and its body): every answer is said.
  const collisions = Object.values(COLLISIONS).filter((c) => c.paths.test(path));
  if (collisions.length > 0) {
    const others = collisions.map((c) => c.answers[other]).join('; ');
    return { generation: chosen, note: `TiTiler ${chosen}'s meaning of this URL (TESSERA_TITILER_API=${chosen}); with ${other}: ${others}.` };
  }
  const form = FORMS.find((f) => f.match.test(path));
  return form ? { generation: form.generation, note: `Only TiTiler ${form.generation} clients send this form: ${form.note}.` } : undefined;
}

/** The collisions as a markdown table (docs/titiler2.md). */
function collisionTable(): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = Object.values(COLLISIONS).map((c) => `| ${cell(c.where)} | ${cell(c.answers['0.18'])} | ${cell(c.answers['2'])} |`);
  return ['| where | `TESSERA_TITILER_API=0.18` (default) | `TESSERA_TITILER_API=2` |', '| --- | --- | --- |', ...rows].join('\n');
}

const BEGIN = '<!-- collisions: begin. Generated from src/api/generations.ts by `make docs`; edit there, not here. -->';
const END = '<!-- collisions: end -->';

/** `page` with the collision table written again between its markers (thrown when they are missing). */
export function withCollisionTable(page: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error('the page has no collisions markers');
  return `${page.slice(0, start + BEGIN.length)}\n${collisionTable()}\n${page.slice(end)}`;
}
