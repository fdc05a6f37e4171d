/**
 * s3:// end to end, over HTTP, against a real S3-compatible server that checks signatures (moto's
 * server mode with authentication on, test/helpers/objstore.ts): signed reads of a COG, a STAC
 * item and a MosaicJSON document whose hrefs are s3:// URLs; wrong credentials, a session token,
 * requester pays, unsigned reads of a public bucket, the bucket allow-list, missing keys; the same
 * upstream requests and pixels as over https; credentials fetched once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Settings } from '../src/config.js';
import { FIXTURES, startFileServer, type FileServer } from './helpers/fileserver.js';
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  installMoto,
  startAzurite,
  startGcsEmulator,
  startMoto,
  startOAuthStandIn,
  startRecorder,
  type Azurite,
  type GcsEmulator,
  type OAuthStandIn,
  type Keys,
  type Moto,
  type Recorder,
} from './helpers/objstore.js';
import { BlobServiceClient, ContainerSASPermissions, StorageSharedKeyCredential, generateBlobSASQueryParameters } from '@azure/storage-blob';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { BUILT_CLI } from './helpers/paths.js';
import { run } from './helpers/run.js';

const AWS_NAMES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_REGION',
  'AWS_S3_ENDPOINT',
  'AWS_HTTPS',
  'AWS_VIRTUAL_HOSTING',
  'AWS_REQUEST_PAYER',
  'AWS_NO_SIGN_REQUEST',
  'GS_ACCESS_KEY_ID',
  'GS_SECRET_ACCESS_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'AZURE_STORAGE_ACCOUNT',
  'AZURE_STORAGE_SAS_TOKEN',
  'AZURE_STORAGE_ACCESS_KEY',
  'AZURE_STORAGE_CONNECTION_STRING',
];

/** Runs `fn` with a tessera started under `env` (the credential chain reads it; the gateway's thread copies it at start), then puts the environment back. */
async function withTessera<T>(env: Record<string, string>, settings: Partial<Settings>, fn: (t: RunningTessera) => Promise<T>): Promise<T> {
  const saved = new Map(AWS_NAMES.map((n) => [n, process.env[n]]));
  for (const n of AWS_NAMES) delete process.env[n];
  // Nothing of this machine's own: no profile files, no instance metadata.
  Object.assign(process.env, { AWS_SHARED_CREDENTIALS_FILE: '/nonexistent', AWS_CONFIG_FILE: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' }, env);
  let tessera: RunningTessera | undefined;
  try {
    tessera = await startTessera(settings);
    return await fn(tessera);
  } finally {
    await tessera?.close();
    for (const [n, v] of saved) {
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
    }
  }
}

function keyEnv(keys: Keys): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: keys.access_key_id,
    AWS_SECRET_ACCESS_KEY: keys.secret_access_key,
    ...(keys.session_token ? { AWS_SESSION_TOKEN: keys.session_token } : {}),
  };
}

const q = encodeURIComponent;

/** The WebMercatorQuad tile at zoom `z` that holds a longitude and latitude. */
function lonLatTile(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const rad = (lat * Math.PI) / 180;
  return [Math.floor(((lon + 180) / 360) * n), Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n)];
}
const TILE = '/cog/tiles/WebMercatorQuad/7/43/24.png';

