/**
 * Band-math expressions (TiTiler's `expression` parameter), evaluated as rio-tiler 6.8 evaluates
 * them with numexpr 2.14: the text is split on `;` into blocks (one output band each, named by the
 * unstripped block text), each block is read once into a validated tree, then typed and compiled
 * for the dtypes of the bands it is given into a flat program of vectorised kernels (see
 * expression/program.ts). Results follow numexpr's typing exactly (uint8 arithmetic is int32 and
 * wraps, `float32 * 0.5` is float64, `/` is true division, `x ** 2` is `x * x` …), then
 * numpy.nan_to_num, then the blocks are stacked in numpy's common dtype.
 *
 * Known differences from numexpr, all outside ordinary band math:
 * - int64 values are held in doubles: exact to 2^53; wider results are computed exactly through
 *   BigInt, then rounded to the nearest double (so chains of overflowing int64 products drift).
 * - Math functions use V8's libm, which differs from glibc's in the last bit (float64) or, for
 *   float32 results, by an ulp where glibc's float functions are not correctly rounded.
 * - The sign of a NaN is not observable here: copysign/signbit see NaN as positive.
 * - Calls on constants only (`sqrt(2)`) fold as numpy does, except that True/False arguments are
 *   treated as 1/0 (numpy computes those in float16).
 * - Chained comparisons are refused even between constants; `.real`/`.imag` are refused.
 * - A block without any band (`255`) is broadcast to a full band, where rio-tiler fails.
 *
 * No HTTP and no GDAL here: readers parse once per request, check the names, read the bands and
 * call `evaluateExpression`; masks are theirs to combine.
 */
import { TesseraError } from '../errors.js';
import { allocate, ARRAY_OF, intersectMasks, type BandArray, type DType, type ImageData } from './image-data.js';
import { characterPosition, parseBlock, type Ast, type BlockContext } from './expression/syntax.js';
import { DTYPE_OF_KIND, KIND_OF_DTYPE, stackDtype } from './expression/kinds.js';
import { Typer } from './expression/typing.js';
import { Program } from './expression/program.js';

export interface ExpressionBlock {
  /** The block exactly as written between `;` (spaces kept): rio-tiler's band name. */
  readonly name: string;
  /** The block stripped of surrounding whitespace: what is evaluated. */
  readonly source: string;
}

export interface ExpressionInput {
  readonly dtype: DType;
  /** `length` values in the typed array `ARRAY_OF[dtype]` (int64 in a Float64Array, bool as 0/1 bytes). */
  readonly array: BandArray;
}

export interface ExpressionResult {
  /** numpy's common dtype of the blocks' results; every band is in it. */
  dtype: DType;
  bands: BandArray[];
}

const MAX_EXPRESSION_LENGTH = 2048;
/** evaluateRange gives up (returns undefined) above this many (min, max) combinations, i.e. 12 bands. */
const MAX_RANGE_COMBINATIONS = 4096;
/** How many names an unknown-name message lists. */
const LISTED_NAMES = 12;
/** Compiled programs kept per expression (one per combination of input dtypes). */
const PROGRAM_CACHE_SIZE = 8;

interface Compiled {
  readonly program: Program;
  readonly dtype: DType;
}

export class Expression {
  private readonly compiled = new Map<string, Compiled>();

  private constructor(
    readonly text: string,
    readonly blocks: readonly ExpressionBlock[],
    /** Distinct names the expression reads, in order of first appearance. */
    readonly variables: readonly string[],
    private readonly parsed: readonly { readonly ast: Ast; readonly ctx: BlockContext }[],
    private readonly firstUse: ReadonlyMap<string, number>,
  ) {}

