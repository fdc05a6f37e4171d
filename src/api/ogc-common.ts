/**
 * OGC API – Common documents of the server, as TiTiler 2.x has them (titiler/application/main.py
 * 2.4.0, `landing` and `conformance`): the landing document's links to the server's own resources,
 * and the conformance classes, which follow what is mounted here. Differences on purpose: the
 * landing document names tessera; its API definition is OpenAPI 3.1 (so `version=3.1`, and the
 * `oas30` class is not claimed); the OGC API – Maps classes are claimed only where `/map` is that
 * API (TESSERA_TITILER_API=2, api/generations.ts); external links to TiTiler's pages are left out.
 */
import type { Settings } from '../config.js';
import type { DocumentLink } from './pages/html.js';
import { choose } from './generations.js';

const COMMON = 'http://www.opengis.net/spec/ogcapi-common-1/1.0/conf';
const TILES = 'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf';
const MAPS = 'https://www.opengis.net/spec/ogcapi-maps-1/1.0/conf';

/** What the OGC documents depend on: the reader families mounted (by prefix) and the settings. */
export interface OgcServer {
  settings: Settings;
  prefixes: readonly string[];
}

/** The conformance classes, sorted as TiTiler sorts them. */
export function conformsTo(server: OgcServer): string[] {
  const classes = [`${COMMON}/core`, `${COMMON}/landing-page`, `${COMMON}/html`, `${COMMON}/json`];
  if (server.prefixes.length > 0) {
    classes.push(...['tileset', 'tilesets-list', 'core', 'png', 'jpeg', 'tiff'].map((c) => `${TILES}/${c}`));
  }
  // OGC API – Maps is `/map` of /cog and /stac, mounted only where the 2.x meaning was chosen.
  const maps = choose(server.settings, 'prefixMap', { '0.18': false, '2': server.prefixes.some((p) => p === '/cog' || p === '/stac') });
  if (maps) {
    const parts = [
      'core',
      'crs',
      'scaling',
      'scaling/width-definition',
      'scaling/height-definition',
      'spatial-subsetting',
      'spatial-subsetting/bbox-definition',
      'spatial-subsetting/bbox-crs',
      'spatial-subsetting/crs-curie',
      'png',
      'jpeg',
      'tiff',
    ];
    classes.push(...parts.map((c) => `${MAPS}/${c}`));
  }
  return [...new Set(classes)].sort();
}

/** The landing document's links, to this server's resources (`base`: scheme, host and root path). */
function landingLinks(base: string): DocumentLink[] {
  return [
    { href: `${base}/`, rel: 'self', type: 'text/html', title: 'Landing page' },
    { href: `${base}/api`, rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.1', title: 'The API definition (JSON)' },
    { href: `${base}/api.html`, rel: 'service-doc', type: 'text/html', title: 'The API documentation' },
    { href: `${base}/conformance`, rel: 'http://www.opengis.net/def/rel/ogc/1.0/conformance', type: 'text/html', title: 'Conformance Declaration' },
    {
      href: `${base}/tileMatrixSets`,
      rel: 'http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes',
      type: 'application/json',
      title: 'List of Available TileMatrixSets',
    },
    { href: `${base}/algorithms`, rel: 'data', type: 'application/json', title: 'List of Available Algorithms' },
    { href: `${base}/colorMaps`, rel: 'data', type: 'application/json', title: 'List of Available ColorMaps' },
  ];
}

/** The landing document. */
export function landingDocument(base: string): Record<string, unknown> {
  return {
    title: 'tessera',
    description: 'Raster tiles and metadata from Cloud Optimized GeoTIFFs, STAC items and MosaicJSON, answering TiTiler 0.18 and 2.x clients.',
    links: landingLinks(base),
  };
}
