/**
 * /api is a valid OpenAPI 3.1 document (a standard validator, swagger-parser, finds no error) that
 * lists the route families a TiTiler client uses, in TiTiler's URL forms, every route with a tag, a
 * summary and its media types, every parameter described and typed; /api.html shows the same. A
 * second validator (openapi-spec-validator, PyPI, tools/parity/openapi-validator.sh) agrees.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { REPO_ROOT } from './helpers/paths.js';

interface OpenApi {
  tags: Array<{ name: string }>;
  paths: Record<
    string,
    Record<
      string,
      {
        summary?: string;
        tags?: string[];
        parameters?: Array<{ name: string; description?: string; schema?: { type?: unknown; enum?: unknown[]; anyOf?: unknown } }>;
        responses: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
}

describe('OpenAPI document', () => {
  let tessera: RunningTessera;
  before(async () => {
    tessera = await startTessera();
  });
  after(async () => {
    await tessera?.close();
  });

  it("validates as OpenAPI 3.1 and lists every family's routes, the forms without a grid marked deprecated", async () => {
    const doc = (await (await tessera.get('/api')).json()) as { openapi: string; paths: Record<string, Record<string, { deprecated?: boolean }>> };
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    for (const path of [
      '/cog/tiles/{tileMatrixSetId}/{z}/{x}/{y}@{scale}x.{format}',
      '/cog/tiles/{z}/{x}/{y}',
      '/cog/{tileMatrixSetId}/tilejson.json',
      '/cog/statistics',
      '/stac/tilejson.json',
      '/mosaicjson/WMTSCapabilities.xml',
      '/cog/map',
    ]) {
      assert.ok(doc.paths[path], `${path} is in the document`);
    }
    for (const path of ['/cog/map', '/cog/tiles/{z}/{x}/{y}', '/stac/tilejson.json', '/mosaicjson/WMTSCapabilities.xml']) {
      assert.equal(doc.paths[path]!['get']!.deprecated, true, `${path} is marked deprecated, as TiTiler marks it`);
    }
    assert.equal(doc.paths['/cog/tiles/{tileMatrixSetId}/{z}/{x}/{y}@{scale}x.{format}']!['get']!.deprecated, undefined);
  });

  it("documents every route: a family tag, a summary, media types, every parameter described and typed; TiTiler's URL forms", async () => {
    const doc = (await (await tessera.get('/api')).json()) as OpenApi;
    const families = [
      'Cloud Optimized GeoTIFF',
      'SpatioTemporal Asset Catalog',
      'MosaicJSON',
      'Tiling Schemes',
      'Algorithms',
      'ColorMaps',
      'Health Check',
      'OGC Common',
    ];
    assert.deepEqual(
      doc.tags.map((t) => t.name),
      families,
    );
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      assert.doesNotMatch(path, /\{(last|\*|lonlat|coords|sizeformat)\}/, `${path}: a catch-all segment is documented as the forms it matches`);
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        operations++;
        assert.ok(op.summary && op.summary.length > 5, `${where} has a summary`);
        assert.equal(op.tags?.length, 1, `${where} has a tag`);
        assert.ok(families.includes(op.tags![0]!), `${where}: tag ${op.tags![0]}`);
        const media = Object.keys(op.responses['200']?.content ?? {});
        assert.ok(media.length > 0, `${where} names what it answers with`);
        for (const p of op.parameters ?? []) {
          assert.ok(p.description && p.description.length > 5, `${where}: parameter ${p.name} is described`);
          assert.ok(
            p.schema && (p.schema.type !== undefined || p.schema.enum !== undefined || p.schema.anyOf !== undefined),
            `${where}: parameter ${p.name} has a type`,
          );
        }
      }
    }
    assert.ok(operations > 80, `${operations} operations`);
    // Tiles: TiTiler's four URL forms, their media types, the format's enum.
    for (const form of ['{y}@{scale}x.{format}', '{y}@{scale}x', '{y}.{format}', '{y}']) {
      const op = doc.paths[`/stac/tiles/{tileMatrixSetId}/{z}/{x}/${form}`]?.['get'];
      assert.ok(op, `/stac/tiles/…/${form} is documented`);
      assert.ok('image/png' in op.responses['200']!.content! && 'image/jpeg' in op.responses['200']!.content!);
    }
    const format = doc.paths['/cog/preview.{format}']!['get']!.parameters!.find((p) => p.name === 'format');
    assert.ok(format?.schema?.enum?.includes('webp'));
    assert.ok(
      doc.paths['/cog/point/{lon},{lat}'] &&
        doc.paths['/mosaicjson/{minx},{miny},{maxx},{maxy}/assets'] &&
        doc.paths['/cog/bbox/{minx},{miny},{maxx},{maxy}/{width}x{height}.{format}'],
    );
    assert.ok('text/html' in doc.paths['/cog/viewer']!['get']!.responses['200']!.content!);
    assert.ok('application/geo+json' in doc.paths['/cog/statistics']!['post']!.responses['200']!.content!);
  });

  it('describes the JSON answers as they are: real answers validate against the documented schemas', async () => {
    const doc = (await (await tessera.get('/api')).json()) as OpenApi & { components: { schemas: Record<string, object> } };
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    const files: FileServer = await startFileServer(FIXTURES);
    try {
      const url = encodeURIComponent(`${files.url}/TCI.tif`);
      const checks: Array<[string, string]> = [
        ['/cog/info', `/cog/info?url=${url}`],
        ['/cog/bounds', `/cog/bounds?url=${url}`],
        ['/cog/{tileMatrixSetId}/tilejson.json', `/cog/WebMercatorQuad/tilejson.json?url=${url}`],
        ['/cog/statistics', `/cog/statistics?url=${url}&max_size=64`],
        ['/cog/point/{lon},{lat}', `/cog/point/23.85,32.0?url=${url}`],
        ['/cog/validate', `/cog/validate?url=${url}`],
        ['/cog/stac', `/cog/stac?url=${url}&max_size=64`],
      ];
      for (const [path, request] of checks) {
        const schema = (doc.paths[path]!['get']!.responses['200']!.content!['application/json'] as { schema: { $ref?: string } }).schema;
        assert.ok(schema.$ref, `${path} names a schema`);
        const res = await tessera.get(request);
        assert.equal(res.status, 200, request);
        const validate = ajv.getSchema(schema.$ref!)!;
        assert.ok(validate(await res.json()), `${request}: ${JSON.stringify(validate.errors)}`);
      }
      const bad = await tessera.get('/cog/info');
      assert.equal(bad.status, 422);
      assert.ok(ajv.getSchema('#/components/schemas/ValidationError')!(await bad.json()), 'a 422 is the documented error list');
    } finally {
      await files.close();
    }
  });

  it('passes a second validator (openapi-spec-validator), and every path template has exactly its path parameters', async () => {
    const doc = (await (await tessera.get('/api')).json()) as OpenApi;
    const mismatched: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      const named = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
      for (const [method, op] of Object.entries(operations)) {
        const declared = (op.parameters ?? [])
          .filter((p) => (p as { in?: string }).in === 'path')
          .map((p) => p.name)
          .sort();
        if (named.join() !== declared.join()) mismatched.push(`${method} ${template}: declares ${declared.join(',')}`);
      }
    }
    assert.deepEqual(mismatched, []);
    const python = execFileSync('bash', [path.join(REPO_ROOT, 'tools/parity/openapi-validator.sh')], { encoding: 'utf8' }).trim();
    const script = 'import json,sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(sys.stdin))\nprint("valid")';
    const run = spawnSync(python, ['-c', script], { input: JSON.stringify(doc), encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, run.stderr.slice(-3000));
    assert.equal(run.stdout.trim(), 'valid');
  });

  it('marks the forms of each TiTiler generation, and documents the colliding routes as the setting chose, under both settings', async () => {
    type Op = { summary?: string; description?: string; 'x-titiler-generation'?: string; responses: Record<string, { content?: Record<string, unknown> }> };
    const v2 = await startTessera({ titilerApi: '2' });
    try {
      const doc018 = (await (await tessera.get('/api')).json()) as { paths: Record<string, Record<string, Op>> };
      const doc2 = (await (await v2.get('/api')).json()) as { paths: Record<string, Record<string, Op>>; info: { description: string } };
      await SwaggerParser.validate(structuredClone(doc2) as never);
      const python = execFileSync('bash', [path.join(REPO_ROOT, 'tools/parity/openapi-validator.sh')], { encoding: 'utf8' }).trim();
      const script = 'import json,sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(sys.stdin))\nprint("valid")';
      const run = spawnSync(python, ['-c', script], { input: JSON.stringify(doc2), encoding: 'utf8', timeout: 120_000 });
      assert.equal(run.status, 0, run.stderr.slice(-3000));
      assert.match(doc2.info.description, /TiTiler 2\.x \(TESSERA_TITILER_API=2\)/);
      for (const doc of [doc018, doc2]) {
        assert.equal(doc.paths['/cog/tiles/{tileMatrixSetId}/{z}/{x}/{y}@{scale}x.{format}']!['get']!['x-titiler-generation'], '0.18');
        assert.equal(doc.paths['/cog/tiles/{tileMatrixSetId}']!['get']!['x-titiler-generation'], '2');
        assert.equal(doc.paths['/stac/{tileMatrixSetId}/map.html']!['get']!['x-titiler-generation'], '2');
        assert.equal(doc.paths['/conformance']!['get']!['x-titiler-generation'], '2');
        assert.ok('text/html' in doc.paths['/cog/tiles']!['get']!.responses['200']!.content!);
      }
      // The colliding routes: documented as the setting chose, saying what the other value answers.
      const map018 = doc018.paths['/cog/map']!['get']!;
      const map2 = doc2.paths['/cog/map']!['get']!;
      assert.equal(map018['x-titiler-generation'], '0.18');
      assert.ok('text/html' in map018.responses['200']!.content!);
      assert.match(map018.description ?? '', /with 2: OGC API – Maps/);
      assert.equal(map2['x-titiler-generation'], '2');
      assert.ok('image/png' in map2.responses['200']!.content!);
      // The mosaic's OGC API – Maps image (MosaicTilerFactory's add_ogc_maps) under 2, its 0.18 map page otherwise.
      assert.equal(doc2.paths['/mosaicjson/map']!['get']!['x-titiler-generation'], '2');
      assert.equal(doc2.paths['/cog/WMTSCapabilities.xml']!['get']!['x-titiler-generation'], '2');
    } finally {
      await v2.close();
    }
  });

  it('shows the same document at /api.html', async () => {
    const page = await tessera.get('/api.html/json');
    assert.equal(page.status, 200);
    const doc = (await page.json()) as OpenApi;
    assert.ok(doc.paths['/cog/tiles/{z}/{x}/{y}'], "the completed document, not the plugin's raw one");
    assert.equal(doc.paths['/cog/info']!['get']!.tags![0], 'Cloud Optimized GeoTIFF');
  });
});
