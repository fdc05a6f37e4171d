/**
 * Types a block's syntax tree the way numexpr 2.14 builds and types its own tree, given the kinds
 * of the inputs: the result kind of every operation, the kind its operands are cast to, and the
 * rewrites numexpr's default ('aggressive') optimisation makes, which change results and types:
 * `x ** c` for a constant c that is a multiple of 0.5 within ±50 becomes a chain of products (and a
 * sqrt, and a reciprocal), so `int ** 2` stays int and wraps; `float64 / c` becomes a product
 * with 1/c. Operations numexpr has no opcode for (bool subtraction, shifts of floats, a non-bool
 * `where` condition …) are refused here with a 400, where numexpr raises.
 */
import { blockError, type Ast, type BlockContext } from './syntax.js';
import { commonKind, DTYPE_OF_KIND, isFloatKind, isIntegerKind, kindRank, maxKind, minKind, type Kind } from './kinds.js';
import { ConstantError, constantKind, pyInt, toNumber, type PyValue } from './pyvalue.js';
import type { FunctionSpec } from './functions.js';

export type OpName =
  | 'add'
  | 'sub'
  | 'mul'
  | 'div'
  | 'floordiv'
  | 'mod'
  | 'pow'
  | 'lshift'
  | 'rshift'
  | 'and'
  | 'or'
  | 'xor'
  | 'neg'
  | 'invert'
  | 'gt'
  | 'ge'
  | 'eq'
  | 'ne'
  | 'where'
  | 'ones_like'
  | 'sqrt'
  | `fn:${string}`;

export type TypedNode =
  | { readonly t: 'const'; readonly kind: Kind; readonly value: number; readonly py: PyValue }
  | { readonly t: 'input'; readonly name: string; readonly kind: Kind }
  | {
      readonly t: 'op';
      readonly op: OpName;
      /** Kind of the result. */
      readonly kind: Kind;
      /** Kind every operand is cast to before the operation (a `where` condition stays bool). */
      readonly operandKind: Kind;
      readonly args: readonly TypedNode[];
    };

const ARITHMETIC: Record<string, OpName> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '//': 'floordiv',
  '%': 'mod',
  '<<': 'lshift',
  '>>': 'rshift',
  '&': 'and',
  '|': 'or',
  '^': 'xor',
};

/** The operand kinds numexpr has an opcode for, per operation (bool add/mul are rewritten to or/and first). */
const SUPPORTED: Partial<Record<OpName, readonly Kind[]>> = {
  add: ['int', 'long', 'float', 'double'],
  sub: ['int', 'long', 'float', 'double'],
  mul: ['int', 'long', 'float', 'double'],
  div: ['float', 'double'],
  floordiv: ['int', 'long', 'float', 'double'],
  mod: ['int', 'long', 'float', 'double'],
  pow: ['int', 'long', 'float', 'double'],
  neg: ['int', 'long', 'float', 'double'],
  ones_like: ['int', 'long', 'float', 'double'],
  sqrt: ['float', 'double'],
  lshift: ['int', 'long'],
  rshift: ['int', 'long'],
  and: ['bool', 'int', 'long'],
  or: ['bool', 'int', 'long'],
  xor: ['bool', 'int', 'long'],
  invert: ['bool', 'int', 'long'],
};

/** numexpr's aggressive optimisation expands constant powers up to this magnitude. */
const POWER_EXPANSION_LIMIT = 50;

/**
 * Types the blocks of one expression; inputs are shared between blocks so each is converted once.
 *
 * numexpr builds every expression twice: first with every name typed float64 (to find the names),
 * then with the real kinds. Only errors raised while *building* can come from the first pass (the
 * notable one: `x / 0.0` raises ZeroDivisionError there whatever x's dtype, through the
 * reciprocal rewrite). `constructionOnly` reproduces that pass: no opcode checks, only those errors.
 */
export class Typer {
  private readonly inputs = new Map<string, TypedNode>();
  private ctx: BlockContext = { text: '', source: '', offset: 0 };

  constructor(
    private readonly kindOf: (name: string) => Kind,
    private readonly constructionOnly = false,
  ) {}

  typeBlock(ast: Ast, ctx: BlockContext): TypedNode {
    this.ctx = ctx;
    return this.type(ast);
  }

  private type(ast: Ast): TypedNode {
    switch (ast.t) {
      case 'const':
        return this.constant(ast.value, ast.pos);
      case 'var':
        return this.input(ast.name);
      case 'unary': {
        const operand = this.type(ast.operand);
        return this.op(ast.op === '-' ? 'neg' : 'invert', [operand], operand.kind, operand.kind, ast.op, ast.pos);
      }
      case 'binary':
        return this.binary(ast.op, this.type(ast.left), this.type(ast.right), ast.pos);
      case 'compare': {
        const left = this.type(ast.left);
        const right = this.type(ast.right);
        const swap = ast.op === '<' || ast.op === '<=';
        const op: OpName = ast.op === '==' ? 'eq' : ast.op === '!=' ? 'ne' : ast.op === '<' || ast.op === '>' ? 'gt' : 'ge';
        let operandKind = commonKind([left.kind, right.kind]);
        // numexpr has no ordered comparison of bools: both sides become int32.
        if (operandKind === 'bool' && (op === 'gt' || op === 'ge')) operandKind = 'int';
        return this.op(op, swap ? [right, left] : [left, right], 'bool', operandKind, ast.op, ast.pos);
      }
      case 'call':
        return this.call(
          ast.fn,
          ast.args.map((a) => this.type(a)),
          ast.pos,
        );
      case 'where': {
        const cond = this.type(ast.cond);
        const then = this.type(ast.then);
        const otherwise = this.type(ast.otherwise);
        if (cond.kind !== 'bool' && !this.constructionOnly) {
          throw blockError(this.ctx, `where() condition is ${DTYPE_OF_KIND[cond.kind]}`, ast.pos, 'its first argument must be a comparison or another bool');
        }
        const kind = commonKind([cond.kind, then.kind, otherwise.kind]);
        return { t: 'op', op: 'where', kind, operandKind: kind, args: [cond, then, otherwise] };
      }
    }
  }

