/**
 * MosaicJSON documents and asset lookups against cogeo-mosaic 7.2 / morecantile 5.4: every expected
 * value below was produced by cogeo-mosaic's own model and MemoryBackend in the parity venv while
 * writing this test (documents dumped as TiTiler writes them, `assets_for_tile/point/bbox`, `info`),
 * except the low-zoom guard case, derived by hand (cogeo-mosaic would enumerate 4^18 quadkeys).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseMosaicDocument, mosaicDocumentJson } from '../src/mosaic/document.js';
import { Mosaic } from '../src/mosaic/mosaic.js';
import { quadkey, quadkeyToTile } from '../src/mosaic/quadkey.js';
import { pyDumps } from '../src/pyjson.js';
import { getTms } from '../src/tms/registry.js';
import { TesseraError } from '../src/errors.js';

const WEB_MERCATOR = getTms('WebMercatorQuad')!;
const WGS1984 = getTms('WGS1984Quad')!;

function open(doc: unknown): Mosaic {
  return new Mosaic(parseMosaicDocument(doc), { url: 'memory', tilesInDocument: true });
}

/** A 0.0.3 document over 32 cells at quadkey zoom 9 (with holes), nine assets repeated in varying orders. */
const LOOKUP_DOC = {"mosaicjson": "0.0.3", "name": "lookups", "minzoom": 7, "maxzoom": 12, "quadkey_zoom": 9, "bounds": [-74.5, 40.9, -69.0, 45.1], "tiles": {"030230312": ["a7.tif", "a8.tif"], "030230330": ["a8.tif"], "030230332": ["a0.tif", "a1.tif", "a2.tif", "a3.tif"], "030232110": ["a1.tif", "a2.tif", "a3.tif"], "030232112": ["a2.tif", "a3.tif"], "030230311": ["a7.tif", "a8.tif", "a0.tif", "a1.tif"], "030230313": ["a8.tif", "a0.tif", "a1.tif"], "030230331": ["a0.tif", "a1.tif"], "030230333": ["a1.tif"], "030232113": ["a3.tif", "a4.tif", "a5.tif"], "030231200": ["a8.tif"], "030231220": ["a1.tif", "a2.tif", "a3.tif"], "030231222": ["a2.tif", "a3.tif"], "030233000": ["a3.tif"], "030233002": ["a4.tif", "a5.tif", "a6.tif", "a7.tif"], "030231201": ["a0.tif", "a1.tif"], "030231203": ["a1.tif"], "030231221": ["a2.tif", "a3.tif", "a4.tif", "a5.tif"], "030231223": ["a3.tif", "a4.tif", "a5.tif"], "030233001": ["a4.tif", "a5.tif"], "030231210": ["a1.tif", "a2.tif", "a3.tif"], "030231212": ["a2.tif", "a3.tif"], "030231232": ["a4.tif", "a5.tif", "a6.tif", "a7.tif"], "030233010": ["a5.tif", "a6.tif", "a7.tif"], "030233012": ["a6.tif", "a7.tif"], "030231211": ["a2.tif", "a3.tif", "a4.tif", "a5.tif"], "030231213": ["a3.tif", "a4.tif", "a5.tif"], "030231231": ["a4.tif", "a5.tif"], "030231233": ["a5.tif"], "030233011": ["a6.tif", "a7.tif", "a8.tif", "a0.tif"], "030233013": ["a7.tif", "a8.tif", "a0.tif"]}, "asset_prefix": "https://data.example.com/cogs/"};

