/**
 * The kinds of value a setting takes (whole numbers in bounds, booleans, comma lists, URLs …): each is
 * a zod schema from the text an operator writes to the value tessera uses, with what the value
 * looks like and how a default is shown, for `tessera serve --help` and docs/configuration.md.
 * The settings themselves are declared in src/config/settings.ts.
 */
import path from 'node:path';
import { z } from 'zod';

/** A kind of setting value: parses the (trimmed) text, and says in words what it accepts. */
export interface Kind<T> {
  /** Text to value; a failure's message says what was expected (`expected at most 65535`). */
  readonly schema: z.ZodType<T, string>;
  /** What a value looks like, for the docs and --help: `whole number, 0 to 65535`, `boolean`. */
  readonly type: string;
  /** Words shown after a value (a default) in the docs and --help: `64 MiB` after 67108864 bytes. */
  aside?(value: T): string | undefined;
}

/** A value (a default) as it is written: lists comma-separated, '' for none. */
export function shown(value: unknown): string {
  if (value === undefined) return '';
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** The words read as true and as false, in any case. */
export const BOOLEAN_WORDS = { truthy: ['1', 'true', 'yes', 'on', 't', 'y'], falsy: ['0', 'false', 'no', 'off', 'f', 'n'] };

export const boolean: Kind<boolean> = {
  schema: z.stringbool({
    truthy: BOOLEAN_WORDS.truthy,
    falsy: BOOLEAN_WORDS.falsy,
    case: 'insensitive',
    error: `expected one of ${[...BOOLEAN_WORDS.truthy, ...BOOLEAN_WORDS.falsy].join(', ')}`,
  }),
  type: 'boolean',
};

/** Unit shown after a whole number: bytes get their binary size beside them. */
type Unit = 'bytes' | 'milliseconds' | 'seconds';

const BINARY = [
  [2 ** 30, 'GiB'],
  [2 ** 20, 'MiB'],
  [2 ** 10, 'KiB'],
] as const;

/** 67108864 → `64 MiB` (whole multiples only; else undefined). */
function binarySize(n: number): string | undefined {
  const hit = BINARY.find(([size]) => n >= size && n % size === 0);
  return hit ? `${n / hit[0]} ${hit[1]}` : undefined;
}

/** A whole number in [min, max] (max: none when omitted), in `unit` if given. */
export function whole(min: number, max?: number, unit?: Unit): Kind<number> {
  const top = max ?? Number.MAX_SAFE_INTEGER;
  const bounds = max === undefined ? `≥ ${min}` : `${min} to ${max}`;
  return {
    schema: z
      .string()
      .regex(/^\d+$/, 'expected a whole number')
      .transform(Number)
      .pipe(z.number().min(min, `expected at least ${min}`).max(top, `expected at most ${top}`)),
    type: `${unit ?? 'whole number'}, ${bounds}`,
    ...(unit === 'bytes' ? { aside: binarySize } : {}),
  };
}

export const text: Kind<string> = { schema: z.string(), type: 'text' };

/** Comma-separated words, spaces around them dropped, empty items skipped. */
export const list: Kind<string[]> = {
  schema: z.string().transform((v) =>
    v
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p.length > 0),
  ),
  type: 'comma-separated list',
};

/** One of `choices`, in any case (read in lower case). */
export function oneOf<const C extends readonly [string, ...string[]]>(choices: C): Kind<C[number]> {
  return {
    schema: z
      .string()
      .toLowerCase()
      .pipe(z.enum(choices, `expected one of ${choices.join(', ')}`)),
    type: `one of ${choices.join(', ')}`,
  };
}

/** A folder, made absolute (relative to the directory tessera starts in). */
export const folder: Kind<string> = { schema: z.string().transform((v) => path.resolve(v)), type: 'folder' };

/** An XYZ tile URL template: absolute http(s), or a path on this server, with {z}, {x} and {y}. */
export const tileTemplate: Kind<string> = {
  schema: z
    .string()
    .refine(
      (v) => v === '' || (/^(https?:\/\/|\/)/.test(v) && ['{z}', '{x}', '{y}'].every((p) => v.includes(p))),
      'expected an http(s) URL or a path with {z}, {x} and {y}',
    ),
  type: 'http(s) URL or path with {z}, {x}, {y}',
};

/** A URL path prefix (`/tiles`, `/a/b`), trailing slashes dropped; empty is none. */
export const pathPrefix: Kind<string> = {
  schema: z
    .string()
    .transform((v) => v.replace(/\/+$/, ''))
    .pipe(z.string().regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/, 'expected a path such as /tiles (or nothing)')),
  type: 'URL path such as /tiles',
};

/** A Redis (or Valkey) URL. */
export const redisUrl: Kind<string> = {
  schema: z.string().regex(/^rediss?:\/\/[^\s]+$/, 'expected redis://host:port/db (or rediss://)'),
  type: 'redis:// or rediss:// URL',
};

/** `kind`, or undefined when unset (a blank value is unset). */
export function optional<T>(kind: Kind<T>): Kind<T | undefined> {
  const aside = kind.aside;
  return { schema: kind.schema, type: kind.type, ...(aside ? { aside: (v: T | undefined) => (v === undefined ? undefined : aside(v)) } : {}) };
}
