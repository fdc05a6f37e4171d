/**
 * The parameter families (one declaration each: schema, description, parser; see family.ts), and the
 * normalisation of pydantic's boolean spellings that runs before any of them is validated.
 */
import { booleanParams, type Query } from './family.js';

export {
  routeQuery,
  combine,
  parameterDocs,
  PARSER_DEFAULT,
  type ParamFamily,
  type Parsed,
  type PathRoute,
  type Query,
  type QueryRoute,
  type RouteQuery,
} from './family.js';
export { datasetUrl, datasetValues, gridQuery, tmsPathSchema, coordCrs, dstCrs } from './dataset.js';
export {
  bandLayer,
  stacLayer,
  optionalStacLayer,
  mosaicLayer,
  pixelSelection,
  assetNames,
  assetStatisticsLayer,
  requireAssets,
  requireLayerFirst,
  type AssetStatisticsLayer,
} from './layers.js';
export { postProcess, postProcessFor, renderingFor, statistics, parseAlgorithm, type Rendering } from './rendering.js';
export {
  tileMargins,
  previewSize,
  partSize,
  formatQuery,
  tileFormatQuery,
  tileDocument,
  wmtsDocument,
  tileSize,
  wmtsEpsg,
  type SizeOptions,
} from './images.js';
export { validateStrict, stacItem } from './extensions.js';
export { documentFormat, tilesetCrs, gridZooms, mapArea, MAP_DEFAULT_MAX_SIZE, type MapOptions } from './ogc.js';

const TRUE = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['0', 'false', 'f', 'no', 'n', 'off']);
let booleans: Set<string> | undefined;

/** Rewrites pydantic boolean spellings ("yes", "On", "0" …) of every boolean parameter to what the schema validator accepts. */
export function normaliseBooleans(query: Query): void {
  booleans ??= booleanParams();
  for (const key of booleans) {
    const v = query[key];
    if (typeof v !== 'string') continue;
    const lower = v.trim().toLowerCase();
    if (TRUE.has(lower)) query[key] = 'true';
    else if (FALSE.has(lower)) query[key] = 'false';
  }
}
