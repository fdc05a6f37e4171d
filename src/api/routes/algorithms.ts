/**
 * GET /algorithms and /algorithms/{algorithmId} (TiTiler's AlgorithmFactory), in the deployment's
 * generation where the two collide:
 * - 0.18 (TiTiler 0.18.10): `/algorithms` is an object of the five algorithms' metadata keyed by id,
 *   written by `json.dumps`; always JSON.
 * - 2 (TiTiler 2.4.0, titiler/core/factory.py `AlgorithmFactory`): `/algorithms` is
 *   `{"algorithms": [{id, title, links}]}` over all eighteen, each link to the algorithm's metadata;
 *   both routes answer HTML instead when `f=html` or the Accept header prefers it; metadata floats
 *   are written as pydantic-core writes them (`1e-6`).
 * The thirteen algorithms 0.18.10 lacks are told apart by their names, so `/algorithms/slope` answers
 * under either generation (with 2.4.0's metadata, the only one it has), and `f=html` too. An unknown
 * id is FastAPI's 422 `literal_error` listing the ids the generation's TiTiler lists.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError, expectedList } from '../errors.js';
import {
  ALGORITHM_IDS,
  ALGORITHM_IDS_018,
  algorithmInfo,
  isAlgorithmId,
  listedAlgorithms,
  type AlgorithmId,
  type AlgorithmInfo,
  type ParameterInfo,
  type TitilerApi,
} from '../../image/algorithms/index.js';
import { float, pydanticFloat, pyDumps } from '../../pyjson.js';
import { sendHtml } from '../pages/respond.js';
import { baseUrl } from '../urls.js';
import { sendJson } from '../reply.js';
import { escapeHtml, plainPage } from '../pages/html.js';

type FloatWriter = (v: number) => unknown;

/** One parameter's JSON schema, keys sorted as pydantic sorts them. */
function parameterSchema(p: ParameterInfo, pyFloat: FloatWriter): Record<string, unknown> {
  const num = (v: number): unknown => (p.type === 'number' ? pyFloat(v) : v);
  const bounded = { maximum: num(p.maximum), minimum: num(p.minimum) };
  if (p.nullable) {
    return {
      anyOf: [{ ...bounded, type: p.type }, { type: 'null' }],
      default: p.default === null ? null : num(p.default),
      ...(p.description === undefined ? {} : { description: p.description }),
      title: p.title,
    };
  }
  return {
    default: p.default === null ? null : num(p.default),
    ...(p.description === undefined ? {} : { description: p.description }),
    ...bounded,
    title: p.title,
    type: p.type,
  };
}

/** The metadata as TiTiler serializes it: JSON-schema "number" values and float output ranges are Python floats. */
function metadata(info: AlgorithmInfo, pyFloat: FloatWriter): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(info.parameters)) parameters[name] = parameterSchema(p, pyFloat);
  const { nbands, dtype, min, max, integerRange } = info.outputs;
  const range = (values: number[] | null): unknown => (values === null ? null : integerRange ? [...values] : values.map(pyFloat));
  return {
    title: info.title,
    description: info.description,
    inputs: { ...info.inputs },
    outputs: { nbands, dtype, min: range(min), max: range(max) },
    parameters,
  };
}

/** The metadata of `id` as the generation's TiTiler writes it (the 2.x-only algorithms in 2.4.0's words). */
function metadataOf(id: AlgorithmId, api: TitilerApi): Record<string, unknown> {
  const known018 = (ALGORITHM_IDS_018 as readonly string[]).includes(id);
  if (api === '0.18' && known018) return metadata(algorithmInfo(id, '0.18'), float);
  return metadata(algorithmInfo(id, '2'), pydanticFloat);
}

/** TiTiler 2.4.0's `AlgorithmtList`: every link as its `Link` model writes it, nulls included. */
function algorithmList(request: FastifyRequest): unknown {
  const base = baseUrl(request);
  return {
    algorithms: ALGORITHM_IDS.map((id) => ({
      id,
      title: null,
      links: [
        {
          href: `${base}/algorithms/${id}`,
          rel: 'item',
          type: 'application/json',
          templated: null,
          varBase: null,
          hreflang: null,
          title: `Definition of ${id} Algorithm`,
          length: null,
        },
      ],
    })),
  };
}

// ---- HTML (TiTiler 2.x's templates, without their styling) ------------------------------------

type MediaType = 'html' | 'json';

/**
 * TiTiler 2.x's `accept_media_type` over [html, json]: the best quality the client gives either, html
 * first on a tie, json for `*` or nothing; a quality that is not a number counts as 0.
 */
export function acceptedMediaType(accept: string): MediaType | undefined {
  const quality = new Map<string, number>();
  for (const entry of accept.replace(/ /g, '').split(',')) {
    const [name = '', ...params] = entry.split(';');
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=');
      if (key === 'q') q = value === undefined || value === '' ? 1 : Number.isNaN(Number(value)) ? 0 : Number(value);
    }
    if (q) quality.set(name, q);
  }
  const html = quality.get('text/html');
  const json = quality.get('application/json');
  if (html !== undefined && (json === undefined || html >= json)) return 'html';
  if (json !== undefined) return 'json';
  return quality.has('*') ? 'html' : undefined;
}

