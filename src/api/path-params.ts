/**
 * Path segments TiTiler declares with typed placeholders (`{z}`, `{y}@{scale}x.{format}`,
 * `{minx},{miny},{maxx},{maxy}`, `{lon},{lat}`). Fastify only splits on `/`, so these parsers do
 * what FastAPI's path validation does, with the same 422 bodies for bad numbers and formats.
 */
import { ValidationError, expectedList, type ValidationDetail } from './errors.js';
import { IMAGE_FORMATS, formatNamed, type ImageFormat } from '../image/formats.js';

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf|infinity|nan)$/i;

function intDetail(name: string, input: string): ValidationDetail {
  return { type: 'int_parsing', loc: ['path', name], msg: 'Input should be a valid integer, unable to parse string as an integer', input };
}

function floatDetail(name: string, input: string): ValidationDetail {
  return { type: 'float_parsing', loc: ['path', name], msg: 'Input should be a valid number, unable to parse string as a number', input };
}

function formatDetail(input: string): ValidationDetail {
  return {
    type: 'enum',
    loc: ['path', 'format'],
    msg: `Input should be ${expectedList(IMAGE_FORMATS)}`,
    input,
    ctx: { expected: expectedList(IMAGE_FORMATS) },
  };
}

/** Collects every bad segment before failing, as FastAPI reports all of them. */
class PathErrors {
  readonly details: ValidationDetail[] = [];
  int(name: string, text: string): number {
    if (!INT_RE.test(text.trim())) {
      this.details.push(intDetail(name, text));
      return 0;
    }
    return Number(text);
  }
  float(name: string, text: string): number {
    const t = text.trim();
    if (!FLOAT_RE.test(t)) {
      this.details.push(floatDetail(name, text));
      return 0;
    }
    const lower = t.toLowerCase().replace(/^\+/, '');
    if (lower === 'nan') return NaN;
    if (lower === 'inf' || lower === 'infinity') return Infinity;
    if (lower === '-inf' || lower === '-infinity') return -Infinity;
    return Number(t);
  }
  format(text: string | undefined): ImageFormat | undefined {
    if (text === undefined) return undefined;
    // `.tiff` is TiTiler 2.x's other name of `.tif`; the message lists 0.18's names (the 0.18 parity suite compares it).
    const format = formatNamed(text);
    if (!format) this.details.push(formatDetail(text));
    return format;
  }
  done(): void {
    if (this.details.length > 0) throw new ValidationError(this.details);
  }
}

export interface TilePath {
  z: number;
  x: number;
  y: number;
  scale: number;
  /** Whether the path (`@{scale}x`) or the query (`scale`) named the scale: a TiTiler 0.18 request. */
  scaled: boolean;
  format: ImageFormat | undefined;
}

/**
 * `{z}`, `{x}` and the last segment `{y}[@{scale}x][.{format}]`. Where the path has no scale or no
 * format, TiTiler takes them from the query (`scale`, `format`): `fallback` carries those.
 */
export function parseTilePath(z: string, x: string, last: string, fallback: { scale?: number; format?: ImageFormat } = {}): TilePath {
  const m = /^([^@.]*)(?:@([^.]*)x)?(?:\.(.*))?$/.exec(last);
  const errors = new PathErrors();
  const zi = errors.int('z', z);
  const xi = errors.int('x', x);
  const yi = errors.int('y', m?.[1] ?? last);
  let scale = fallback.scale ?? 1;
  if (m?.[2] !== undefined) {
    scale = errors.int('scale', m[2]);
    if (errors.details.length === 0 && scale <= 0) {
      errors.details.push({ type: 'greater_than', loc: ['path', 'scale'], msg: 'Input should be greater than 0', input: m[2], ctx: { gt: 0 } });
    } else if (errors.details.length === 0 && scale > 4) {
      errors.details.push({ type: 'less_than_equal', loc: ['path', 'scale'], msg: 'Input should be less than or equal to 4', input: m[2], ctx: { le: 4 } });
    }
  }
  const format = m?.[3] !== undefined ? errors.format(m[3]) : fallback.format;
  errors.done();
  return { z: zi, x: xi, y: yi, scale, scaled: m?.[2] !== undefined || fallback.scale !== undefined, format };
}

export interface BBoxPath {
  bbox: [number, number, number, number];
  width: number | undefined;
  height: number | undefined;
  format: ImageFormat;
}

/** `{minx},{miny},{maxx},{maxy}[/{width}x{height}].{format}` (everything after `/bbox/`). */
export function parseBBoxPath(rest: string): BBoxPath | undefined {
  const m = /^([^,/]+),([^,/]+),([^,/]+),([^,/]+?)(?:\/([^/x]+)x([^/.]+))?\.([A-Za-z0-9]+)$/.exec(rest);
  if (!m) return undefined;
  const errors = new PathErrors();
  const bbox: [number, number, number, number] = [
    errors.float('minx', m[1]!),
    errors.float('miny', m[2]!),
    errors.float('maxx', m[3]!),
    errors.float('maxy', m[4]!),
  ];
  const width = m[5] !== undefined ? errors.int('width', m[5]) : undefined;
  const height = m[6] !== undefined ? errors.int('height', m[6]) : undefined;
  const format = errors.format(m[7]!);
  errors.done();
  return { bbox, width, height, format: format! };
}

/** `{minx},{miny},{maxx},{maxy}` (a mosaic's bbox asset lookup). */
export function parseBBox(text: string): [number, number, number, number] | undefined {
  const m = /^([^,]+),([^,]+),([^,]+),([^,]+)$/.exec(text);
  if (!m) return undefined;
  const errors = new PathErrors();
  const bbox: [number, number, number, number] = [
    errors.float('minx', m[1]!),
    errors.float('miny', m[2]!),
    errors.float('maxx', m[3]!),
    errors.float('maxy', m[4]!),
  ];
  errors.done();
  return bbox;
}

/** `{lon},{lat}`. */
export function parseLonLat(text: string): [number, number] | undefined {
  const m = /^([^,]+),([^,]+)$/.exec(text);
  if (!m) return undefined;
  const errors = new PathErrors();
  const lon = errors.float('lon', m[1]!);
  const lat = errors.float('lat', m[2]!);
  errors.done();
  return [lon, lat];
}

/** `{width}x{height}.{format}` of the feature route. */
export function parseSizeFormat(text: string): { width: number; height: number; format: ImageFormat } | undefined {
  const m = /^([^x/]+)x([^./]+)\.([A-Za-z0-9]+)$/.exec(text);
  if (!m) return undefined;
  const errors = new PathErrors();
  const width = errors.int('width', m[1]!);
  const height = errors.int('height', m[2]!);
  const format = errors.format(m[3]!);
  errors.done();
  return { width, height, format: format! };
}

/** `.{format}` alone (preview, feature). */
export function parseFormat(text: string): ImageFormat {
  const errors = new PathErrors();
  const format = errors.format(text);
  errors.done();
  return format!;
}