describe('object stores: s3:// against a signature-checking S3 server', () => {
  let moto: Moto;
  let open: Moto;
  let recorder: Recorder;
  let files: FileServer;
  let tmp: string;
  /** Settings that reach moto through the recorder, path-style over http, as GDAL's AWS_S3_ENDPOINT, AWS_VIRTUAL_HOSTING=FALSE, AWS_HTTPS=NO. */
  let store: Partial<Settings>;

  before(async () => {
    await installMoto();
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-objstore-'));
    const item = JSON.parse(readFileSync(path.join(FIXTURES, 'item.json'), 'utf8')) as {
      assets: Record<string, { href: string }>;
      links: Array<{ rel: string; href: string }>;
    };
    // Relative hrefs resolve against the item's self link, which says where it now is.
    item.links = [...item.links.filter((l) => l.rel !== 'self'), { rel: 'self', href: 's3://private-cogs/item.json' }];
    item.assets['B01']!.href = 's3://private-cogs/B01.tif';
    // A relative href resolves against the item's own s3:// URL.
    item.assets['B09']!.href = './B09.tif';
    writeFileSync(path.join(tmp, 'item.json'), JSON.stringify(item));
    const mosaic = JSON.parse(readFileSync(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as { tiles: Record<string, string[]> };
    for (const [qk, list] of Object.entries(mosaic.tiles)) mosaic.tiles[qk] = list.map((name) => `s3://private-cogs/${name}`);
    writeFileSync(path.join(tmp, 'mosaic.json'), JSON.stringify(mosaic));
    const fixture = (name: string): string => path.join(FIXTURES, name);
    moto = await startMoto({
      'private-cogs': {
        objects: {
          'cog.tif': fixture('cog.tif'),
          'TCI.tif': fixture('TCI.tif'),
          'cog1.tif': fixture('cog1.tif'),
          'cog2.tif': fixture('cog2.tif'),
          'B01.tif': fixture('B01.tif'),
          'B09.tif': fixture('B09.tif'),
          'item.json': path.join(tmp, 'item.json'),
          'mosaic.json': path.join(tmp, 'mosaic.json'),
        },
      },
      'payer-cogs': { objects: { 'cog.tif': fixture('cog.tif') } },
      'other-cogs': { objects: { 'cog.tif': fixture('cog.tif') } },
    });
    // moto checks signatures for every request or none: a public bucket is a second server, without.
    open = await startMoto({ 'public-cogs': { public: true, objects: { 'cog.tif': fixture('cog.tif') } } }, false);
    recorder = await startRecorder(moto.host);
    files = await startFileServer(FIXTURES);
    store = {
      s3Endpoint: recorder.host,
      s3Https: false,
      s3VirtualHosting: false,
      allowedBuckets: ['s3://private-cogs', 's3://payer-cogs', 's3://public-cogs'],
    };
  });

  after(async () => {
    await Promise.all([moto?.close(), open?.close(), recorder?.close(), files?.close()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('reads a COG signed: the same info and pixels as over https, at the same upstream cost', async (ctx) => {
    const overHttps = await withTessera({}, {}, async (t) => {
      files.resetStats();
      const info = await t.get(`/cog/info?url=${q(`${files.url}/cog.tif`)}`);
      assert.equal(info.status, 200);
      const infoRequests = files.stats().requests;
      files.resetStats();
      const tile = await t.get(`${TILE}?url=${q(`${files.url}/cog.tif`)}`);
      assert.equal(tile.status, 200);
      return { info: await info.json(), tile: Buffer.from(await tile.arrayBuffer()), infoRequests, tileRequests: files.stats().requests };
    });
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      recorder.reset();
      const info = await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`);
      assert.equal(info.status, 200, await info.clone().text());
      assert.deepEqual(await info.json(), overHttps.info);
      assert.ok(recorder.requests.length > 0);
      for (const r of recorder.requests) {
        assert.match(String(r.headers['authorization']), /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/us-east-1\/s3\/aws4_request/);
        assert.equal(r.path.split('?')[0], '/private-cogs/cog.tif');
      }
      const infoRequests = recorder.requests.length;
      assert.equal(infoRequests, overHttps.infoRequests, 'opening a COG on s3:// costs the upstream requests it costs over https');
      recorder.reset();
      const tile = await t.get(`${TILE}?url=${q('s3://private-cogs/cog.tif')}`);
      assert.equal(tile.status, 200);
      assert.deepEqual(Buffer.from(await tile.arrayBuffer()), overHttps.tile);
      assert.equal(recorder.requests.length, overHttps.tileRequests, 'a tile from s3:// costs the upstream requests it costs over https');
      ctx.diagnostic(
        `upstream requests: /info (cold open) https ${overHttps.infoRequests}, s3:// ${infoRequests}; the tile after it https ${overHttps.tileRequests}, s3:// ${recorder.requests.length}`,
      );
    });
  });

  it('costs a cold viewport of tiles from s3:// the upstream requests and bytes it costs over https', async (ctx) => {
    // The benchmark's first view: a 4×4 viewport at z11 over a COG none of it has read (TCI.tif, 64×64 blocks), tile after tile.
    const tiles: string[] = [];
    const [x0, y0] = lonLatTile(23.69, 32.01, 11);
    for (let dy = -2; dy < 2; dy++) for (let dx = -2; dx < 2; dx++) tiles.push(`/cog/tiles/WebMercatorQuad/11/${x0 + dx}/${y0 + dy}.png`);
    const cold = async (t: RunningTessera, url: string): Promise<Buffer[]> => {
      const out: Buffer[] = [];
      for (const tile of tiles) {
        const res = await t.get(`${tile}?url=${q(url)}`);
        assert.equal(res.status, 200, `${tile} ${url}`);
        out.push(Buffer.from(await res.arrayBuffer()));
      }
      return out;
    };
    const overHttps = await withTessera({}, {}, async (t) => {
      files.resetStats();
      const pixels = await cold(t, `${files.url}/TCI.tif`);
      return { pixels, ...files.stats() };
    });
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      recorder.reset();
      const pixels = await cold(t, 's3://private-cogs/TCI.tif');
      assert.deepEqual(pixels, overHttps.pixels);
      const figure = `${tiles.length} cold tiles: https ${overHttps.requests} requests, ${overHttps.bytes} bytes; s3:// ${recorder.requests.length} requests, ${recorder.bytes()} bytes`;
      ctx.diagnostic(figure);
      assert.equal(recorder.requests.length, overHttps.requests, figure);
      assert.equal(recorder.bytes(), overHttps.bytes, figure);
    });
  });

  it('answers 403 for credentials the store refuses, and 404 for a missing key', async () => {
    await withTessera(keyEnv(moto.keys.nobody), store, async (t) => {
      const res = await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`);
      assert.equal(res.status, 403);
      assert.match(((await res.json()) as { detail: string }).detail, /s3:\/\/private-cogs\/cog\.tif.*access refused.*403/);
    });
    const forged = { ...moto.keys.reader, secret_access_key: 'not-the-secret' };
    await withTessera(keyEnv(forged), store, async (t) => {
      assert.equal((await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`)).status, 403);
      const doc = await t.get(`/stac/info?url=${q('s3://private-cogs/item.json')}`);
      assert.equal(doc.status, 403);
      assert.match(((await doc.json()) as { detail: string }).detail, /access refused/);
    });
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      const res = await t.get(`/cog/info?url=${q('s3://private-cogs/missing.tif')}`);
      assert.equal(res.status, 404);
      assert.match(((await res.json()) as { detail: string }).detail, /not found/);
      assert.equal((await t.get(`/mosaicjson/info?url=${q('s3://private-cogs/missing.json')}`)).status, 404);
    });
  });

  it('answers 502 naming what to set when the server has no credentials, for rasters and documents alike, and sends nothing', async () => {
    await withTessera({}, store, async (t) => {
      recorder.reset();
      for (const url of [`/cog/info?url=${q('s3://private-cogs/cog.tif')}`, `/stac/info?url=${q('s3://private-cogs/item.json')}`]) {
        const res = await t.get(url);
        assert.equal(res.status, 502, url);
        assert.match(((await res.json()) as { detail: string }).detail, /no AWS credentials were found.*AWS_NO_SIGN_REQUEST=YES/, url);
      }
      assert.equal(recorder.requests.length, 0, 'nothing reached the store');
    });
  });

  it('signs with a session token, which the store checks', async () => {
    await withTessera(keyEnv(moto.keys.session), store, async (t) => {
      recorder.reset();
      assert.equal((await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`)).status, 200);
      assert.ok(recorder.requests.every((r) => r.headers['x-amz-security-token'] === moto.keys.session.session_token));
    });
    await withTessera(keyEnv({ ...moto.keys.session, session_token: 'expired-or-forged' }), store, async (t) => {
      // S3 answers 400 InvalidToken (ExpiredToken for an expired one): credentials refused, a 403 that names the store's code.
      const res = await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`);
      assert.equal(res.status, 403);
      assert.match(((await res.json()) as { detail: string }).detail, /access refused \(the store answered 400 InvalidToken\)/);
    });
  });

  it('sends x-amz-request-payer, signed, with AWS_REQUEST_PAYER=requester', async () => {
    await withTessera(keyEnv(moto.keys.reader), { ...store, s3RequestPayer: 'requester' }, async (t) => {
      recorder.reset();
      assert.equal((await t.get(`${TILE}?url=${q('s3://payer-cogs/cog.tif')}`)).status, 200);
      assert.ok(recorder.requests.length > 0);
      for (const r of recorder.requests) {
        assert.equal(r.headers['x-amz-request-payer'], 'requester');
        assert.match(String(r.headers['authorization']), /SignedHeaders=[^,]*x-amz-request-payer/);
      }
    });
  });

  it('reads a public bucket unsigned with AWS_NO_SIGN_REQUEST, looking for no credentials', async () => {
    await withTessera({}, { ...store, s3Endpoint: open.host, s3NoSignRequest: true }, async (t) => {
      const res = await t.get(`/cog/info?url=${q('s3://public-cogs/cog.tif')}`);
      assert.equal(res.status, 200, await res.clone().text());
    });
    // The same unsigned reads, sent to the server that checks signatures, carry none and are refused.
    await withTessera({}, { ...store, s3NoSignRequest: true }, async (t) => {
      recorder.reset();
      assert.notEqual((await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`)).status, 200);
      assert.ok(recorder.requests.length > 0);
      assert.ok(recorder.requests.every((r) => r.headers['authorization'] === undefined));
    });
  });

  it('refuses a bucket outside TESSERA_ALLOWED_BUCKETS with a 400 naming it, before any request', async () => {
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      recorder.reset();
      for (const path of [
        `/cog/info?url=${q('s3://other-cogs/cog.tif')}`,
        `/stac/info?url=${q('s3://other-cogs/item.json')}`,
        `/mosaicjson/info?url=${q('s3://other-cogs/mosaic.json')}`,
      ]) {
        const res = await t.get(path);
        assert.equal(res.status, 400, path);
        assert.match(((await res.json()) as { detail: string }).detail, /s3:\/\/other-cogs\/.* is not in the buckets TESSERA_ALLOWED_BUCKETS allows/);
      }
      assert.equal(recorder.requests.length, 0);
    });
  });

  it('reads a STAC item in the bucket whose assets are s3:// hrefs (absolute and relative)', async () => {
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      const info = await t.get(`/stac/info?url=${q('s3://private-cogs/item.json')}&assets=B01&assets=B09`);
      assert.equal(info.status, 200, await info.clone().text());
      const body = (await info.json()) as Record<string, { bounds: number[] }>;
      assert.deepEqual(Object.keys(body).sort(), ['B01', 'B09']);
      const bounds = await t.get(`/stac/bounds?url=${q('s3://private-cogs/item.json')}`);
      assert.equal(bounds.status, 200);
      const [minx, miny, maxx, maxy] = ((await bounds.json()) as { bounds: number[] }).bounds as [number, number, number, number];
      const stat = await t.get(`/stac/point/${(minx + maxx) / 2},${(miny + maxy) / 2}?url=${q('s3://private-cogs/item.json')}&assets=B01&assets=B09`);
      assert.equal(stat.status, 200, await stat.clone().text());
    });
  });

  it('reads a MosaicJSON document in the bucket whose entries are s3:// URLs', async () => {
    await withTessera(keyEnv(moto.keys.reader), store, async (t) => {
      const info = await t.get(`/mosaicjson/info?url=${q('s3://private-cogs/mosaic.json')}`);
      assert.equal(info.status, 200, await info.clone().text());
      const tile = await t.get(`/mosaicjson/tiles/WebMercatorQuad/9/150/182.png?url=${q('s3://private-cogs/mosaic.json')}`);
      assert.equal(tile.status, 200, tile.status === 200 ? '' : await tile.text());
      assert.equal(tile.headers.get('content-type'), 'image/png');
    });
  });

  it('reads gs:// through the S3-compatible XML API with HMAC keys (GS_ACCESS_KEY_ID, GS_SECRET_ACCESS_KEY)', async () => {
    const hmac = { GS_ACCESS_KEY_ID: moto.keys.reader.access_key_id, GS_SECRET_ACCESS_KEY: moto.keys.reader.secret_access_key };
    const settings = { ...store, gsEndpoint: `http://${recorder.host}`, allowedBuckets: ['gs://private-cogs'] };
    await withTessera(hmac, settings, async (t) => {
      recorder.reset();
      const res = await t.get(`${TILE}?url=${q('gs://private-cogs/cog.tif')}`);
      assert.equal(res.status, 200, res.status === 200 ? '' : await res.text());
      assert.ok(recorder.requests.length > 0);
      for (const r of recorder.requests) assert.match(String(r.headers['authorization']), /Credential=[^/]+\/\d{8}\/auto\/s3\/aws4_request/);
      // The allow-list is per scheme: the same bucket as s3:// is not allowed by gs://.
      assert.equal((await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`)).status, 400);
    });
    await withTessera({ GS_ACCESS_KEY_ID: moto.keys.nobody.access_key_id, GS_SECRET_ACCESS_KEY: moto.keys.nobody.secret_access_key }, settings, async (t) => {
      assert.equal((await t.get(`/cog/info?url=${q('gs://private-cogs/cog.tif')}`)).status, 403);
    });
  });

  it('tessera mosaic create takes s3:// COGs, and its document names them as given', async () => {
    const env = {
      ...keyEnv(moto.keys.reader),
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
      AWS_CONFIG_FILE: '/nonexistent',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_S3_ENDPOINT: recorder.host,
      AWS_HTTPS: 'NO',
      AWS_VIRTUAL_HOSTING: 'FALSE',
      TESSERA_ALLOWED_BUCKETS: 's3://private-cogs',
      TESSERA_ALLOWED_NETWORKS: '127.0.0.0/8',
    };
    const urls = ['s3://private-cogs/cog1.tif', 's3://private-cogs/cog2.tif'];
    const made = await run(process.execPath, [BUILT_CLI, 'mosaic', 'create', '--minzoom', '7', '--maxzoom', '9'], { input: urls.join('\n'), env });
    assert.equal(made.status, 0, made.stderr);
    const doc = JSON.parse(made.stdout) as { tiles: Record<string, string[]> };
    assert.deepEqual([...new Set(Object.values(doc.tiles).flat())].sort(), urls);
    const refused = await run(process.execPath, [BUILT_CLI, 'mosaic', 'create'], { input: 's3://other-cogs/cog.tif', env });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /TESSERA_ALLOWED_BUCKETS/);
  });

  it('with the gateway off, reads documents with its own credential chain and refuses rasters with a 400 naming the setting', async () => {
    await withTessera(keyEnv(moto.keys.reader), { ...store, upstreamGateway: false }, async (t) => {
      const doc = await t.get(`/mosaicjson/info?url=${q('s3://private-cogs/mosaic.json')}`);
      assert.equal(doc.status, 200, await doc.clone().text());
      const raster = await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`);
      assert.equal(raster.status, 400);
      assert.match(((await raster.json()) as { detail: string }).detail, /TESSERA_UPSTREAM_GATEWAY is off/);
    });
  });

  it('fetches credentials from the chain once, for GDAL reads and documents alike', async () => {
    // Container credentials (ECS, EKS Pod Identity): the AWS SDK's provider asks this address for them.
    let fetches = 0;
    const expiration = new Date(Date.now() + 3600_000).toISOString();
    const creds = http.createServer((_req, res) => {
      fetches++;
      // A role's temporary credentials, as ECS and EKS hand them out.
      const k = moto.keys.session;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ AccessKeyId: k.access_key_id, SecretAccessKey: k.secret_access_key, Token: k.session_token, Expiration: expiration }));
    });
    await new Promise<void>((resolve) => creds.listen(0, '127.0.0.1', resolve));
    try {
      const env = { AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${(creds.address() as AddressInfo).port}/creds` };
      await withTessera(env, store, async (t) => {
        const info = await t.get(`/cog/info?url=${q('s3://private-cogs/cog.tif')}`);
        assert.equal(info.status, 200, await info.text());
        assert.equal((await t.get(`${TILE}?url=${q('s3://private-cogs/cog.tif')}`)).status, 200);
        assert.equal((await t.get(`/stac/info?url=${q('s3://private-cogs/item.json')}&assets=B01`)).status, 200);
        assert.equal((await t.get(`/mosaicjson/info?url=${q('s3://private-cogs/mosaic.json')}`)).status, 200);
      });
      assert.equal(fetches, 1);
    } finally {
      await new Promise((resolve) => creds.close(resolve));
    }
  });
  it('fetches credentials again once they near expiry, once for the process', async () => {
    // Container credentials that expire 5 min 3 s from now (kept until 5 min before), then fresh ones for an hour.
    const expirations: number[] = [];
    const creds = http.createServer((_req, res) => {
      const k = moto.keys.session;
      const expiration = Date.now() + (expirations.length === 0 ? 5 * 60_000 + 3_000 : 3600_000);
      expirations.push(expiration);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          AccessKeyId: k.access_key_id,
          SecretAccessKey: k.secret_access_key,
          Token: k.session_token,
          Expiration: new Date(expiration).toISOString(),
        }),
      );
    });
    await new Promise<void>((resolve) => creds.listen(0, '127.0.0.1', resolve));
    try {
      const env = { AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${(creds.address() as AddressInfo).port}/creds` };
      await withTessera(env, store, async (t) => {
        const read = async (key: string): Promise<void> => {
          const res = await t.get(`/cog/info?url=${q(`s3://private-cogs/${key}`)}`);
          assert.equal(res.status, 200, await res.text());
        };
        await read('cog.tif');
        await read('cog1.tif');
        assert.equal(expirations.length, 1);
        // Past the first credentials' refresh point: the next signed reads fetch new ones, once, for GDAL's reads and documents alike.
        await new Promise((r) => setTimeout(r, Math.max(0, expirations[0]! - 5 * 60_000 - Date.now()) + 500));
        await read('cog2.tif');
        assert.equal((await t.get(`/mosaicjson/info?url=${q('s3://private-cogs/mosaic.json')}`)).status, 200);
        await read('B01.tif');
        assert.equal(expirations.length, 2);
      });
    } finally {
      await new Promise((resolve) => creds.close(resolve));
    }
  });
});

describe('object stores: az:// against Azurite, which checks SAS and shared-key signatures', () => {
  let azurite: Azurite;
  let tmp: string;
  let files: FileServer;
  let connection: string;
  /** A read-only SAS for the container `cogs`, made with the account key as a data owner would. */
  let sas: string;

  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-azurite-'));
    azurite = await startAzurite(tmp);
    files = await startFileServer(FIXTURES);
    connection = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${azurite.blobEndpoint};`;
    const service = BlobServiceClient.fromConnectionString(connection);
    for (const name of ['cogs', 'other']) {
      const container = service.getContainerClient(name);
      await container.create();
      await container.getBlockBlobClient('cog.tif').uploadFile(path.join(FIXTURES, 'cog.tif'));
    }
    sas = generateBlobSASQueryParameters(
      { containerName: 'cogs', permissions: ContainerSASPermissions.parse('r'), expiresOn: new Date(Date.now() + 3600_000) },
      new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
    ).toString();
  });

  after(async () => {
    await Promise.all([azurite?.close(), files?.close()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const settings = (): Partial<Settings> => ({ azureBlobEndpoint: azurite.blobEndpoint, allowedBuckets: ['az://cogs'] });

  it('reads a COG with a SAS token: the same pixels as over https', async () => {
    const overHttps = await withTessera({}, {}, async (t) => Buffer.from(await (await t.get(`${TILE}?url=${q(`${files.url}/cog.tif`)}`)).arrayBuffer()));
    await withTessera({ AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN: sas }, settings(), async (t) => {
      const info = await t.get(`/cog/info?url=${q('az://cogs/cog.tif')}`);
      assert.equal(info.status, 200, await info.clone().text());
      const tile = await t.get(`${TILE}?url=${q('az://cogs/cog.tif')}`);
      assert.equal(tile.status, 200);
      assert.deepEqual(Buffer.from(await tile.arrayBuffer()), overHttps);
      const missing = await t.get(`/cog/info?url=${q('az://cogs/missing.tif')}`);
      assert.equal(missing.status, 404, await missing.clone().text());
    });
  });

  it('reads with a shared key from a connection string, and answers 403 for a wrong key', async () => {
    await withTessera({ AZURE_STORAGE_CONNECTION_STRING: connection }, settings(), async (t) => {
      const res = await t.get(`${TILE}?url=${q('az://cogs/cog.tif')}`);
      assert.equal(res.status, 200, res.status === 200 ? '' : await res.text());
    });
    const wrong = Buffer.alloc(64, 7).toString('base64');
    await withTessera({ AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_ACCESS_KEY: wrong }, settings(), async (t) => {
      const res = await t.get(`/cog/info?url=${q('az://cogs/cog.tif')}`);
      assert.equal(res.status, 403);
      assert.match(
        ((await res.json()) as { detail: string }).detail,
        /az:\/\/cogs\/cog\.tif.*access refused \(the store answered 403 (AuthorizationFailure|AuthenticationFailed)\)/,
      );
    });
  });

  it("reads https://ACCOUNT.blob.core.windows.net URLs of the server's account as az:// in allowed containers, and lends no credentials elsewhere", async (ctx) => {
    // A recording proxy in front of Azurite: the Blob endpoint tessera is told the account is served at, as an emulator or a private endpoint is.
    const recorder = await startRecorder(new URL(azurite.blobEndpoint).host);
    const endpoint = `http://${recorder.host}/${AZURITE_ACCOUNT}`;
    const signed = (r: Recorder['requests'][number]): boolean => new URL(r.path, 'http://x').searchParams.has('sig');
    try {
      const env = { AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN: sas };
      await withTessera(env, { azureBlobEndpoint: endpoint, allowedBuckets: ['az://cogs'] }, async (t) => {
        // Cold: the public form is read from the account's endpoint with the SAS.
        const publicUrl = `https://${AZURITE_ACCOUNT}.blob.core.windows.net/cogs/cog.tif`;
        recorder.reset();
        const info = await t.get(`/cog/info?url=${q(publicUrl)}`);
        assert.equal(info.status, 200, await info.clone().text());
        const tile = await t.get(`${TILE}?url=${q(publicUrl)}`);
        assert.equal(tile.status, 200);
        assert.ok(recorder.requests.length > 0);
        for (const r of recorder.requests) assert.ok(signed(r) && r.path.startsWith(`/${AZURITE_ACCOUNT}/cogs/cog.tif?`), r.path);
        const body = await info.json();
        const pixels = Buffer.from(await tile.arrayBuffer());
        // The az:// URL and the emulator's own address name the same object: the same answers.
        for (const url of ['az://cogs/cog.tif', `${endpoint}/cogs/cog.tif`]) {
          const again = await t.get(`/cog/info?url=${q(url)}`);
          assert.equal(again.status, 200, url);
          assert.deepEqual(await again.json(), body, url);
          assert.deepEqual(Buffer.from(await (await t.get(`${TILE}?url=${q(url)}`)).arrayBuffer()), pixels, url);
        }
        assert.ok(recorder.requests.every(signed));
        // A container outside the allow-list, at the emulator's address: read as plain http, with no SAS; Azurite refuses it.
        recorder.reset();
        const other = await t.get(`/cog/info?url=${q(`${endpoint}/other/cog.tif`)}`);
        assert.ok(other.status >= 400 && other.status < 500, `${other.status} ${await other.clone().text()}`);
        const otherDetail = ((await other.json()) as { detail: string }).detail;
        assert.match(otherDetail, /other\/cog\.tif/);
        assert.ok(recorder.requests.length > 0);
        assert.ok(recorder.requests.every((r) => !signed(r)));
        // The same at the account's public address is an ordinary https URL (no network here: it is not reached); nothing reaches the account's endpoint.
        recorder.reset();
        const publicOther = await t.get(`/cog/info?url=${q(`https://${AZURITE_ACCOUNT}.blob.core.windows.net/other/cog.tif`)}`);
        assert.notEqual(publicOther.status, 200);
        const publicDetail = ((await publicOther.json()) as { detail: string }).detail;
        assert.match(publicDetail, /^https:\/\/devstoreaccount1\.blob\.core\.windows\.net\/other\/cog\.tif/);
        assert.equal(recorder.requests.length, 0);
        ctx.diagnostic(`not allowed: at the emulator ${other.status} ${otherDetail}; at the public address ${publicOther.status} ${publicDetail}`);
      });
    } finally {
      await recorder.close();
    }
  });

  it('refuses a container outside TESSERA_ALLOWED_BUCKETS', async () => {
    await withTessera({ AZURE_STORAGE_CONNECTION_STRING: connection }, settings(), async (t) => {
      const res = await t.get(`/cog/info?url=${q('az://other/cog.tif')}`);
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { detail: string }).detail, /TESSERA_ALLOWED_BUCKETS/);
    });
  });
});