/** `f=html|json` (2.x; 422 for other values), else under 2 the Accept header; 0.18 ignores both (only `f=html` is told apart). */
function mediaType(request: FastifyRequest<{ Querystring: Record<string, unknown> }>, api: TitilerApi): MediaType {
  const f = request.query['f'];
  if (f === 'html' || f === 'json') return f;
  if (api === '0.18') return 'json';
  if (f !== undefined) {
    const expected = expectedList(['html', 'json']);
    throw new ValidationError([{ type: 'literal_error', loc: ['query', 'f'], msg: `Input should be ${expected}`, input: f, ctx: { expected } }]);
  }
  return acceptedMediaType(String(request.headers.accept ?? '')) ?? 'json';
}

/** Nothing but markup: no script, no external style. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

function listPage(request: FastifyRequest): string {
  const base = baseUrl(request);
  const items = ALGORITHM_IDS.map((id) => `<li><a href="${escapeHtml(`${base}/algorithms/${id}`)}">${escapeHtml(id)}</a></li>`).join('\n');
  return plainPage('Algorithms', `<h1>Algorithms</h1>\n<p>This API implements algorithms that are listed below.</p>\n<ul>\n${items}\n</ul>`);
}

/** A value as the template prints it: JSON text (no Python reprs needed for a page). */
const shown = (v: unknown): string => escapeHtml(pyDumps(v));

function algorithmPage(id: AlgorithmId, doc: Record<string, unknown>): string {
  const entries = (o: unknown): string =>
    Object.entries(o as Record<string, unknown>)
      .map(([k, v]) => `<li><strong>${escapeHtml(k)}:</strong> ${shown(v)}</li>`)
      .join('\n');
  const parameters = Object.entries(doc['parameters'] as Record<string, Record<string, unknown>>)
    .map(([name, p]) => {
      const schema = (p['anyOf'] as Array<Record<string, unknown>> | undefined)?.[0] ?? p;
      const cells = [schema['type'], p['default'], schema['minimum'], schema['maximum']].map((v) => `<td>${shown(v ?? null)}</td>`).join('');
      return `<li><strong>${escapeHtml(name)}:</strong></li>\n<table><tr><th>Type</th><th>Default</th><th>Min</th><th>Max</th></tr><tr>${cells}</tr></table>`;
    })
    .join('\n');
  return plainPage(
    `${id} Algorithm`,
    [
      `<h1>${escapeHtml(String(doc['title']))}</h1>`,
      `<p>${escapeHtml(String(doc['description']))}</p>`,
      `<h2>Inputs</h2>\n${entries(doc['inputs'])}`,
      `<h2>Outputs</h2>\n${entries(doc['outputs'])}`,
      `<h2>Parameters</h2>\n${parameters}`,
    ].join('\n'),
  );
}

// ---- routes ---------------------------------------------------------------------------------------

type AlgorithmsRequest = FastifyRequest<{ Querystring: Record<string, unknown> }>;
type AlgorithmRequest = FastifyRequest<{ Querystring: Record<string, unknown>; Params: { algorithmId: string } }>;

const F_PARAM = {
  type: 'object',
  properties: {
    f: {
      type: 'string',
      description: 'Response MediaType (TiTiler 2.x): html or json. Defaults to the Accept header (under TESSERA_TITILER_API=2), else json.',
    },
  },
} as const;

export function algorithmRoutes(api: TitilerApi = '0.18') {
  return async function routes(app: FastifyInstance): Promise<void> {
    app.get(
      '/algorithms',
      {
        schema: {
          summary: 'Retrieve the list of available Algorithms.',
          operationId: api === '2' ? 'getAlgorithmList' : 'getAlgorithms',
          querystring: F_PARAM,
        },
      },
      async (request: AlgorithmsRequest, reply: FastifyReply) => {
        const type = mediaType(request, api);
        if (type === 'html') return sendHtml(reply, listPage(request), PAGE_CSP);
        if (api === '2') return sendJson(reply, algorithmList(request));
        const body: Record<string, unknown> = {};
        for (const id of listedAlgorithms(api)) body[id] = metadataOf(id, api);
        return sendJson(reply, body);
      },
    );

    app.get(
      '/algorithms/:algorithmId',
      {
        schema: {
          summary: 'Retrieve the metadata of the specified algorithm.',
          operationId: 'getAlgorithm',
          // An enum, as TiTiler's Literal path parameter; checked in the handler, whose 422 lists the generation's ids.
          params: { type: 'object', properties: { algorithmId: { type: 'string', enum: [...ALGORITHM_IDS] } }, required: ['algorithmId'] },
          querystring: F_PARAM,
        },
        attachValidation: true,
      },
      async (request: AlgorithmRequest, reply: FastifyReply) => {
        const id = request.params.algorithmId;
        if (!isAlgorithmId(id)) {
          const expected = expectedList(listedAlgorithms(api));
          throw new ValidationError([
            { type: 'literal_error', loc: ['path', 'algorithmId'], msg: `Input should be ${expected}`, input: id, ctx: { expected } },
          ]);
        }
        const doc = metadataOf(id, api);
        if (mediaType(request, api) === 'html') return sendHtml(reply, algorithmPage(id, doc), PAGE_CSP);
        return sendJson(reply, doc);
      },
    );
  };
}