const TILE_ASSETS: Record<string, string[]> = {"150,180,9": [], "151,181,9": ["https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif"], "155,185,9": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif"], "75,90,8": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif"], "76,91,8": ["https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif"], "37,45,7": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif"], "38,45,7": ["https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif", "https://data.example.com/cogs/a7.tif"], "18,22,6": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif"], "9,11,5": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif"], "0,0,0": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif"], "300,361,10": [], "605,725,11": ["https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif"], "1,1,1": [], "2400,2900,13": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif"]};
const POINT_ASSETS: Record<string, string[]> = {"-74.0,46.8": [], "-72.5,45.5": ["https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif"], "-70.5,44.3": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif"], "-60.0,10.0": [], "-73.3,45.0": [], "-73.828125,46.0": ["https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif"]};
const BBOX_ASSETS: Record<string, string[]> = {"-74.0,45.0,-72.0,46.5": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif"], "-80,30,-60,50": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif"], "-71,44.2,-70.5,44.5": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif"], "10,10,11,11": [], "-180,-85,180,85": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif"], "-72,46,-73,45": []};
const WGS_TILE_ASSETS: Record<string, string[]> = {"148,61,8": [], "74,30,7": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif"], "37,15,6": ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif"], "1200,490,11": []};
const BBOX_3857 = ["https://data.example.com/cogs/a7.tif", "https://data.example.com/cogs/a8.tif", "https://data.example.com/cogs/a0.tif", "https://data.example.com/cogs/a1.tif", "https://data.example.com/cogs/a2.tif", "https://data.example.com/cogs/a3.tif", "https://data.example.com/cogs/a4.tif", "https://data.example.com/cogs/a5.tif", "https://data.example.com/cogs/a6.tif"];
const POINT_3857: string[] = [];
const LOOKUP_INFO = {"bounds": [-74.5, 40.9, -69.0, 45.1], "center": [-71.75, 43.0, 7], "minzoom": 7, "maxzoom": 12, "name": "lookups", "quadkeys": [], "tilematrixset": "<TileMatrixSet title='Google Maps Compatible for the World' id='WebMercatorQuad' crs='http://www.opengis.net/def/crs/EPSG/0/3857>"};