describe('object stores: gs:// with OAuth from a service account (GOOGLE_APPLICATION_CREDENTIALS)', () => {
  let gcs: GcsEmulator;
  let standIn: OAuthStandIn;
  let files: FileServer;
  let tmp: string;
  /** The service account's key file, its token_uri the stand-in's token endpoint. */
  let keyFile: string;
  /** Another service account's key, which the token endpoint does not know. */
  let strangerFile: string;

  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-gcs-'));
    const mosaic = JSON.parse(readFileSync(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as { tiles: Record<string, string[]> };
    for (const [qk, list] of Object.entries(mosaic.tiles)) mosaic.tiles[qk] = list.map((name) => `gs://oauth-cogs/${name}`);
    writeFileSync(path.join(tmp, 'mosaic.json'), JSON.stringify(mosaic));
    gcs = await startGcsEmulator('oauth-cogs', {
      'mosaic.json': path.join(tmp, 'mosaic.json'),
      'cog.tif': path.join(FIXTURES, 'cog.tif'),
      'cog1.tif': path.join(FIXTURES, 'cog1.tif'),
      'B01.tif': path.join(FIXTURES, 'B01.tif'),
    });
    const email = 'tessera-reader@example-project.iam.gserviceaccount.com';
    const account = generateKeyPairSync('rsa', { modulusLength: 2048 });
    standIn = await startOAuthStandIn({ email, publicKey: account.publicKey }, new URL(gcs.endpoint).host);
    const keyJson = (privateKey: KeyObject): string =>
      JSON.stringify({
        type: 'service_account',
        project_id: 'example-project',
        private_key_id: 'k1',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: email,
        token_uri: standIn.tokenUri,
      });
    keyFile = path.join(tmp, 'service-account.json');
    writeFileSync(keyFile, keyJson(account.privateKey));
    strangerFile = path.join(tmp, 'stranger.json');
    writeFileSync(strangerFile, keyJson(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey));
    files = await startFileServer(FIXTURES);
  });

  after(async () => {
    await Promise.all([gcs?.close(), standIn?.close(), files?.close()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const settings = (): Partial<Settings> => ({ gsEndpoint: `http://${standIn.storeHost}`, allowedBuckets: ['gs://oauth-cogs'] });

  it('reads with a bearer token from the token endpoint, fetched once: the same pixels as over https', async () => {
    const overHttps = await withTessera({}, {}, async (t) => Buffer.from(await (await t.get(`${TILE}?url=${q(`${files.url}/cog.tif`)}`)).arrayBuffer()));
    standIn.lifetimeSeconds = 3600;
    const issuedBefore = standIn.issued.length;
    await withTessera({ GOOGLE_APPLICATION_CREDENTIALS: keyFile }, settings(), async (t) => {
      standIn.requests.splice(0);
      const info = await t.get(`/cog/info?url=${q('gs://oauth-cogs/cog.tif')}`);
      assert.equal(info.status, 200, await info.clone().text());
      const tile = await t.get(`${TILE}?url=${q('gs://oauth-cogs/cog.tif')}`);
      assert.equal(tile.status, 200);
      assert.deepEqual(Buffer.from(await tile.arrayBuffer()), overHttps);
      assert.equal((await t.get(`/cog/info?url=${q('gs://oauth-cogs/B01.tif')}`)).status, 200);
      // A document, read by the main thread with the token the gateway's thread holds.
      const doc = await t.get(`/mosaicjson/info?url=${q('gs://oauth-cogs/mosaic.json')}`);
      assert.equal(doc.status, 200, await doc.clone().text());
      const missing = await t.get(`/cog/info?url=${q('gs://oauth-cogs/missing.tif')}`);
      assert.equal(missing.status, 404, await missing.clone().text());
      assert.equal(standIn.issued.length - issuedBefore, 1, 'one token for every read of the process');
      const token = standIn.issued.at(-1);
      assert.ok(standIn.requests.length > 0);
      for (const r of standIn.requests) assert.equal(r.authorization, `Bearer ${token}`, r.path);
    });
  });

  it('fetches a new token once the last nears expiry', async () => {
    // Tokens that last 5 min 1.5 s: kept until 5 min before, then a new one.
    standIn.lifetimeSeconds = 301.5;
    const issuedBefore = standIn.issued.length;
    try {
      await withTessera({ GOOGLE_APPLICATION_CREDENTIALS: keyFile }, settings(), async (t) => {
        assert.equal((await t.get(`/cog/info?url=${q('gs://oauth-cogs/cog.tif')}`)).status, 200);
        assert.equal(standIn.issued.length - issuedBefore, 1);
        standIn.lifetimeSeconds = 3600;
        await new Promise((r) => setTimeout(r, 2000));
        standIn.requests.splice(0);
        assert.equal((await t.get(`/cog/info?url=${q('gs://oauth-cogs/cog1.tif')}`)).status, 200);
        assert.equal((await t.get(`/cog/info?url=${q('gs://oauth-cogs/B01.tif')}`)).status, 200);
        assert.equal(standIn.issued.length - issuedBefore, 2);
        assert.ok(standIn.requests.every((r) => r.authorization === `Bearer ${standIn.issued.at(-1)}`));
      });
    } finally {
      standIn.lifetimeSeconds = 3600;
    }
  });

  it('answers 403 when the token endpoint refuses the service account, and sends nothing to the store', async () => {
    await withTessera({ GOOGLE_APPLICATION_CREDENTIALS: strangerFile }, settings(), async (t) => {
      standIn.requests.splice(0);
      const res = await t.get(`/cog/info?url=${q('gs://oauth-cogs/cog.tif')}`);
      assert.equal(res.status, 403, await res.clone().text());
      assert.match(((await res.json()) as { detail: string }).detail, /refused by its token endpoint \(400 invalid_grant: Invalid JWT Signature\.\)/);
      assert.equal(standIn.requests.length, 0);
    });
  });
});
