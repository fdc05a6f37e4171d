/**
 * The one place where errors become HTTP answers: TesseraError kinds map to status codes, Fastify's
 * schema validation becomes FastAPI's 422 body, and anything unexpected is a logged 500 with a short
 * detail. Bodies are always `{"detail": ...}` as TiTiler sends them; 204 has no body.
 */
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TesseraError, type ErrorKind } from '../errors.js';
import { pyDumps } from '../pyjson.js';

const STATUS: Record<ErrorKind, number> = {
  BadRequest: 400,
  NotFound: 404,
  TileOutsideBounds: 404,
  PointOutsideBounds: 404,
  NoContent: 204,
  UpstreamNotFound: 404,
  UpstreamForbidden: 403,
  UpstreamError: 502,
  Timeout: 504,
  Busy: 503,
  // nginx's "client closed request": only the log line ever sees it.
  ClientGone: 499,
  Internal: 500,
};

/** One FastAPI/pydantic v2 validation error entry. */
export interface ValidationDetail {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** Thrown by parameter parsers for errors FastAPI would report as 422. */
export class ValidationError extends Error {
  constructor(readonly details: ValidationDetail[]) {
    super(details.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
    this.name = 'ValidationError';
  }
}

const LOC: Record<string, string> = { querystring: 'query', params: 'path', body: 'body', headers: 'header' };

/** How pydantic words an expected-values list: `'a', 'b' or 'c'`. */
export function expectedList(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Parameters TiTiler declares as Enum classes (422 `enum`); its other choices (pixel_selection too) are Literals. */
const ENUM_PARAMS = new Set(['format', 'tile_format']);

function lookup(data: unknown, path: Array<string | number>): unknown {
  let cur = data;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** JSON-schema bounds as pydantic reports them: error type, wording, ctx key. */
const BOUND_ERRORS: Record<'exclusiveMinimum' | 'minimum' | 'exclusiveMaximum' | 'maximum', [string, string, string]> = {
  exclusiveMinimum: ['greater_than', 'greater than', 'gt'],
  minimum: ['greater_than_equal', 'greater than or equal to', 'ge'],
  exclusiveMaximum: ['less_than', 'less than', 'lt'],
  maximum: ['less_than_equal', 'less than or equal to', 'le'],
};

/** `raw` holds the query values as sent, so `input` shows the client's text (not a coerced value). */
function fromAjv(errors: readonly AjvError[], context: string, data: unknown, raw?: URLSearchParams): ValidationDetail[] {
  const where = LOC[context] ?? context;
  const out: ValidationDetail[] = [];
  for (const e of errors) {
    const path = e.instancePath
      .split('/')
      .filter((s) => s !== '')
      .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
    if (e.keyword === 'required') {
      const name = String(e.params['missingProperty']);
      out.push({ type: 'missing', loc: [where, ...path, name], msg: 'Field required', input: null });
      continue;
    }
    const input = raw !== undefined && typeof path[0] === 'string' && path.length === 1 && raw.has(path[0]) ? raw.get(path[0]) : lookup(data, path);
    const loc = [where, ...path];
    const name = String(path[0] ?? '');
    switch (e.keyword) {
      case 'enum': {
        // `format` and `tile_format` also take `tiff` (TiTiler 2.x's name of `tif`), unlisted: the
        // message is 0.18.10's, which its parity suite compares (as a `.tiff` path's).
        const allowed = (e.params['allowedValues'] as unknown[]).map(String).filter((v) => !(ENUM_PARAMS.has(name) && v === 'tiff'));
        const expected = expectedList(allowed);
        out.push({
          type: ENUM_PARAMS.has(name) ? 'enum' : 'literal_error',
          loc,
          msg: `Input should be ${expected}`,
          input,
          ctx: { expected },
        });
        break;
      }
      case 'type': {
        const type = e.params['type'];
        if (type === 'integer') {
          out.push({ type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input });
        } else if (type === 'number') {
          out.push({ type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input });
        } else if (type === 'boolean') {
          out.push({ type: 'bool_parsing', loc, msg: 'Input should be a valid boolean, unable to interpret input', input });
        } else {
          out.push({ type: `${String(type)}_type`, loc, msg: `Input should be a valid ${String(type)}`, input });
        }
        break;
      }
      case 'exclusiveMinimum':
      case 'minimum':
      case 'exclusiveMaximum':
      case 'maximum': {
        const [type, words, key] = BOUND_ERRORS[e.keyword];
        out.push({ type, loc, msg: `Input should be ${words} ${String(e.params['limit'])}`, input, ctx: { [key]: e.params['limit'] } });
        break;
      }
      default:
        out.push({ type: 'value_error', loc, msg: e.message ?? 'Invalid value', input });
    }
  }
  return out;
}

function send(reply: FastifyReply, status: number, body: unknown): void {
  if (status === 204) {
    reply.code(204).send();
    return;
  }
  reply
    .code(status)
    .type('application/json')
    .send(Buffer.from(pyDumps(body), 'utf8'));
}

/** Largest request line plus headers the HTTP server reads. */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * Errors Node's HTTP parser finds before Fastify sees a request (headers too large, malformed
 * requests): answered with a JSON `{"detail"}` like every other 4xx, then the connection closes.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes: send less in the URL`]
      : err.code === 'HPE_HEADERS_TIMEOUT' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request did not arrive in time']
        : [400, 'Bad Request', 'Malformed HTTP request'];
  const body = pyDumps({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof TesseraError) {
      const status = STATUS[error.kind];
      if (status >= 500 && error.kind !== 'Busy') request.log.warn({ err: error }, 'upstream or internal failure');
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      send(reply, status, { detail: error.message });
      return;
    }
    if (error instanceof ValidationError) {
      send(reply, 422, { detail: error.details });
      return;
    }
    const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fe.validation) {
      const context = fe.validationContext ?? 'querystring';
      const data = context === 'params' ? request.params : context === 'body' ? request.body : request.query;
      const rawUrl = request.raw.url ?? '';
      const raw = context === 'querystring' && rawUrl.includes('?') ? new URLSearchParams(rawUrl.slice(rawUrl.indexOf('?') + 1)) : undefined;
      send(reply, 422, { detail: fromAjv(fe.validation, context, data, raw) });
      return;
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      // Fastify's own client errors: malformed JSON body, unsupported media type, body too large.
      send(reply, fe.statusCode, { detail: fe.message });
      return;
    }
    request.log.error({ err: error }, 'unhandled error');
    send(reply, 500, { detail: 'Internal server error' });
  });

  app.setNotFoundHandler((_request, reply) => {
    send(reply, 404, { detail: 'Not Found' });
  });
}