  private constant(value: PyValue, pos: number): TypedNode {
    try {
      return { t: 'const', kind: constantKind(value), value: toNumber(value), py: value };
    } catch (e) {
      if (e instanceof ConstantError) throw blockError(this.ctx, e.message, pos);
      throw e;
    }
  }

  private input(name: string): TypedNode {
    let node = this.inputs.get(name);
    if (!node) {
      node = { t: 'input', name, kind: this.kindOf(name) };
      this.inputs.set(name, node);
    }
    return node;
  }

  private op(op: OpName, args: TypedNode[], kind: Kind, operandKind: Kind, symbol: string, pos: number): TypedNode {
    const supported = SUPPORTED[op];
    if (supported && !supported.includes(operandKind) && !this.constructionOnly) {
      const hint = operandKind === 'bool' && op === 'neg' ? "use '~' to negate a condition" : undefined;
      throw blockError(this.ctx, `operator '${symbol}' is not supported for ${DTYPE_OF_KIND[operandKind]} operands`, pos, hint);
    }
    return { t: 'op', op, kind, operandKind, args };
  }

  /** numexpr's OpNode: the common kind, with bool `+`/`*` meaning or/and. */
  private arithmetic(op: OpName, left: TypedNode, right: TypedNode, symbol: string, pos: number): TypedNode {
    const kind = commonKind([left.kind, right.kind]);
    let name = op;
    if (kind === 'bool' && op === 'add') name = 'or';
    if (kind === 'bool' && op === 'mul') name = 'and';
    return this.op(name, [left, right], kind, kind, symbol, pos);
  }

  private binary(symbol: string, left: TypedNode, right: TypedNode, pos: number): TypedNode {
    if (symbol === '/') return this.trueDivide(left, right, pos);
    if (symbol === '**') return this.power(left, right, pos);
    return this.arithmetic(ARITHMETIC[symbol]!, left, right, symbol, pos);
  }

  private trueDivide(left: TypedNode, right: TypedNode, pos: number): TypedNode {
    if (right.t === 'const' && left.kind === right.kind && isFloatKind(left.kind)) {
      // numexpr multiplies by the reciprocal of a float64 constant (Python raises for 1/0.0).
      if (right.value === 0 && right.py.type === 'float') throw blockError(this.ctx, 'float division by zero', pos);
      const reciprocal = 1 / right.value;
      return this.arithmetic('mul', left, { t: 'const', kind: 'double', value: reciprocal, py: { type: 'float', value: reciprocal } }, '/', pos);
    }
    let kind = commonKind([left.kind, right.kind]);
    if (kindRank(kind) <= kindRank('long')) kind = 'double';
    return this.op('div', [left, right], kind, kind, '/', pos);
  }

  private power(base: TypedNode, exponent: TypedNode, pos: number): TypedNode {
    if (exponent.t === 'const') {
      const x = exponent.value;
      if (!Number.isFinite(x)) throw blockError(this.ctx, 'the exponent is not finite', pos);
      if (isIntegerKind(base.kind) && isIntegerKind(exponent.kind) && x < 0) {
        throw blockError(this.ctx, 'integers to negative integer powers are not allowed', pos, `write '** ${x}.0' for a float result`);
      }
      if (Number.isInteger(2 * x) && Math.abs(x) <= POWER_EXPANSION_LIMIT) return this.expandPower(base, x, pos);
    }
    return this.arithmetic('pow', base, exponent, '**', pos);
  }

  /** numexpr's expansion of `a ** x` into products by binary exponentiation (the same tree, so the same rounding). */
  private expandPower(a: TypedNode, x: number, pos: number): TypedNode {
    const n = Math.trunc(Math.abs(x));
    const half = Math.trunc(Math.abs(2 * x)) % 2 === 1;
    let result: TypedNode | undefined;
    let square = a;
    for (let mask = 1; ; mask *= 2) {
      if (n & mask) result = result ? this.arithmetic('mul', result, square, '**', pos) : square;
      if (mask * 2 > n) break;
      square = this.arithmetic('mul', square, square, '**', pos);
    }
    if (half) {
      const kind = isIntegerKind(a.kind) ? 'double' : a.kind;
      const root = this.op('sqrt', [a], kind, kind, '**', pos);
      result = result ? this.arithmetic('mul', result, root, '**', pos) : root;
    }
    result ??= this.op('ones_like', [a], a.kind, a.kind, '**', pos);
    if (x < 0) {
      const one: TypedNode = { t: 'const', kind: 'int', value: 1, py: pyInt(1n) };
      result = this.trueDivide(one, result, pos);
    }
    return result;
  }

  private call(fn: FunctionSpec, args: TypedNode[], pos: number): TypedNode {
    const common = commonKind(args.map((a) => a.kind));
    if (fn.returnsBool) return this.op(`fn:${fn.name}`, args, 'bool', common === 'double' ? 'double' : 'float', fn.name, pos);
    let kind: Kind;
    if (isIntegerKind(common)) kind = fn.keepsIntegers ? common : 'double';
    else {
      kind = maxKind(common, fn.minKind);
      if (fn.maxKind) kind = minKind(kind, fn.maxKind);
    }
    return this.op(`fn:${fn.name}`, args, kind, kind, fn.name, pos);
  }
}
