/**
 * /api is a valid OpenAPI 3.1 document (a standard validator, swagger-parser, finds no error), and
 * lists the route families a TiTiler client uses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

describe('OpenAPI document', () => {
  let tessera: RunningTessera;
  before(async () => {
    tessera = await startTessera();
  });
  after(async () => {
    await tessera?.close();
  });

  it('validates as OpenAPI 3.1 and lists every family\'s routes, the forms without a grid marked deprecated', async () => {
    const doc = (await (await tessera.get('/api')).json()) as { openapi: string; paths: Record<string, Record<string, { deprecated?: boolean }>> };
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    for (const path of [
      '/cog/tiles/{tileMatrixSetId}/{z}/{x}/{last}',
      '/cog/tiles/{z}/{x}/{last}',
      '/cog/{tileMatrixSetId}/tilejson.json',
      '/cog/statistics',
      '/stac/tilejson.json',
      '/mosaicjson/WMTSCapabilities.xml',
      '/cog/map',
    ]) {
      assert.ok(doc.paths[path], `${path} is in the document`);
    }
    for (const path of ['/cog/map', '/cog/tiles/{z}/{x}/{last}', '/stac/tilejson.json', '/mosaicjson/WMTSCapabilities.xml']) {
      assert.equal(doc.paths[path]!['get']!.deprecated, true, `${path} is marked deprecated, as TiTiler marks it`);
    }
    assert.equal(doc.paths['/cog/tiles/{tileMatrixSetId}/{z}/{x}/{last}']!['get']!.deprecated, undefined);
  });
});