/** Every field of the model, a WebMercatorQuad `tilematrixset`, integral bounds, no center. */
const FULL_DOC = {"mosaicjson": "0.0.3", "name": "full", "description": "every field", "version": "2.0.1", "attribution": "me", "minzoom": 2, "maxzoom": 4, "quadkey_zoom": 3, "bounds": [-10, -5, 10, 5], "tiles": {"033": ["x.tif"], "122": ["y.tif", "x.tif"]}, "tilematrixset": {"title": "Google Maps Compatible for the World", "id": "WebMercatorQuad", "uri": "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad", "orderedAxes": ["X", "Y"], "crs": "http://www.opengis.net/def/crs/EPSG/0/3857", "wellKnownScaleSet": "http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible", "tileMatrices": [{"id": "0", "scaleDenominator": 559082264.028717, "cellSize": 156543.033928041, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 1, "matrixHeight": 1}, {"id": "1", "scaleDenominator": 279541132.014358, "cellSize": 78271.5169640204, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 2, "matrixHeight": 2}, {"id": "2", "scaleDenominator": 139770566.007179, "cellSize": 39135.7584820102, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 4, "matrixHeight": 4}, {"id": "3", "scaleDenominator": 69885283.0035897, "cellSize": 19567.8792410051, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 8, "matrixHeight": 8}, {"id": "4", "scaleDenominator": 34942641.5017948, "cellSize": 9783.93962050256, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 16, "matrixHeight": 16}, {"id": "5", "scaleDenominator": 17471320.7508974, "cellSize": 4891.96981025128, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 32, "matrixHeight": 32}, {"id": "6", "scaleDenominator": 8735660.37544871, "cellSize": 2445.98490512564, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 64, "matrixHeight": 64}, {"id": "7", "scaleDenominator": 4367830.18772435, "cellSize": 1222.99245256282, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 128, "matrixHeight": 128}, {"id": "8", "scaleDenominator": 2183915.09386217, "cellSize": 611.49622628141, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 256, "matrixHeight": 256}, {"id": "9", "scaleDenominator": 1091957.54693108, "cellSize": 305.748113140704, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 512, "matrixHeight": 512}, {"id": "10", "scaleDenominator": 545978.773465544, "cellSize": 152.874056570352, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 1024, "matrixHeight": 1024}, {"id": "11", "scaleDenominator": 272989.386732772, "cellSize": 76.4370282851762, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 2048, "matrixHeight": 2048}, {"id": "12", "scaleDenominator": 136494.693366386, "cellSize": 38.2185141425881, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 4096, "matrixHeight": 4096}, {"id": "13", "scaleDenominator": 68247.346683193, "cellSize": 19.109257071294, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 8192, "matrixHeight": 8192}, {"id": "14", "scaleDenominator": 34123.6733415964, "cellSize": 9.55462853564703, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 16384, "matrixHeight": 16384}, {"id": "15", "scaleDenominator": 17061.8366707982, "cellSize": 4.77731426782351, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 32768, "matrixHeight": 32768}, {"id": "16", "scaleDenominator": 8530.91833539913, "cellSize": 2.38865713391175, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 65536, "matrixHeight": 65536}, {"id": "17", "scaleDenominator": 4265.45916769956, "cellSize": 1.19432856695587, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 131072, "matrixHeight": 131072}, {"id": "18", "scaleDenominator": 2132.72958384978, "cellSize": 0.597164283477939, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 262144, "matrixHeight": 262144}, {"id": "19", "scaleDenominator": 1066.36479192489, "cellSize": 0.29858214173897, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 524288, "matrixHeight": 524288}, {"id": "20", "scaleDenominator": 533.182395962445, "cellSize": 0.149291070869485, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 1048576, "matrixHeight": 1048576}, {"id": "21", "scaleDenominator": 266.591197981222, "cellSize": 0.0746455354347424, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 2097152, "matrixHeight": 2097152}, {"id": "22", "scaleDenominator": 133.295598990611, "cellSize": 0.0373227677173712, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 4194304, "matrixHeight": 4194304}, {"id": "23", "scaleDenominator": 66.6477994953056, "cellSize": 0.0186613838586856, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 8388608, "matrixHeight": 8388608}, {"id": "24", "scaleDenominator": 33.3238997476528, "cellSize": 0.0093306919293428, "cornerOfOrigin": "topLeft", "pointOfOrigin": [-20037508.342789244, 20037508.342789244], "tileWidth": 256, "tileHeight": 256, "matrixWidth": 16777216, "matrixHeight": 16777216}]}, "asset_type": "COG", "asset_prefix": "s/", "data_type": "uint16", "colormap": {"1": [255, 0, 0, 255], "02": [0, 255, 0, 255]}, "layers": {"rgb": {"bidx": [1, 2, 3], "rescale": ["0,1000"]}}};
const FULL_DUMP = "{\"mosaicjson\":\"0.0.3\",\"name\":\"full\",\"description\":\"every field\",\"version\":\"2.0.1\",\"attribution\":\"me\",\"minzoom\":2,\"maxzoom\":4,\"quadkey_zoom\":3,\"bounds\":[-10.0,-5.0,10.0,5.0],\"center\":[0.0,0.0,2],\"tiles\":{\"033\":[\"x.tif\"],\"122\":[\"y.tif\",\"x.tif\"]},\"tilematrixset\":{\"title\":\"Google Maps Compatible for the World\",\"id\":\"WebMercatorQuad\",\"uri\":\"http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad\",\"orderedAxes\":[\"X\",\"Y\"],\"crs\":\"http://www.opengis.net/def/crs/EPSG/0/3857\",\"wellKnownScaleSet\":\"http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible\",\"tileMatrices\":[{\"id\":\"0\",\"scaleDenominator\":559082264.028717,\"cellSize\":156543.033928041,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":1,\"matrixHeight\":1},{\"id\":\"1\",\"scaleDenominator\":279541132.014358,\"cellSize\":78271.5169640204,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":2,\"matrixHeight\":2},{\"id\":\"2\",\"scaleDenominator\":139770566.007179,\"cellSize\":39135.7584820102,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":4,\"matrixHeight\":4},{\"id\":\"3\",\"scaleDenominator\":69885283.0035897,\"cellSize\":19567.8792410051,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":8,\"matrixHeight\":8},{\"id\":\"4\",\"scaleDenominator\":34942641.5017948,\"cellSize\":9783.93962050256,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":16,\"matrixHeight\":16},{\"id\":\"5\",\"scaleDenominator\":17471320.7508974,\"cellSize\":4891.96981025128,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":32,\"matrixHeight\":32},{\"id\":\"6\",\"scaleDenominator\":8735660.37544871,\"cellSize\":2445.98490512564,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":64,\"matrixHeight\":64},{\"id\":\"7\",\"scaleDenominator\":4367830.18772435,\"cellSize\":1222.99245256282,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":128,\"matrixHeight\":128},{\"id\":\"8\",\"scaleDenominator\":2183915.09386217,\"cellSize\":611.49622628141,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":256,\"matrixHeight\":256},{\"id\":\"9\",\"scaleDenominator\":1091957.54693108,\"cellSize\":305.748113140704,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":512,\"matrixHeight\":512},{\"id\":\"10\",\"scaleDenominator\":545978.773465544,\"cellSize\":152.874056570352,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":1024,\"matrixHeight\":1024},{\"id\":\"11\",\"scaleDenominator\":272989.386732772,\"cellSize\":76.4370282851762,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":2048,\"matrixHeight\":2048},{\"id\":\"12\",\"scaleDenominator\":136494.693366386,\"cellSize\":38.2185141425881,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":4096,\"matrixHeight\":4096},{\"id\":\"13\",\"scaleDenominator\":68247.346683193,\"cellSize\":19.109257071294,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":8192,\"matrixHeight\":8192},{\"id\":\"14\",\"scaleDenominator\":34123.6733415964,\"cellSize\":9.55462853564703,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":16384,\"matrixHeight\":16384},{\"id\":\"15\",\"scaleDenominator\":17061.8366707982,\"cellSize\":4.77731426782351,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":32768,\"matrixHeight\":32768},{\"id\":\"16\",\"scaleDenominator\":8530.91833539913,\"cellSize\":2.38865713391175,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":65536,\"matrixHeight\":65536},{\"id\":\"17\",\"scaleDenominator\":4265.45916769956,\"cellSize\":1.19432856695587,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":131072,\"matrixHeight\":131072},{\"id\":\"18\",\"scaleDenominator\":2132.72958384978,\"cellSize\":0.597164283477939,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":262144,\"matrixHeight\":262144},{\"id\":\"19\",\"scaleDenominator\":1066.36479192489,\"cellSize\":0.29858214173897,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":524288,\"matrixHeight\":524288},{\"id\":\"20\",\"scaleDenominator\":533.182395962445,\"cellSize\":0.149291070869485,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":1048576,\"matrixHeight\":1048576},{\"id\":\"21\",\"scaleDenominator\":266.591197981222,\"cellSize\":0.0746455354347424,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":2097152,\"matrixHeight\":2097152},{\"id\":\"22\",\"scaleDenominator\":133.295598990611,\"cellSize\":0.0373227677173712,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":4194304,\"matrixHeight\":4194304},{\"id\":\"23\",\"scaleDenominator\":66.6477994953056,\"cellSize\":0.0186613838586856,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":8388608,\"matrixHeight\":8388608},{\"id\":\"24\",\"scaleDenominator\":33.3238997476528,\"cellSize\":0.0093306919293428,\"cornerOfOrigin\":\"topLeft\",\"pointOfOrigin\":[-20037508.342789244,20037508.342789244],\"tileWidth\":256,\"tileHeight\":256,\"matrixWidth\":16777216,\"matrixHeight\":16777216}]},\"asset_type\":\"COG\",\"asset_prefix\":\"s/\",\"data_type\":\"uint16\",\"colormap\":{\"1\":[255,0,0,255],\"2\":[0,255,0,255]},\"layers\":{\"rgb\":{\"bidx\":[1,2,3],\"rescale\":[\"0,1000\"]}}}";
const FULL_INFO = "{\"bounds\":[-10.0,-5.0,10.0,5.0],\"center\":[0.0,0.0,2],\"minzoom\":2,\"maxzoom\":4,\"name\":\"full\",\"quadkeys\":[],\"tilematrixset\":\"<TileMatrixSet title='Google Maps Compatible for the World' id='WebMercatorQuad' crs='http://www.opengis.net/def/crs/EPSG/0/3857>\"}";
const FULL_TILES: Record<string, string[]> = {"0,0,0": ["s/x.tif", "s/y.tif"], "1,1,1": [], "3,3,3": ["s/x.tif"], "6,4,3": [], "12,9,4": []};

