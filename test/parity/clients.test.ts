/**
 * Clients nobody here wrote read tessera as they read TiTiler: GDAL's WMTS driver (what QGIS uses)
 * opens a WMTS capabilities document and reads pixels through the tiles it names; GDAL's WMS driver
 * in TMS mode reads the XYZ tile URL a TileJSON gives; OWSLib (Python's OGC client) parses the
 * capabilities and fetches a tile. Each must see the very pixels tessera's tile route serves. GDAL's
 * WMTS driver also reads the every-grid document TiTiler 2.x clients get (TESSERA_TITILER_API=2).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import gdal from 'gdal-async';
import sharp from 'sharp';
import { startFileServer, FIXTURES, type FileServer } from '../helpers/fileserver.js';
import { LOOPBACK_NETWORKS, ROOT, TESSERA_COMMAND, startServer, type Service } from './harness.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../src/tms/registry.js';
import { srsFrom, transformPoint, WGS84 } from '../../src/gdal/crs.js';

const PYTHON = path.join(ROOT, '.parity/venv/bin/python');

/** The tile of TCI.tif's middle at zoom 10, and its top-left corner in Web Mercator. */
function middleTile(): { z: number; x: number; y: number; left: number; top: number; cell: number } {
  const tms = getTms(WEB_MERCATOR_QUAD)!;
  const [mx, my] = transformPoint(srsFrom(WGS84), srsFrom(tms.srs), 23.85, 32.0);
  const z = 10;
  const t = tms.tileAt(mx, my, z);
  const [left, , right, top] = tms.xyBounds(t);
  return { ...t, left, top, cell: (right - left) / 256 };
}

async function rgbaOf(png: Buffer): Promise<Buffer> {
  return (await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })).data;
}

