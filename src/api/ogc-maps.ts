/**
 * OGC API – Maps' `/map` of a reader family, as TiTiler 2.x answers it (titiler/core/factory.py
 * 2.4.0, `ogc_maps`, mounted on /cog and /stac by titiler/application/main.py since 0.23): an image
 * of the dataset, of `bbox` (in `bbox-crs`, longitude/latitude by default) when given, else of the
 * whole dataset; in `crs` (default the dataset's own), `width`/`height` or at most 1024 px a side;
 * format from `f`, else the first image type Accept prefers, else PNG. A verb (api/verbs.ts) that
 * needs a reader with `part`; without `bbox` it reads the `preview`, which a mosaic has not (400).
 *
 * `/{prefix}/map` is also TiTiler 0.18's grid-less map page: the route is mounted only where
 * TESSERA_TITILER_API=2 chooses 2.x's meaning (api/generations.ts, collision `prefixMap`).
 */
import type { FastifyInstance } from 'fastify';
import { MAP_DEFAULT_MAX_SIZE, mapArea, routeQuery, type QueryRoute } from './params/index.js';
import { imageFamilies, type ReaderWith, type Verb, type VerbContext } from './factory.js';
import { renderSpec, sendImage } from './image-response.js';
import { acceptedMediaType } from './negotiate.js';
import { choose } from './generations.js';
import { IMAGE_FORMATS, MEDIA_TYPES, type ImageFormat } from '../image/formats.js';
import { WGS84 } from '../gdal/crs.js';
import { badRequest } from '../errors.js';

/** The image format the Accept header prefers among TiTiler 2.x's (ImageType order), or undefined. */
function acceptedFormat(accept: string): ImageFormat | undefined {
  const offered = [...new Set(IMAGE_FORMATS.map((f) => MEDIA_TYPES[f]))];
  const chosen = acceptedMediaType(accept, offered);
  return IMAGE_FORMATS.find((f) => MEDIA_TYPES[f] === chosen);
}

/** GET /map: OGC API – Maps (with TESSERA_TITILER_API=2). */
export const ogcMap: Verb<ReaderWith<'part'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'part'>>) => {
    const mounted = choose(ctx.services.settings, 'prefixMap', { '0.18': false, '2': true });
    if (!mounted) return;
    const mapQuery = routeQuery({ ...imageFamilies(ctx.layer, ctx.services.settings, ctx.datasetQuery), map: mapArea });
    app.get<QueryRoute>('/map', { schema: { querystring: mapQuery.schema }, config: { large: true }, ...ctx.routeOptions }, async (request, reply) => {
      const p = mapQuery.parse(request.query);
      const format = p.map.format ?? acceptedFormat(request.headers.accept ?? '') ?? 'png';
      const size = {
        ...(p.map.width !== undefined ? { width: p.map.width } : {}),
        ...(p.map.height !== undefined ? { height: p.map.height } : {}),
        ...(p.map.width === undefined && p.map.height === undefined ? { maxSize: MAP_DEFAULT_MAX_SIZE } : {}),
        // One of them alone: the other keeps the read's aspect ratio (rio-tiler 9's output_size).
        keepAspect: true,
      };
      const dataset = ctx.dataset(request, p.url);
      const reader = await ctx.open(dataset, p.layer);
      // A mosaic reads areas, not the whole of it (TiTiler 2.4.0's mosaic backends raise NotImplementedError: 501).
      if (!p.map.bbox && !reader.preview) throw badRequest('bbox is required: a mosaic is read for an area, not as a whole');
      if (await ctx.unchanged(request, reply, reader)) return reply;
      const dstCrs = p.map.crs ?? (await ctx.nativeCrs(dataset)) ?? WGS84;
      const options = { ...p.values, limits: ctx.limits, deferExpression: true };
      const bbox = p.map.bbox;
      const result = bbox
        ? await reader.part(bbox, { ...size, boundsCrs: p.map.bboxCrs ?? WGS84, dstCrs }, options)
        : await reader.preview!({ ...size, dstCrs }, options);
      if (result.headers) reply.headers(result.headers);
      return sendImage(reply, ctx.services.renderer, result.image, format, renderSpec(p.algorithm, p.render, result));
    });
  },
};
