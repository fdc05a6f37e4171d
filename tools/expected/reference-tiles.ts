/**
 * Makes the reference tiles of the reader contract suite (test/contract.test.ts): a handful of tiles
 * per reader family, as TiTiler 0.18.10 draws them from the shared fixtures, saved as PNG files in
 * test/fixtures/expected/tiles/ with cases.json naming each request. The contract suite compares
 * tessera's tiles with them on every `make test`, without TiTiler running; the live parity suites
 * stay the oracle for everything else.
 *
 * Run again (after a TiTiler or fixture change) with:
 *   make build && bash tools/parity/setup.sh && node dist/tools/expected/reference-tiles.js
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startFileServer, fixtureItem, fixtureMosaic, FIXTURES } from '../../test/helpers/fileserver.js';
import { REPO_ROOT } from '../../test/helpers/paths.js';
import { resolveFixtureUrls } from '../../test/helpers/fixture-urls.js';
import { TITILER_COMMAND, startServer } from '../../test/parity/harness.js';

export interface ReferenceTile {
  id: string;
  family: 'cog' | 'stac' | 'mosaicjson';
  /** `{item}`, `{mosaic}` and `{file:NAME}` stand for the URL-encoded URLs of the served fixtures. */
  path: string;
  why: string;
}

const CASES: ReferenceTile[] = [
  {
    id: 'cog-b01-rescaled',
    family: 'cog',
    path: '/cog/tiles/WebMercatorQuad/9/289/207.png?url={file:B01.tif}&rescale=0,10000',
    why: 'one uint16 band with nodata, rescaled, at the edge of the data',
  },
  { id: 'cog-tci-rgb', family: 'cog', path: '/cog/tiles/WebMercatorQuad/9/289/207.png?url={file:TCI.tif}', why: 'three uint8 bands as they are' },
  {
    id: 'cog-cog-viridis',
    family: 'cog',
    path: '/cog/tiles/WebMercatorQuad/8/87/49.png?url={file:cog.tif}&rescale=0,8000&colormap_name=viridis',
    why: 'overviews, a colormap',
  },
  {
    id: 'cog-dem-hillshade',
    family: 'cog',
    path: '/cog/tiles/WebMercatorQuad/15/17029/11668.png?url={file:dem.tif}&algorithm=hillshade&buffer=3',
    why: 'float32 DEM in EPSG:2056, an algorithm with a buffer',
  },
  { id: 'stac-b01-rescaled', family: 'stac', path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={item}&assets=B01&rescale=0,10000', why: 'one asset' },
  {
    id: 'stac-expression',
    family: 'stac',
    path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={item}&expression=B01_b1%2FB09_b1&rescale=0,2',
    why: 'an expression over two assets',
  },
  {
    id: 'stac-wgs84-grid',
    family: 'stac',
    path: '/stac/tiles/WGS1984Quad/7/144/41.png?url={item}&assets=B01&assets=B09&rescale=0,10000',
    why: 'another grid, two assets as two bands',
  },
  {
    id: 'mosaic-rgb',
    family: 'mosaicjson',
    path: '/mosaicjson/tiles/WebMercatorQuad/8/75/91.png?url={mosaic}&rescale=5000,15000',
    why: 'two overlapping COGs, first method',
  },
  {
    id: 'mosaic-highest-terrain',
    family: 'mosaicjson',
    path: '/mosaicjson/tiles/WebMercatorQuad/9/152/183.png?url={mosaic}&bidx=1&pixel_selection=highest&rescale=5000,15000&colormap_name=terrain',
    why: 'pixel selection and a colormap',
  },
];

async function main(): Promise<void> {
  const out = path.join(REPO_ROOT, 'test/fixtures/expected/tiles');
  await mkdir(out, { recursive: true });
  const files = await startFileServer(FIXTURES);
  files.put('/item.json', await fixtureItem(files.url));
  files.put('/mosaic.json', JSON.stringify(await fixtureMosaic(files.url)));
  const titiler = await startServer(TITILER_COMMAND);
  try {
    for (const c of CASES) {
      const res = await fetch(`${titiler.url}${resolveFixtureUrls(c.path, files.url)}`, { headers: { 'accept-encoding': 'identity' } });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 || res.headers.get('content-type') !== 'image/png') {
        throw new Error(`${c.id}: TiTiler answered ${res.status} ${res.headers.get('content-type')}: ${body.toString().slice(0, 200)}`);
      }
      await writeFile(path.join(out, `${c.id}.png`), body);
      console.log(`${c.id}.png`);
    }
    const manifest = { generatedBy: 'tools/expected/reference-tiles.ts', reference: 'titiler.application 0.18.10', cases: CASES };
    await writeFile(path.join(out, 'cases.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    await titiler.stop();
    await files.close();
  }
}

await main();