const FIXTURE_DOC = {"mosaicjson": "0.0.2", "quadkey_zoom": 7, "minzoom": 7, "maxzoom": 9, "bounds": [-75.98703377403767, 44.93504283303786, -71.337604724099, 47.096855991923235], "center": [-74.53125, 45.99569351896393, 7], "tiles": {"0302300": ["cog1.tif"], "0302301": ["cog1.tif", "cog2.tif"], "0302310": ["cog1.tif", "cog2.tif"], "0302302": ["cog1.tif"], "0302303": ["cog1.tif", "cog2.tif"], "0302312": ["cog1.tif", "cog2.tif"], "0302320": ["cog1.tif"], "0302321": ["cog1.tif", "cog2.tif"], "0302330": ["cog1.tif", "cog2.tif"]}};
const FIXTURE_DUMP = "{\"mosaicjson\":\"0.0.2\",\"version\":\"1.0.0\",\"minzoom\":7,\"maxzoom\":9,\"quadkey_zoom\":7,\"bounds\":[-75.98703377403767,44.93504283303786,-71.337604724099,47.096855991923235],\"center\":[-74.53125,45.99569351896393,7],\"tiles\":{\"0302300\":[\"cog1.tif\"],\"0302301\":[\"cog1.tif\",\"cog2.tif\"],\"0302310\":[\"cog1.tif\",\"cog2.tif\"],\"0302302\":[\"cog1.tif\"],\"0302303\":[\"cog1.tif\",\"cog2.tif\"],\"0302312\":[\"cog1.tif\",\"cog2.tif\"],\"0302320\":[\"cog1.tif\"],\"0302321\":[\"cog1.tif\",\"cog2.tif\"],\"0302330\":[\"cog1.tif\",\"cog2.tif\"]}}";