describe('real clients: GDAL WMTS and TMS drivers, OWSLib', { timeout: 180_000 }, () => {
  let files: FileServer;
  let tessera: Service;
  let tci: string;

  before(async () => {
    // The WMTS driver caches tiles in ./gdalwmscache unless told not to.
    gdal.config.set('GDAL_ENABLE_WMS_CACHE', 'NO');
    files = await startFileServer(FIXTURES);
    tessera = await startServer(TESSERA_COMMAND, { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS });
    tci = encodeURIComponent(`${files.url}/TCI.tif`);
  });
  after(async () => {
    await tessera?.stop();
    await files?.close();
  });

  async function servedTile(z: number, x: number, y: number, query = ''): Promise<Buffer> {
    return rgbaOf(await servedPng(z, x, y, query));
  }

  async function servedPng(z: number, x: number, y: number, query = ''): Promise<Buffer> {
    const res = await fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/${z}/${x}/${y}.png?url=${tci}${query}`);
    assert.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  }

  /** 256×256 RGBA read by GDAL at `left`, `top` (Web Mercator) from a dataset it opened. */
  async function readWindow(ds: gdal.Dataset, left: number, top: number): Promise<Buffer> {
    const gt = ds.geoTransform!;
    const col = (left - gt[0]!) / gt[1]!;
    const row = (top - gt[3]!) / gt[5]!;
    assert.ok(Math.abs(col - Math.round(col)) < 1e-6 && Math.abs(row - Math.round(row)) < 1e-6, `the tile starts on a pixel of the dataset (${col}, ${row})`);
    assert.equal(ds.bands.count(), 4, 'RGBA');
    const out = Buffer.alloc(256 * 256 * 4);
    for (let b = 1; b <= 4; b++) {
      const values = (await ds.bands.get(b).pixels.readAsync(Math.round(col), Math.round(row), 256, 256)) as Uint8Array;
      for (let i = 0; i < values.length; i++) out[i * 4 + b - 1] = values[i]!;
    }
    return out;
  }

  it("GDAL's WMTS driver reads the capabilities and, through them, the tiles tessera serves", async () => {
    const caps = `${tessera.url}/cog/WebMercatorQuad/WMTSCapabilities.xml?url=${tci}`;
    const ds = await gdal.openAsync(`WMTS:${caps}`);
    try {
      assert.equal(ds.driver.description, 'WMTS');
      assert.ok(srsFrom('EPSG:3857').isSame(ds.srs!), 'Web Mercator');
      const t = middleTile();
      assert.ok(Math.abs(ds.geoTransform![1]! - t.cell) / t.cell < 1e-9, `the finest level is z10: ${ds.geoTransform![1]} vs ${t.cell}`);
      const read = await readWindow(ds, t.left, t.top);
      assert.ok(read.equals(await servedTile(t.z, t.x, t.y)), 'the same RGBA as the tile route');
    } finally {
      ds.close();
    }
  });

  it("GDAL's WMTS driver draws a palette PNG (an opaque colormap's tile) in the RGBA pixels a browser decodes", async () => {
    // tessera writes tiles of opaque colormaps as palette PNGs where TiTiler writes RGBA (docs/differences.md).
    const query = '&bidx=1&colormap_name=viridis';
    const t = middleTile();
    const png = await servedPng(t.z, t.x, t.y, query);
    assert.equal(png[25], 3, 'a palette PNG (colour type 3)');
    const ds = await gdal.openAsync(`WMTS:${tessera.url}/cog/WebMercatorQuad/WMTSCapabilities.xml?url=${tci}${query}`);
    try {
      const read = await readWindow(ds, t.left, t.top);
      assert.ok(read.equals(await rgbaOf(png)), 'the same RGBA as sharp (libvips, as browsers) decodes');
    } finally {
      ds.close();
    }
  });

  it("GDAL's WMTS driver reads the every-grid document of TESSERA_TITILER_API=2 and, through its WebMercatorQuad layer, the tiles served", async () => {
    const v2 = await startServer(TESSERA_COMMAND, { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_TITILER_API: '2' });
    try {
      const caps = `${v2.url}/cog/WMTSCapabilities.xml?url=${tci}`;
      const listing = await gdal.openAsync(`WMTS:${caps}`);
      const layers = listing.getMetadata('SUBDATASETS');
      listing.close();
      assert.equal(Object.keys(layers).filter((k) => k.endsWith('_NAME')).length, 14, 'one layer per grid');
      // The matrix set lists every matrix of the grid (as TiTiler 2.x's does): the finest asked for.
      const ds = await gdal.openAsync(`WMTS:${caps},layer=${files.url}/TCI.tif_WebMercatorQuad_default,tilematrix=10`);
      try {
        assert.ok(srsFrom('EPSG:3857').isSame(ds.srs!), 'Web Mercator');
        const t = middleTile();
        assert.ok(Math.abs(ds.geoTransform![1]! - t.cell) / t.cell < 1e-9, `the finest level is z10: ${ds.geoTransform![1]} vs ${t.cell}`);
        const read = await readWindow(ds, t.left, t.top);
        assert.ok(read.equals(await servedTile(t.z, t.x, t.y)), 'the same RGBA as the tile route');
      } finally {
        ds.close();
      }
    } finally {
      await v2.stop();
    }
  });

  it("GDAL's WMS driver in TMS mode reads the XYZ tile URL of a TileJSON", async () => {
    const tilejson = (await (await fetch(`${tessera.url}/cog/WebMercatorQuad/tilejson.json?url=${tci}&tile_format=png`)).json()) as {
      tiles: string[];
      maxzoom: number;
    };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: GDAL's TMS URL template syntax (${z}, ${x}, ${y}), not a JS template
    const template = tilejson.tiles[0]!.replace('{z}', '${z}').replace('{x}', '${x}').replace('{y}', '${y}');
    const half = 20037508.342789244;
    const xml = `<GDAL_WMS><Service name="TMS"><ServerUrl>${template.replace(/&/g, '&amp;')}</ServerUrl></Service>
<DataWindow><UpperLeftX>${-half}</UpperLeftX><UpperLeftY>${half}</UpperLeftY><LowerRightX>${half}</LowerRightX><LowerRightY>${-half}</LowerRightY><TileLevel>${tilejson.maxzoom}</TileLevel><TileCountX>1</TileCountX><TileCountY>1</TileCountY><YOrigin>top</YOrigin></DataWindow>
<Projection>EPSG:3857</Projection><BlockSizeX>256</BlockSizeX><BlockSizeY>256</BlockSizeY><BandsCount>4</BandsCount><ZeroBlockHttpCodes>204,404</ZeroBlockHttpCodes></GDAL_WMS>`;
    const ds = await gdal.openAsync(xml);
    try {
      const t = middleTile();
      const read = await readWindow(ds, t.left, t.top);
      assert.ok(read.equals(await servedTile(t.z, t.x, t.y)), 'the same RGBA as the tile route');
    } finally {
      ds.close();
    }
  });

  it('OWSLib parses the capabilities and fetches the same tile', () => {
    const t = middleTile();
    const script = `
import json, sys
from owslib.wmts import WebMapTileService
w = WebMapTileService(sys.argv[1])
layer = list(w.contents)[0]
tms = list(w.tilematrixsets)[0]
matrix = w.tilematrixsets[tms].tilematrix['${t.z}']
tile = w.gettile(layer=layer, tilematrixset=tms, tilematrix='${t.z}', row=${t.y}, column=${t.x}, format='image/png')
body = tile.read()
sys.stdout.buffer.write(json.dumps({"layer": layer, "tms": tms, "scale": matrix.scaledenominator, "type": tile.info()["Content-Type"], "size": len(body)}).encode() + b"\\n")
sys.stdout.buffer.write(body)
`;
    const run = spawnSync(PYTHON, ['-c', script, `${tessera.url}/cog/WebMercatorQuad/WMTSCapabilities.xml?url=${tci}`], {
      encoding: 'buffer',
      timeout: 60_000,
      env: { ...process.env, NO_PROXY: '*', no_proxy: '*' },
    });
    assert.equal(run.status, 0, run.stderr.toString('utf8'));
    const newline = run.stdout.indexOf(0x0a);
    const facts = JSON.parse(run.stdout.subarray(0, newline).toString('utf8')) as { layer: string; tms: string; scale: number; type: string; size: number };
    const body = run.stdout.subarray(newline + 1);
    assert.equal(facts.tms, 'WebMercatorQuad');
    assert.equal(facts.type, 'image/png');
    assert.equal(body.length, facts.size);
    assert.ok(Math.abs(facts.scale - t.cell / 0.28e-3) / facts.scale < 1e-9, 'the scale denominator gives the served cell size');
    return (async () => {
      const res = await fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/${t.z}/${t.x}/${t.y}.png?url=${tci}`);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(body), 'the bytes the tile route serves');
    })();
  });
});
