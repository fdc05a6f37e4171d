/**
 * Parity with TiTiler 0.18.10 on s3:// (issue 39): both servers read the same bucket of a moto
 * server that checks signatures, with the same GDAL environment (AWS_S3_ENDPOINT, path-style with
 * AWS_VIRTUAL_HOSTING=FALSE, AWS_HTTPS=NO, the same keys); COG metadata, statistics and points
 * answer the same JSON, tiles the same pixels, for a bare `url=s3://…`, a STAC item whose assets
 * are s3:// hrefs and a MosaicJSON document whose entries are.
 *
 * The item and the mosaic are served over http here: TiTiler reads documents on S3 with boto3,
 * which its environment (.parity/venv) does not have; tessera's own tests read them from the bucket
 * (test/objstore.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, startFileServer, type FileServer } from '../helpers/fileserver.js';
import { parseNpy } from '../helpers/npy.js';
import { installMoto, startMoto, type Moto } from '../helpers/objstore.js';
import { compareJson, formatDifferences, parseJson } from './compare.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, TITILER_COMMAND, get, startServer, type Service } from './harness.js';
import { PASS, compareArrays } from './pixels.js';

const q = encodeURIComponent;
const BUCKET = 'parity-cogs';

describe('s3:// side by side with TiTiler 0.18.10, against one signature-checking store', { timeout: 300_000 }, () => {
  let moto: Moto;
  let files: FileServer;
  let titiler: Service;
  let tessera: Service;

  before(async () => {
    await installMoto();
    const objects: Record<string, string> = {};
    for (const name of ['cog.tif', 'cog1.tif', 'cog2.tif', 'B01.tif', 'B09.tif']) objects[name] = path.join(FIXTURES, name);
    moto = await startMoto({ [BUCKET]: { objects } });
    files = await startFileServer(FIXTURES);
    const item = JSON.parse(readFileSync(path.join(FIXTURES, 'item.json'), 'utf8')) as { assets: Record<string, { href: string }> };
    for (const [name, asset] of Object.entries(item.assets)) asset.href = `s3://${BUCKET}/${name}.tif`;
    files.put('/s3-item.json', JSON.stringify(item));
    const mosaic = JSON.parse(readFileSync(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as { tiles: Record<string, string[]> };
    for (const [qk, list] of Object.entries(mosaic.tiles)) mosaic.tiles[qk] = list.map((name) => `s3://${BUCKET}/${name}`);
    files.put('/s3-mosaic.json', JSON.stringify(mosaic));
    // GDAL's settings for an S3-compatible store, read by TiTiler's GDAL and by tessera alike.
    const env = {
      AWS_ACCESS_KEY_ID: moto.keys.reader.access_key_id,
      AWS_SECRET_ACCESS_KEY: moto.keys.reader.secret_access_key,
      AWS_S3_ENDPOINT: moto.host,
      AWS_VIRTUAL_HOSTING: 'FALSE',
      AWS_HTTPS: 'NO',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
      AWS_CONFIG_FILE: '/nonexistent',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    [titiler, tessera] = await Promise.all([
      startServer(TITILER_COMMAND, env),
      startServer(TESSERA_COMMAND, { ...env, TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_ALLOWED_BUCKETS: `s3://${BUCKET}` }),
    ]);
  });

  after(async () => {
    await Promise.all([titiler?.stop(), tessera?.stop(), files?.close()]);
    await moto?.close();
  });

  const item = (): string => q(`${files.url}/s3-item.json`);
  const mosaic = (): string => q(`${files.url}/s3-mosaic.json`);

  it('answers the same JSON: info, statistics, points of a COG, a STAC item and a mosaic on s3://', async () => {
    const cases = [
      `/cog/info?url=${q(`s3://${BUCKET}/cog.tif`)}`,
      `/cog/info?url=${q(`s3://${BUCKET}/B01.tif`)}`,
      `/cog/statistics?url=${q(`s3://${BUCKET}/B01.tif`)}&max_size=256`,
      `/cog/point/23.9,32.1?url=${q(`s3://${BUCKET}/B01.tif`)}`,
      `/stac/info?url=${item()}&assets=B01&assets=B09`,
      `/stac/point/23.9,32.1?url=${item()}&assets=B01`,
      `/mosaicjson/point/-74.5,46?url=${mosaic()}`,
    ];
    const failures: string[] = [];
    for (const c of cases) {
      const [a, b] = await Promise.all([get(titiler.url, c), get(tessera.url, c)]);
      assert.equal(a.status, 200, `TiTiler ${c}: ${a.body.slice(0, 300)}`);
      if (a.status !== b.status) {
        failures.push(`${c}: TiTiler ${a.status}, tessera ${b.status} (${b.body.slice(0, 200)})`);
        continue;
      }
      if (a.status !== 200) continue;
      const diffs = compareJson(parseJson(a.body), parseJson(b.body));
      if (diffs.length > 0) failures.push(`${c}:\n${formatDifferences(diffs)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('differs on purpose for a missing key: TiTiler 500, tessera 404 (docs/differences.md)', async () => {
    const c = `/cog/info?url=${q(`s3://${BUCKET}/missing.tif`)}`;
    const [a, b] = await Promise.all([get(titiler.url, c), get(tessera.url, c)]);
    assert.equal(a.status, 500, a.body);
    assert.equal(b.status, 404, b.body);
    assert.match((JSON.parse(b.body) as { detail: string }).detail, /s3:\/\/parity-cogs\/missing\.tif not found \(the store answered 404 NoSuchKey\)/);
  });

  it('answers the same pixels: tiles of a COG, a STAC item and a mosaic on s3://', async () => {
    const cases: Array<[string, number]> = [
      [`/cog/tiles/WebMercatorQuad/8/87/49.npy?url=${q(`s3://${BUCKET}/cog.tif`)}`, 1],
      [`/cog/tiles/WebMercatorQuad/9/289/207.npy?url=${q(`s3://${BUCKET}/B01.tif`)}`, 1],
      [`/stac/tiles/WebMercatorQuad/9/289/207.npy?url=${item()}&assets=B01&assets=B09`, 1],
      [`/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?url=${mosaic()}`, 1],
    ];
    for (const [c, maskBands] of cases) {
      const [a, b] = await Promise.all(
        [titiler, tessera].map(async (s) => {
          const res = await fetch(`${s.url}${c}`);
          return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
        }),
      );
      assert.equal(a!.status, 200, `TiTiler ${c}: ${a!.body.toString('utf8', 0, 300)}`);
      assert.equal(b!.status, 200, `tessera ${c}: ${b!.body.toString('utf8', 0, 300)}`);
      const [x, y] = [parseNpy(a!.body), parseNpy(b!.body)];
      assert.deepEqual(y.shape, x.shape, c);
      const { within, maskEqual } = compareArrays(x.values, y.values, x.shape[0]!, maskBands);
      assert.ok(within >= PASS, `${c}: ${(within * 100).toFixed(2)}% of values within ±1`);
      assert.equal(maskEqual, 1, `${c}: masks differ`);
    }
  });
});