const key = (...n: number[]): string => n.join(',');

describe('MosaicJSON documents', () => {
  it('dumps the 0.0.2 fixture as TiTiler does (defaults filled in, floats kept)', () => {
    assert.equal(pyDumps(mosaicDocumentJson(parseMosaicDocument(FIXTURE_DOC))), FIXTURE_DUMP);
  });

  it('dumps every 0.0.3 field as the model writes it (tilematrixset, colormap keys as ints, computed center)', () => {
    const text = pyDumps(mosaicDocumentJson(parseMosaicDocument(FULL_DOC)));
    // Known difference: JSON.parse puts integer-like keys ("122") before others ("033"), so
    // `tiles` keeps its entries but not their order; everything else is byte for byte.
    assert.deepEqual(JSON.parse(text), JSON.parse(FULL_DUMP));
    const withoutTiles = (t: string): string => t.replace(/"tiles":\{[^}]*\}/, '');
    assert.equal(withoutTiles(text), withoutTiles(FULL_DUMP));
  });

  it('writes tiles: {} for backends whose model carries no tiles (SQLite)', () => {
    const out = mosaicDocumentJson(parseMosaicDocument(FIXTURE_DOC), false);
    assert.deepEqual(out['tiles'], {});
  });

  it('recognises the registered grid in a tilematrixset and answers info like cogeo-mosaic', () => {
    const m = open(FULL_DOC);
    assert.equal(m.grid, WEB_MERCATOR);
    assert.equal(JSON.stringify(m.info()), JSON.stringify(JSON.parse(FULL_INFO)));
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not an object', [1, 2], /expected a JSON object/],
    ['no mosaicjson', { tiles: {} }, /'mosaicjson' is required/],
    ['no tiles', { mosaicjson: '0.0.2' }, /'tiles' is required/],
    ['a quadkey with a 4', { mosaicjson: '0.0.2', minzoom: 3, tiles: { '014': ['a'] } }, /invalid quadkey '014'/],
    ['a quadkey of the wrong zoom', { mosaicjson: '0.0.2', minzoom: 3, tiles: { '01': ['a'] } }, /quadkey '01' of 2 digits/],
    ['assets that are not strings', { mosaicjson: '0.0.2', minzoom: 1, tiles: { '0': [1] } }, /must be an array of strings/],
    ['minzoom out of range', { mosaicjson: '0.0.2', minzoom: 31, tiles: {} }, /'minzoom' must be between 0 and 30/],
    ['bounds of three numbers', { mosaicjson: '0.0.2', bounds: [1, 2, 3], tiles: {} }, /'bounds' must be an array of 4 numbers/],
    ['a fractional center zoom', { mosaicjson: '0.0.2', center: [1, 2, 7.5], tiles: {} }, /'center'/],
    ['a name that is a number', { mosaicjson: '0.0.2', name: 5, tiles: {} }, /'name' must be a string/],
    [
      'a grid that is not a quadtree',
      {
        mosaicjson: '0.0.3',
        tiles: {},
        tilematrixset: {
          id: 'TwoByOne',
          crs: 'http://www.opengis.net/def/crs/EPSG/0/4326',
          tileMatrices: [
            { id: '0', scaleDenominator: 1, cellSize: 0.703125, pointOfOrigin: [90, -180], tileWidth: 256, tileHeight: 256, matrixWidth: 2, matrixHeight: 1 },
            { id: '1', scaleDenominator: 0.5, cellSize: 0.3515625, pointOfOrigin: [90, -180], tileWidth: 256, tileHeight: 256, matrixWidth: 4, matrixHeight: 2 },
          ],
        },
      },
      /does not support quadtree/,
    ],
  ];
  for (const [what, doc, message] of bad) {
    it(`refuses a document with ${what} (400 naming the field)`, () => {
      assert.throws(
        () => parseMosaicDocument(doc),
        (err: unknown) => err instanceof TesseraError && err.kind === 'BadRequest' && message.test(err.message),
      );
    });
  }
});

