/**
 * Parameter families, TiTiler's `dependencies.py` made declarations: each family is one object with
 * its query parameters' JSON schema (Fastify validates it: 422, as FastAPI does), one description per
 * parameter (what /api shows) and one parser from the validated query to typed options (400 for the
 * semantic mistakes). A route lists the families it takes; `routeQuery` composes their schemas and
 * parses every one of them, in the order listed, before anything is read. The same bad query thus
 * gets the same 4xx on a tile, a TileJSON, a WMTS document and a map page.
 */

export type JsonSchema = Record<string, unknown>;
/** A query as Fastify leaves it after validation (lists for repeated parameters, coerced scalars). */
export type Query = Record<string, unknown>;

/** Fastify's route generic for a route whose query the families parse (the handler's `request.query`). */
export interface QueryRoute {
  Querystring: Query;
}

/** The same with the route's path pieces, as the router hands them over (parsed by api/path-params.ts). */
export interface PathRoute<P> extends QueryRoute {
  Params: P;
}

export interface Param {
  schema: JsonSchema;
  /** The description /api shows; one per parameter name across every family. */
  doc: string;
  required?: boolean;
  /**
   * What the parser takes an absent parameter to mean (TiTiler's default), shown by /api as the
   * default. Unlike a `default` in `schema`, validation does not fill it in: the parser still sees
   * the parameter absent, which some must tell apart (a tile's `scale` marks a TiTiler 0.18 request).
   */
  parserDefault?: string | number | boolean;
}

/**
 * The annotation carrying a parameter's parserDefault in a route's query schema: ajv is told it is
 * an annotation (api/app.ts), and /api turns it into the parameter's `default` (api/openapi.ts).
 */
export const PARSER_DEFAULT = 'x-parser-default';

export interface ParamFamily<T> {
  /** TiTiler's name for the dependency, where it has one. */
  readonly name: string;
  readonly params: Readonly<Record<string, Param>>;
  parse(q: Query): T;
}

const declared: Array<ParamFamily<unknown>> = [];

/** Declares a family (and records it, so /api and the boolean spellings see every parameter). */
export function family<T>(name: string, params: Record<string, Param>, parse: (q: Query) => T): ParamFamily<T> {
  const f: ParamFamily<T> = { name, params, parse };
  declared.push(f as ParamFamily<unknown>);
  return f;
}

/** What `routeQuery(families)` parses a query into: each family's value under its key. */
export type Parsed<F> = { [K in keyof F]: F[K] extends ParamFamily<infer T> ? T : never };

export interface RouteQuery<T> {
  /** The route's querystring schema: every family's parameters, with their descriptions. */
  readonly schema: JsonSchema;
  /** Every family's parser, in the order the route listed them. */
  parse(q: Query): T;
}

/**
 * Several families as one, parsed into an object keyed as `families` is (a reader family's layer
 * with its pixel selection, a route's whole query). A parameter two of them declare is a bug: thrown.
 */
export function combine<F extends Record<string, ParamFamily<unknown>>>(name: string, families: F): ParamFamily<Parsed<F>> {
  const params: Record<string, Param> = {};
  const owner = new Map<string, string>();
  for (const f of Object.values(families)) {
    for (const [param, p] of Object.entries(f.params)) {
      const other = owner.get(param);
      if (other !== undefined) throw new Error(`query parameter '${param}' is declared by both ${other} and ${f.name}`);
      owner.set(param, f.name);
      params[param] = p;
    }
  }
  const entries = Object.entries(families);
  return {
    name,
    params,
    parse(q: Query): Parsed<F> {
      const out: Record<string, unknown> = {};
      for (const [key, f] of entries) out[key] = f.parse(q);
      return out as Parsed<F>;
    },
  };
}

/** The query of a route that takes `families` (keys name the parsed values). */
export function routeQuery<F extends Record<string, ParamFamily<unknown>>>(families: F): RouteQuery<Parsed<F>> {
  const all = combine('route', families);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, p] of Object.entries(all.params)) {
    properties[name] = { ...p.schema, description: p.doc, ...(p.parserDefault !== undefined ? { [PARSER_DEFAULT]: p.parserDefault } : {}) };
    if (p.required) required.push(name);
  }
  return { schema: { type: 'object', properties, required }, parse: all.parse };
}

/**
 * Every declared parameter's description, by name: what /api says of a parameter a route's schema
 * leaves undescribed. A name two families mean differently (`bbox`: OGC API – Maps' extent, a
 * collection's item filter) has none here: each route describes it from its own family.
 */
export function parameterDocs(): Map<string, string> {
  const docs = new Map<string, string>();
  const ambiguous = new Set<string>();
  for (const f of declared) {
    for (const [name, p] of Object.entries(f.params)) {
      const seen = docs.get(name);
      if (seen !== undefined && seen !== p.doc) ambiguous.add(name);
      docs.set(name, p.doc);
    }
  }
  for (const name of ambiguous) docs.delete(name);
  return docs;
}

/** Names of the declared parameters that are booleans (their pydantic spellings are normalised). */
export function booleanParams(): Set<string> {
  const out = new Set<string>();
  for (const f of declared) for (const [name, p] of Object.entries(f.params)) if (p.schema['type'] === 'boolean') out.add(name);
  return out;
}

// ---- small schema pieces ------------------------------------------------------------------------

export const str = { type: 'string' } as const;
export const strList = { type: 'array', items: { type: 'string' } } as const;
export const bool = { type: 'boolean' } as const;
export const int = { type: 'integer' } as const;
export const intList = { type: 'array', items: { type: 'integer' } } as const;

/** A query value that is a non-empty string, or undefined. */
export function text(q: Query, name: string): string | undefined {
  const v = q[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A repeated query value, without empty entries. */
export function list(q: Query, name: string): string[] {
  const v = q[name];
  return Array.isArray(v) ? (v as unknown[]).filter((x): x is string => typeof x === 'string' && x !== '') : [];
}