  /** @see parseExpression */
  static parse(text: string): Expression {
    if (text.length > MAX_EXPRESSION_LENGTH && [...text].length > MAX_EXPRESSION_LENGTH) {
      throw new TesseraError('BadRequest', `Invalid expression: longer than ${MAX_EXPRESSION_LENGTH} characters`);
    }
    const blocks: ExpressionBlock[] = [];
    const parsed: { ast: Ast; ctx: BlockContext }[] = [];
    const firstUse = new Map<string, number>();
    let offset = 0;
    for (const name of text.split(';')) {
      const start = offset;
      offset += name.length + 1;
      if (name === '') continue; // rio-tiler drops empty blocks (but not blank ones)
      const { source, lead } = pythonStrip(name);
      if (source === '') {
        throw new TesseraError('BadRequest', `Invalid expression '${text}': empty block at position ${characterPosition(text, start)}`);
      }
      const ctx: BlockContext = { text, source, offset: start + lead };
      const block = parseBlock(ctx);
      new Typer(() => 'double', true).typeBlock(block.ast, ctx); // numexpr's first, all-float64 pass
      for (const [variable, pos] of block.names) if (!firstUse.has(variable)) firstUse.set(variable, pos);
      blocks.push({ name, source });
      parsed.push({ ast: block.ast, ctx });
    }
    if (blocks.length === 0) throw new TesseraError('BadRequest', `Invalid expression '${text}': nothing to evaluate`);
    return new Expression(text, blocks, [...firstUse.keys()], parsed, firstUse);
  }

  /** Throws a 400 naming the first variable that is not in `allowed`, with its position. */
  checkVariables(allowed: ReadonlySet<string> | readonly string[]): void {
    const names: ReadonlySet<string> = isSet(allowed) ? allowed : new Set(allowed);
    for (const variable of this.variables) {
      if (names.has(variable)) continue;
      const at = characterPosition(this.text, this.firstUse.get(variable)!);
      const all = [...names];
      const listed = all.slice(0, LISTED_NAMES).join(', ') + (all.length > LISTED_NAMES ? `, … (${all.length - LISTED_NAMES} more)` : '');
      throw new TesseraError('BadRequest', `Invalid expression: unknown name '${variable}' at position ${at}; available: ${listed || '(none)'}`);
    }
  }