describe('quadkeys (morecantile 5.4 values)', () => {
  const cases: Array<[number, number, number, string]> = [
    [36, 45, 7, '0302302'],
    [0, 0, 1, '0'],
    [1, 0, 1, '1'],
    [0, 1, 1, '2'],
    [3, 5, 3, '213'],
    [1073741823, 536883257, 30, '311111111111111133111111333113'],
    [0, 0, 0, ''],
  ];
  for (const [x, y, z, qk] of cases) {
    it(`Tile(${x}, ${y}, ${z}) ↔ '${qk}'`, () => {
      assert.equal(quadkey(x, y, z), qk);
      assert.deepEqual(quadkeyToTile(qk), { x, y, z });
    });
  }
});

describe('asset lookups (cogeo-mosaic 7.2 values)', () => {
  const m = open(LOOKUP_DOC);

  for (const [k, want] of Object.entries(TILE_ASSETS)) {
    const [x, y, z] = k.split(',').map(Number) as [number, number, number];
    it(`tile ${z}/${x}/${y} (quadkey zoom 9) → ${want.length} assets in cogeo-mosaic's order`, () => {
      assert.deepEqual(m.assetsForTile(WEB_MERCATOR, x, y, z), want);
    });
  }
  for (const [k, want] of Object.entries(POINT_ASSETS)) {
    const [lon, lat] = k.split(',').map(Number) as [number, number];
    it(`point ${lon},${lat} → ${want.length} assets`, () => assert.deepEqual(m.assetsForPoint(lon, lat), want));
  }
  for (const [k, want] of Object.entries(BBOX_ASSETS)) {
    const bbox = k.split(',').map(Number) as [number, number, number, number];
    it(`bbox ${k} → ${want.length} assets (x-major, first occurrence kept)`, () => assert.deepEqual(m.assetsForBbox(bbox), want));
  }
  it('a bbox and a point given in EPSG:3857 are reprojected first', () => {
    assert.deepEqual(m.assetsForBbox([-8200000, 5600000, -7900000, 5900000], 'EPSG:3857'), BBOX_3857);
    assert.deepEqual(m.assetsForPoint(-8100000, 5800000, 'EPSG:3857'), POINT_3857);
  });
  for (const [k, want] of Object.entries(WGS_TILE_ASSETS)) {
    const [x, y, z] = k.split(',').map(Number) as [number, number, number];
    it(`WGS1984Quad tile ${z}/${x}/${y} is looked up by its geographic bounds → ${want.length} assets`, () => {
      assert.deepEqual(m.assetsForTile(WGS1984, x, y, z), want);
    });
  }
  it('zoom range: the mosaic’s in its own grid, the grid’s in another', () => {
    assert.deepEqual(m.zooms(WEB_MERCATOR), { minzoom: 7, maxzoom: 12 });
    assert.deepEqual(m.zooms(WGS1984), { minzoom: 0, maxzoom: 23 });
  });
  it('info: center from the bounds, name, WebMercatorQuad repr', () => {
    assert.equal(JSON.stringify(m.info()), JSON.stringify(LOOKUP_INFO));
  });
  it('asset_prefix-less documents and documents with one: prefix prepended on lookup only', () => {
    const full = open(FULL_DOC);
    for (const [k, want] of Object.entries(FULL_TILES)) {
      const [x, y, z] = k.split(',').map(Number) as [number, number, number];
      assert.deepEqual(full.assetsForTile(WEB_MERCATOR, x, y, z), want, key(x, y, z));
    }
  });
  it('refuses a tile the grid does not have', () => {
    assert.throws(() => m.assetsForTile(WEB_MERCATOR, 128, 0, 7), (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest');
    assert.throws(() => m.assetsForTile(WEB_MERCATOR, 0, 0, 31), (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest');
  });

  it('answers a z0 tile of a quadkey-zoom-18 mosaic from its index, in quadkey order, without enumerating 4^18 cells', () => {
    // Hand-derived: descendants come in lexicographic quadkey order, duplicates dropped.
    const keys = ['333333333333333333', '000000000000000001', '120000000000000000', '000000000000000000'];
    const doc = { mosaicjson: '0.0.2', minzoom: 18, maxzoom: 20, tiles: Object.fromEntries(keys.map((k, i) => [k, [`a${i}`, 'shared']])) };
    const deep = open(doc);
    const t0 = performance.now();
    const got = deep.assetsForTile(WEB_MERCATOR, 0, 0, 0);
    const ms = performance.now() - t0;
    assert.deepEqual(got, ['a3', 'shared', 'a1', 'a2', 'a0']);
    assert.ok(ms < 50, `took ${ms.toFixed(1)} ms`);
    // A z1 tile holds the keys starting with its own digit only.
    assert.deepEqual(deep.assetsForTile(WEB_MERCATOR, 1, 1, 1), ['a0', 'shared']);
    // The world as a bbox at zoom 18 is 4^18 cells: answered by filtering the four keys, x-major
    // (a3 and a1 share x = 0, y = 0 and 1; then a2; a0 is the last column).
    const t1 = performance.now();
    assert.deepEqual(deep.assetsForBbox([-180, -89, 180, 89]), ['a3', 'shared', 'a1', 'a2', 'a0']);
    // Between ±85° the first and last rows are left out: only a2 is inside.
    assert.deepEqual(deep.assetsForBbox([-180, -85, 180, 85]), ['a2', 'shared']);
    assert.ok(performance.now() - t1 < 50);
  });
});
