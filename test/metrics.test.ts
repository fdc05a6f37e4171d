/**
 * /metrics as Prometheus reads it: the text is parsed by the reference parser (prometheus-client's,
 * from PyPI, in the parity venv), and the counters move with the requests made between two
 * scrapes: requests by family, route and status; upstream requests and bytes per host for both
 * documents and GDAL's reads; cache hits; GDAL handles; process and event-loop metrics.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fixtureItem, startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { REPO_ROOT } from './helpers/paths.js';

const PYTHON = path.join(REPO_ROOT, '.parity/venv/bin/python');

interface Sample {
  name: string;
  labels: Record<string, string>;
  /** null for NaN and ±Inf. */
  value: number | null;
}

/** Every sample of a scrape, as prometheus-client's text parser reads it (it throws on bad text). */
function parse(text: string): Sample[] {
  const script = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        # NaN is a valid sample (prom-client's event-loop mean between two quick scrapes), not JSON
        out.append({"name": s.name, "labels": s.labels, "value": s.value if math.isfinite(s.value) else None})
print(json.dumps(out))
`;
  const run = spawnSync(PYTHON, ['-c', script], { input: text, encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, `the Prometheus parser refused the text: ${run.stderr}`);
  return JSON.parse(run.stdout) as Sample[];
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + (s.value ?? NaN), 0);
}

describe('/metrics', () => {
  let files: FileServer;
  let tessera: RunningTessera;
  let host: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    tessera = await startTessera();
    host = new URL(files.url).host;
  });
  after(async () => {
    await tessera?.close();
    await files?.close();
  });

  const scrape = async (): Promise<Sample[]> => {
    const res = await tessera.get('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  };

  it('parses as Prometheus text and its counters follow the requests', async () => {
    const before = await scrape();
    const item = encodeURIComponent(`${files.url}/item.json`);
    const cog = encodeURIComponent(`${files.url}/B01.tif`);
    assert.equal((await tessera.get(`/cog/info?url=${cog}`)).status, 200);
    assert.equal((await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,1000`)).status, 200);
    assert.equal((await tessera.get(`/stac/info?url=${item}`)).status, 200);
    assert.equal((await tessera.get(`/stac/info?url=${item}`)).status, 200);
    assert.equal((await tessera.get(`/cog/info?url=${encodeURIComponent(`${files.url}/missing.tif`)}`)).status, 404);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}): number => value(after, name, labels) - value(before, name, labels);

    assert.equal(moved('tessera_http_requests_total', { family: 'cog', route: '/cog/info', status: '200' }), 1);
    assert.equal(moved('tessera_http_requests_total', { family: 'cog', route: '/cog/info', status: '404' }), 1);
    assert.equal(moved('tessera_http_requests_total', { family: 'stac', route: '/stac/info', status: '200' }), 2);
    assert.equal(moved('tessera_http_requests_total', { family: 'metrics' }), 1, 'the first scrape counted');
    assert.ok(moved('tessera_http_request_duration_seconds_count', { family: 'cog', status: '200' }) >= 2);
    assert.ok(moved('tessera_http_response_bytes_total', { family: 'cog' }) > 100, 'bytes sent');

    assert.ok(moved('tessera_upstream_requests_total', { kind: 'gdal', host }) >= 1, 'GDAL reads counted per host');
    assert.ok(moved('tessera_upstream_bytes_total', { kind: 'gdal', host }) > 1000, 'raster bytes received');
    assert.ok(moved('tessera_upstream_answers_total', { kind: 'gdal', host, status: '4xx' }) >= 1, 'the missing file answered 404');
    // tessera's own: the item once, and the missing file's first bytes (to say why it does not open).
    assert.equal(moved('tessera_upstream_requests_total', { kind: 'direct', host }), 2);
    assert.ok(moved('tessera_upstream_seconds_total', { kind: 'direct', host }) > 0);
    assert.equal(moved('tessera_cache_hits_total', { cache: 'documents' }), 1, 'the second /stac/info from the document cache');
    assert.ok(moved('tessera_cache_hits_total', { cache: 'raster_metadata' }) >= 1);

    assert.ok(value(after, 'tessera_gdal_handles_open') >= 1, 'pooled GDAL handles');
    assert.equal(value(after, 'tessera_gdal_handles_busy'), 0, 'none in use between requests');
    assert.equal(value(after, 'tessera_whole_image_waiting'), 0);
    assert.equal(value(after, 'tessera_http_requests_in_flight'), 1, 'the scrape itself');
    assert.ok(value(after, 'process_resident_memory_bytes') > 10_000_000, 'process metrics');
    assert.ok(
      after.some((s) => s.name.startsWith('nodejs_eventloop_lag')),
      'event-loop lag',
    );
  });

  it("counts reads warm or cold by their handle's block cache, and upstream latency per host as a histogram", async () => {
    const before = await scrape();
    const cog = encodeURIComponent(`${files.url}/B09.tif`);
    // The same tile twice under two renderings (two tile-cache keys): the second read finds the
    // blocks the first read on the same handle.
    assert.equal((await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,1000`)).status, 200);
    assert.equal((await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,2000`)).status, 200);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}): number => value(after, name, labels) - value(before, name, labels);
    assert.ok(moved('tessera_cache_misses_total', { cache: 'gdal_blocks' }) >= 1, 'the first read fetched its blocks');
    assert.ok(moved('tessera_gdal_reads_total', { blocks: 'cold' }) >= 1);
    assert.ok(moved('tessera_gdal_reads_total', { blocks: 'warm' }) >= 1, 'the second read found them');
    assert.equal(
      moved('tessera_cache_hits_total', { cache: 'gdal_blocks' }),
      moved('tessera_cache_misses_total', { cache: 'gdal_blocks' }),
      "the second read's blocks are the first's",
    );

    const h = { kind: 'gdal', host };
    const count = value(after, 'tessera_upstream_request_duration_seconds_count', h);
    assert.ok(count >= 1, 'GDAL reads timed per host');
    assert.equal(count, value(after, 'tessera_upstream_requests_total', h), 'one observation per request');
    assert.equal(value(after, 'tessera_upstream_request_duration_seconds_bucket', { ...h, le: '+Inf' }), count);
    assert.ok(value(after, 'tessera_upstream_request_duration_seconds_bucket', { ...h, le: '0.005' }) <= count);
    assert.ok(
      Math.abs(value(after, 'tessera_upstream_request_duration_seconds_sum', h) - value(after, 'tessera_upstream_seconds_total', h)) < 1e-9,
      'the sum is the seconds counted',
    );
  });

  it('has every tessera metric it serves documented in docs/deploy.md', async () => {
    const text = await (await tessera.get('/metrics')).text();
    const served = [...text.matchAll(/^# TYPE (tessera_\w+) /gm)].map((m) => m[1]!);
    assert.ok(served.length >= 10, `tessera's metrics: ${served.join(' ')}`);
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
    // The table names families by a shared stem: `tessera_gdal_handles_open`, `_busy` …
    const named = new Set<string>();
    for (const row of doc.matchAll(/^\| (.+?) \|/gm)) {
      let stem = '';
      for (const m of row[1]!.matchAll(/`(tessera_\w+|_\w+)`/g)) {
        const name = m[1]!;
        if (name.startsWith('tessera_')) {
          named.add(name);
          stem = name.replace(/_[a-z]+(_total)?$/, '');
        } else named.add(`${stem}${name}`);
      }
    }
    assert.deepEqual(
      served.filter((name) => !named.has(name)),
      [],
      'served but not in docs/deploy.md',
    );
  });

  it('is not in the API document and is never cached', async () => {
    const doc = (await (await tessera.get('/api')).json()) as { paths: Record<string, unknown> };
    assert.equal(doc.paths['/metrics'], undefined);
    assert.equal((await tessera.get('/metrics')).headers.get('cache-control'), 'no-store');
  });
});
