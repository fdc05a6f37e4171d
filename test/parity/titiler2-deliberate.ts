/**
 * The deliberate differences between tessera (TESSERA_TITILER_API=2) and TiTiler 2.4.0 that the 2.x
 * core suite (titiler2-core.test.ts) accepts, each with the check that accepts exactly it: the
 * grid tessera serves beside TiTiler's (NZTM2000, docs/differences.md), tessera's TMS 1.0 documents
 * and WMTS scale denominators, and what the landing page and conformance say of tessera itself.
 * A case names one; nothing else is accepted.
 */
import { compareJson, compareXml, formatDifferences, parseJson, parseXml, toPlain, type PlainJson, type XmlElement } from './compare.js';
import type { Reply } from './harness.js';
import { deliberate } from './deliberate.js';

/** The same request answered by both servers. */
interface Exchange {
  titiler: Reply;
  tessera: Reply;
  normalise(s: string): string;
}

export interface Deliberate2 {
  id: string;
  what: string;
  /** What is still wrong once this difference is allowed for (empty: accepted). */
  accept(x: Exchange): string[];
}

/** Grids tessera serves that TiTiler does not (docs/differences.md). */
const EXTRA_GRIDS = ['NZTM2000'];

type Obj = { [key: string]: PlainJson };
const isObj = (v: PlainJson | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `text` with the lines of `diffs`, or nothing when there are none. */
function listed(diffs: ReturnType<typeof compareJson>): string[] {
  return diffs.length > 0 ? [formatDifferences(diffs)] : [];
}

/** tessera's tileset list without the entries of its extra grids, as JSON text. */
function withoutExtraTilesets(body: string): string {
  const doc = toPlain(parseJson(body));
  if (!isObj(doc) || !Array.isArray(doc['tilesets'])) return body;
  const kept = doc['tilesets'].filter((t) => !(isObj(t) && EXTRA_GRIDS.some((g) => t['title'] === `tileset tiled using ${g} TileMatrixSet`)));
  return JSON.stringify({ ...doc, tilesets: kept });
}

/** A WMTS document without the layers and matrix sets of tessera's extra grids. */
function withoutExtraGrids(root: XmlElement): XmlElement {
  const layerGrid = (e: XmlElement): string | undefined =>
    e.children
      .find((c) => c.name === 'TileMatrixSetLink')
      ?.children.find((c) => c.name === 'TileMatrixSet')
      ?.text.trim();
  const setId = (e: XmlElement): string | undefined => e.children.find((c) => c.name === 'ows:Identifier')?.text.trim();
  const keep = (e: XmlElement): boolean => {
    if (e.name === 'Layer') return !EXTRA_GRIDS.includes(layerGrid(e) ?? '');
    if (e.name === 'TileMatrixSet' && e.children.length > 1) return !EXTRA_GRIDS.includes(setId(e) ?? '');
    return true;
  };
  const walk = (e: XmlElement): XmlElement => ({ ...e, children: e.children.filter(keep).map(walk) });
  return walk(root);
}

/**
 * Grids whose WMTS scale denominators tessera derives from the cell size (tms/document.ts) where
 * morecantile's own give another cell size (CanadianNAD83_LCC by 5.8%; the others by their rounding,
 * the UPS grids' deepest matrices to 1.4e-8).
 */
const DERIVED_SCALES = new Set(['CanadianNAD83_LCC', 'CDB1GlobalGrid', 'GNOSISGlobalGrid', 'UPSAntarcticWGS84Quad', 'UPSArcticWGS84Quad']);

/** With `use_epsg=true`, TiTiler 2.4.0 names WorldCRS84Quad's CRS `EPSG:None` (it has no EPSG code); tessera keeps its URI. */
const CRS84_NAMES = new Set(['EPSG:None', 'http://www.opengis.net/def/crs/OGC/1.3/CRS84']);

/**
 * What tessera's WMTS says of itself (its service title and provider), left out; the scale
 * denominators of the grids in DERIVED_SCALES replaced by one placeholder.
 */
function comparable(root: XmlElement): XmlElement {
  const walk = (e: XmlElement, grid: string | undefined): XmlElement => {
    const id = e.name === 'TileMatrixSet' ? e.children.find((c) => c.name === 'ows:Identifier')?.text.trim() : undefined;
    const inGrid = id ?? grid;
    const text =
      e.name === 'ScaleDenominator' && DERIVED_SCALES.has(inGrid ?? '')
        ? '(derived)'
        : e.name === 'ows:SupportedCRS' && inGrid === 'WorldCRS84Quad' && CRS84_NAMES.has(e.text.trim())
          ? '(CRS84)'
          : e.text;
    const children = e.children
      .filter((c) => c.name !== 'ows:ServiceProvider')
      .map((c) => (e.name === 'ows:ServiceIdentification' && c.name === 'ows:Title' ? { ...c, text: '(service)' } : walk(c, inGrid)));
    return { ...e, text, children };
  };
  return walk(root, undefined);
}

/** The OGC API classes tessera does not claim: its API definition is OpenAPI 3.1, not 3.0. */
const NOT_CLAIMED = ['http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30'];

/** A 0.18 suite check (deliberate.ts) on the same exchange. */
function as018(id: string): (x: Exchange) => string[] {
  return (x) => deliberate(id).accept({ request: '', ...x });
}

export const DELIBERATE_2 = {
  tmsList: { id: 'tms-list', what: "tessera's TMS 1.0 list of 14 grids (deliberate.ts `tms-list`), against 2.4.0's 13", accept: as018('tms-list') },
  tmsDocument: {
    id: 'tms-document',
    what: "tessera's TMS 1.0 document, compared matrix by matrix with 2.4.0's TMS 2.0 one (deliberate.ts `tms-document`)",
    accept: as018('tms-document'),
  },
  conformance: {
    id: 'conformance-oas30',
    what: "the classes are TiTiler 2.4.0's but `ogcapi-common-1/1.0/conf/oas30`: tessera's API definition is OpenAPI 3.1",
    accept: (x) => {
      const ref = toPlain(parseJson(x.titiler.body));
      const list = isObj(ref) && Array.isArray(ref['conformsTo']) ? ref['conformsTo'].filter((c) => typeof c === 'string' && !NOT_CLAIMED.includes(c)) : [];
      return listed(compareJson(parseJson(JSON.stringify({ conformsTo: list })), parseJson(x.tessera.body), { normalise: x.normalise }));
    },
  },
  landing: {
    id: 'landing-document',
    what: "the landing document names tessera (title, description), its API definition link says OpenAPI 3.1, and TiTiler's two links to its own documentation and source are left out; the links to the server's resources are compared as they are",
    accept: (x) => {
      const own = (body: string): string => {
        const doc = toPlain(parseJson(body));
        if (!isObj(doc) || !Array.isArray(doc['links'])) return body;
        const links = doc['links']
          .filter((l) => !(isObj(l) && l['rel'] === 'doc'))
          .map((l) => (isObj(l) && l['rel'] === 'service-desc' ? { ...l, type: '(openapi)' } : l));
        return JSON.stringify({ links });
      };
      return listed(compareJson(parseJson(own(x.titiler.body)), parseJson(own(x.tessera.body)), { normalise: x.normalise }));
    },
  },
  tilesetListGrids: {
    id: 'tileset-list-grids',
    what: "the tileset list has an entry for NZTM2000, the grid tessera serves beside TiTiler 2.4.0's 13; the other 13 entries are compared as they are",
    accept: (x) => listed(compareJson(parseJson(x.titiler.body), parseJson(withoutExtraTilesets(x.tessera.body)), { normalise: x.normalise })),
  },
  gridEnum: {
    id: 'grid-enum',
    what: "an unknown grid is a 422 on both with the same `type` and `loc`; the message lists the grids each accepts (tessera's NZTM2000 too)",
    accept: (x) => {
      const first = (r: Reply): Obj | undefined => {
        const body = toPlain(parseJson(r.body));
        const detail = isObj(body) ? body['detail'] : undefined;
        const item = Array.isArray(detail) ? detail[0] : undefined;
        return isObj(item) ? item : undefined;
      };
      const a = first(x.titiler);
      const b = first(x.tessera);
      if (!a || !b) return ['detail[0] missing'];
      return ['type', 'loc']
        .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
        .map((k) => `detail[0].${k} ${JSON.stringify(b[k])} vs ${JSON.stringify(a[k])}`);
    },
  },
  wmtsGrids: {
    id: 'wmts-grids',
    what: "the WMTS document has a layer and a matrix set for NZTM2000 too; the ScaleDenominators of CanadianNAD83_LCC, CDB1GlobalGrid, GNOSISGlobalGrid and the UPS grids are those that give the cell sizes tiles are cut with (as in tessera's 0.18 WMTS documents, docs/differences.md); the service's title and provider name tessera; with use_epsg WorldCRS84Quad keeps its CRS84 URI where TiTiler writes `EPSG:None`; everything else is compared as it is",
    accept: (x) =>
      listed(compareXml(comparable(parseXml(x.titiler.body)), comparable(withoutExtraGrids(parseXml(x.tessera.body))), { normalise: x.normalise })),
  },
  wmtsRenders: {
    id: 'wmts-renders',
    what: "as `wmts-grids`, and the tile URLs of the layers of a STAC item's renders carry the dataset's `url` first (TiTiler 2.4.0 writes the render's parameters alone, so its render layers' tiles are 422s)",
    accept: (x) =>
      listed(
        compareXml(comparable(parseXml(x.titiler.body)), comparable(withoutRenderUrls(withoutExtraGrids(parseXml(x.tessera.body)))), {
          normalise: x.normalise,
        }),
      ),
  },
} satisfies Record<string, Deliberate2>;

/** A WMTS document whose render layers' tile templates have their leading `url=…&` taken out (the `_default` layers keep theirs). */
function withoutRenderUrls(root: XmlElement): XmlElement {
  const walk = (e: XmlElement, renderLayer: boolean): XmlElement => {
    const id = e.name === 'Layer' ? e.children.find((c) => c.name === 'ows:Identifier')?.text.trim() : undefined;
    const inRender = id !== undefined ? !id.endsWith('_default') : renderLayer;
    if (e.name === 'ResourceURL' && inRender) {
      const attrs = new Map(e.attrs);
      attrs.set('template', (attrs.get('template') ?? '').replace(/\?url=[^&]*&/, '?'));
      return { ...e, attrs };
    }
    return { ...e, children: e.children.map((c) => walk(c, inRender)) };
  };
  return walk(root, false);
}