  /**
   * @internal The program for these input dtypes (typing errors are 400s), compiled once per
   * combination; use evaluateExpression.
   */
  compile(dtypes: ReadonlyMap<string, DType>): Compiled {
    const key = this.variables.map((v) => dtypes.get(v)).join(',');
    let compiled = this.compiled.get(key);
    if (compiled) return compiled;
    const typer = new Typer((name) => KIND_OF_DTYPE[dtypes.get(name)!]);
    const roots = this.parsed.map(({ ast, ctx }) => typer.typeBlock(ast, ctx));
    compiled = { program: new Program(roots, dtypes), dtype: stackDtype(roots.map((r) => DTYPE_OF_KIND[r.kind])) };
    if (this.compiled.size >= PROGRAM_CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(key, compiled);
    return compiled;
  }
}

/** Parses (and validates) an expression once; 400 with the position of the first mistake. */
export function parseExpression(text: string): Expression {
  return Expression.parse(text);
}

/**
 * The bands an expression over one raster's `b1 … bn` reads (rio-tiler's `parse_expression`: its
 * `b{i}` names, sorted); a 400 for any other name. `of` names the raster in messages ("asset 'B01'").
 */
export function expressionBands(expression: Expression, of?: string): number[] {
  const where = of ? ` (${of})` : '';
  const names = expression.variables.map((v) => ({ v, m: /^b([0-9]+)$/.exec(v) }));
  const indexes = new Set(names.flatMap(({ m }) => (m && Number(m[1]) > 0 ? [Number(m[1])] : [])));
  // rio-tiler looks for band names first: an expression with none says so, whatever else it names.
  if (indexes.size === 0) throw new TesseraError('BadRequest', `Could not find any valid bands in '${expression.text}' expression${where}.`);
  const other = names.find(({ m }) => !m || Number(m[1]) < 1);
  if (other) throw new TesseraError('BadRequest', `Invalid expression: '${other.v}' is not a band name (use b1, b2 …)${where}`);
  return [...indexes].sort((a, b) => a - b);
}

/**
 * Evaluates every block over `length` pixels. `inputs` binds names to bands; every variable of the
 * expression must be there (400 otherwise). Input arrays are only read.
 */
export function evaluateExpression(expr: Expression, inputs: ReadonlyMap<string, ExpressionInput>, length: number): ExpressionResult {
  expr.checkVariables(new Set(inputs.keys()));
  const dtypes = new Map<string, DType>();
  const arrays = new Map<string, BandArray>();
  for (const name of expr.variables) {
    const input = inputs.get(name)!;
    if (!(input.array instanceof ARRAY_OF[input.dtype]) || input.array.length < length) {
      throw new TesseraError('Internal', `expression input '${name}' is not ${length} values of ${input.dtype}`);
    }
    dtypes.set(name, input.dtype);
    arrays.set(name, input.array);
  }
  const { program, dtype } = expr.compile(dtypes);
  const bands = expr.blocks.map(() => allocate(dtype, length));
  program.run(arrays, bands, length);
  return { dtype, bands };
}

/**
 * rio-tiler `apply_expression` on an image whose bands carry the expression's names: one band per
 * block, each masked wherever any input band is masked; dataset statistics follow (evaluateRange).
 */
export function applyExpression(img: ImageData, expr: Expression): ImageData {
  const inputs = new Map(img.bandNames.map((name, i) => [name, { dtype: img.dtype, array: img.bands[i]! }]));
  const result = evaluateExpression(expr, inputs, img.width * img.height);
  const mask = intersectMasks(img.masks, img.width * img.height);
  const out: ImageData = {
    ...img,
    dtype: result.dtype,
    bands: result.bands,
    masks: result.bands.map(() => mask),
    bandNames: expr.blocks.map((b) => b.name),
  };
  delete out.datasetStatistics;
  if (img.datasetStatistics) {
    const range = evaluateRange(expr, img.bandNames, img.datasetStatistics);
    if (range) out.datasetStatistics = range;
  }
  return out;
}

/**
 * parseExpression with the last few expressions kept, with the programs they compiled: a render
 * thread meets the same expression tile after tile.
 */
export function cachedExpression(text: string): Expression {
  let expr = RECENT.get(text);
  if (expr) {
    RECENT.delete(text);
  } else {
    expr = parseExpression(text);
    if (RECENT.size >= RECENT_EXPRESSIONS) RECENT.delete(RECENT.keys().next().value!);
  }
  RECENT.set(text, expr);
  return expr;
}
const RECENT_EXPRESSIONS = 32;
const RECENT = new Map<string, Expression>();

/**
 * rio-tiler's propagation of dataset statistics through an expression: the blocks are evaluated
 * (as float64 scalars) at every combination of the bands' minimum and maximum, and each block's
 * range is the (min, max) of its results. `stats[i]` belongs to `bandNames[i]`. Only the bands the
 * expression reads are combined (the others cannot change a result). Returns undefined when that
 * would take more than MAX_RANGE_COMBINATIONS evaluations.
 *
 * rio-tiler evaluates with numpy.array(combination), which is int64 when every statistic is a
 * Python int; here they are always float64 (the same ranges unless integer overflow is involved).
 */
export function evaluateRange(
  expr: Expression,
  bandNames: readonly string[],
  stats: ReadonlyArray<readonly [number, number]>,
): Array<[number, number]> | undefined {
  if (stats.length !== bandNames.length) {
    throw new TesseraError('Internal', `${stats.length} statistics for ${bandNames.length} bands`);
  }
  expr.checkVariables(bandNames);
  const count = 2 ** expr.variables.length;
  if (count > MAX_RANGE_COMBINATIONS) return undefined;
  const inputs = new Map<string, ExpressionInput>();
  expr.variables.forEach((name, bit) => {
    const [min, max] = stats[bandNames.indexOf(name)]!;
    const values = new Float64Array(count);
    for (let combination = 0; combination < count; combination++) values[combination] = (combination >> bit) & 1 ? max : min;
    inputs.set(name, { dtype: 'float64', array: values });
  });
  const { bands } = evaluateExpression(expr, inputs, count);
  return bands.map((band) => {
    let min = band[0]!;
    let max = band[0]!;
    for (let i = 1; i < band.length; i++) {
      const v = band[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return [min, max];
  });
}

const isSet = (names: ReadonlySet<string> | readonly string[]): names is ReadonlySet<string> => !Array.isArray(names);

/** Characters Python's str.strip() removes (str.isspace), which differ from JavaScript's trim(). */
const PYTHON_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

function pythonStrip(s: string): { source: string; lead: number } {
  let start = 0;
  let end = s.length;
  while (start < end && PYTHON_SPACE.test(s[start]!)) start++;
  while (end > start && PYTHON_SPACE.test(s[end - 1]!)) end--;
  return { source: s.slice(start, end), lead: start };
}
