/**
 * tessera's core without HTTP: the tiles of a mix made by calling the core directly — STAC/mosaic
 * readers, post-processing and encoder, exactly the calls the routes make — at the same concurrency
 * as the load test. What the server adds on top (parsing, Fastify, sockets) is the difference
 * between its throughput and this. (This was the benchmark's "floor" before ./floor.ts, the bare
 * GDAL floor, took that name: this one measures tessera's HTTP overhead, that one what its core costs
 * against the least a tile can cost.)
 *
 *   node core.js <tiles.json> <concurrency> <duration ms> <repetitions>
 *
 * Prints one JSON line: { rps: number[] } (one figure per repetition, after a warm-up pass).
 */
import { promises as fs } from 'node:fs';
import { loadSettings } from '../../src/config.js';
import { Services } from '../../src/services.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../src/tms/registry.js';
import { stacItemReader } from '../../src/readers/stac.js';
import { documentCompositor } from '../../src/readers/mosaic.js';
import type { RenderSpec } from '../../src/image/post-process.js';
import { namedColormap } from '../../src/image/colormap.js';
import type { ImageData } from '../../src/image/image-data.js';
import type { ValueOptions } from '../../src/source/reader.js';
import type { TileRequest } from './mixes.js';

const VALUES: ValueOptions = { unscale: false, resampling: 'nearest', reproject: 'nearest' };

async function main(): Promise<void> {
  const [file, concurrencyArg, durationArg, repsArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: core.js <tiles.json> <concurrency> <duration ms> <repetitions>');
  const tiles = JSON.parse(await fs.readFile(file, 'utf8')) as TileRequest[];
  const concurrency = Number(concurrencyArg ?? 16);
  const durationMs = Number(durationArg ?? 5000);
  const reps = Number(repsArg ?? 1);

  const services = new Services(loadSettings({ logLevel: 'silent', allowedNetworks: ['127.0.0.0/8'] }));
  const settings = services.settings;
  const limits = { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels };
  const store = services.mosaics;
  const ctx = services.mosaicContext;
  const tms = getTms(WEB_MERCATOR_QUAD)!;
  const colormaps = new Map<string, ReturnType<typeof namedColormap>>();

  const makeTile = async (t: TileRequest): Promise<number> => {
    const tilesize = 256 * (t.scale ?? 1);
    let image: ImageData;
    let expression: string | undefined;
    if (t.kind === 'stac') {
      const stac = await services.stac(t.url);
      const reader = await stacItemReader(stac, {
        ...(t.assets ? { assets: t.assets } : {}),
        ...(t.expression ? { expression: t.expression } : {}),
        assetAsBand: false,
        assetBidx: new Map(),
      });
      // As the tile route does: the expression goes to the renderer with the rest.
      const tile = await reader.tile(tms, { x: t.x, y: t.y, z: t.z }, { ...VALUES, limits, tilesize, deferExpression: true });
      image = tile.image;
      expression = tile.expression;
    } else {
      const mosaic = await store.open(t.url);
      const result = await documentCompositor(mosaic, { stac: { assetAsBand: false, assetBidx: new Map() } }, ctx).tile(tms, t.x, t.y, t.z, {
        ...VALUES,
        tilesize,
        pixelSelection: 'first',
      });
      // No asset had data: the route answers 204 without encoding.
      if (result.assetsUsed.length === 0) return 0;
      image = result.image;
    }
    let colormap = t.colormapName ? colormaps.get(t.colormapName) : undefined;
    if (t.colormapName && !colormap) {
      colormap = namedColormap(t.colormapName);
      colormaps.set(t.colormapName, colormap);
    }
    const render: RenderSpec = {
      ...(expression ? { expression } : {}),
      algorithm: undefined,
      rescale: t.rescale ? [t.rescale] : undefined,
      colorFormula: undefined,
      colormap,
      returnMask: true,
    };
    // The server's renderer: its render threads when it has them. No extension: it chooses, as the route does.
    const out = await services.renderer.render(image, t.format, render);
    return out.body.length;
  };

  const run = async (opts: { passes?: number; durationMs?: number }): Promise<number> => {
    const total = opts.passes !== undefined ? opts.passes * tiles.length : Infinity;
    const deadline = opts.durationMs !== undefined ? performance.now() + opts.durationMs : Infinity;
    let next = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      while (next < total && performance.now() < deadline) {
        const t = tiles[next++ % tiles.length]!;
        try {
          await makeTile(t);
        } catch {
          // Tiles outside the data fail here as they answer 404 over HTTP; they still count.
        }
        done++;
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    return done / ((performance.now() - t0) / 1000);
  };

  await run({ passes: 1 });
  const rps: number[] = [];
  for (let i = 0; i < reps; i++) rps.push(await run({ durationMs }));
  await services.close();
  process.stdout.write(`${JSON.stringify({ rps })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
