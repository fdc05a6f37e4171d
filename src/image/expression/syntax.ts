/**
 * Reads one expression block into a validated syntax tree, accepting what numexpr accepts: Python
 * expression syntax (numexpr runs the text as Python) restricted to numbers, names, True/False,
 * parentheses, unary `- + ~`, binary `+ - * / // % ** << >> & | ^`, one comparison per chain, and
 * calls of known functions. Constant subtrees are folded here with Python's own arithmetic, as
 * Python does before numexpr sees them. Every rejection is a 400 quoting the block and the
 * 1-based position in the whole expression.
 */
import { TesseraError } from '../../errors.js';
import { binaryOp, compareOp, ConstantError, isTruthy, pyBool, pyFloat, pyInt, unaryOp, type ArithmeticOp, type CompareOp, type PyValue } from './pyvalue.js';
import { FUNCTION_NAMES, FUNCTIONS, foldCall, isFunctionName, type FunctionSpec } from './functions.js';

export type Ast =
  /** `node` is set when numexpr would hold the constant as a ConstantNode (a folded call) rather than a Python value. */
  | { readonly t: 'const'; readonly value: PyValue; readonly node: boolean; readonly pos: number }
  | { readonly t: 'var'; readonly name: string; readonly pos: number }
  | { readonly t: 'unary'; readonly op: '-' | '~'; readonly operand: Ast; readonly pos: number }
  | { readonly t: 'binary'; readonly op: ArithmeticOp; readonly left: Ast; readonly right: Ast; readonly pos: number }
  | { readonly t: 'compare'; readonly op: CompareOp; readonly left: Ast; readonly right: Ast; readonly pos: number }
  | { readonly t: 'call'; readonly fn: FunctionSpec; readonly args: readonly Ast[]; readonly pos: number }
  | { readonly t: 'where'; readonly cond: Ast; readonly then: Ast; readonly otherwise: Ast; readonly pos: number };

/** Where a block sits in the whole expression, for messages. */
export interface BlockContext {
  /** The whole expression. */
  readonly text: string;
  /** The block, stripped. */
  readonly source: string;
  /** Index of `source` in `text`. */
  readonly offset: number;
}

const MAX_NODES = 500;
const MAX_DEPTH = 64;

/** 1-based position, counted in characters (code points), of a UTF-16 index of `text`. */
export function characterPosition(text: string, index: number): number {
  let count = 1;
  for (let i = 0; i < index && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= index) count++;
    else {
      count++;
      i++; // a surrogate pair is one character
    }
  }
  return count;
}

export function blockError(ctx: BlockContext, what: string, index: number, hint?: string): TesseraError {
  const at = characterPosition(ctx.text, index);
  return new TesseraError('BadRequest', `Invalid expression '${ctx.source}': ${what} at position ${at}${hint ? `; ${hint}` : ''}`);
}

// ---- tokens --------------------------------------------------------------------------------------

type Token =
  | { readonly t: 'number'; readonly value: PyValue; readonly text: string; readonly pos: number }
  | { readonly t: 'name'; readonly text: string; readonly pos: number }
  | { readonly t: 'op'; readonly text: string; readonly pos: number }
  | { readonly t: 'end'; readonly text: string; readonly pos: number };

const OPERATORS = ['**', '//', '<<', '>>', '<=', '>=', '==', '!=', '+', '-', '*', '/', '%', '&', '|', '^', '~', '<', '>', '(', ')', ','];

const DIGITS = String.raw`\d(?:_?\d)*`;
const EXPONENT = `[eE][+-]?${DIGITS}`;
/** Python's numeric literals (hex/octal/binary ints, decimal ints, floats), longest alternative first. */
const NUMBER = new RegExp(
  [
    '0[xX](?:_?[0-9a-fA-F])+',
    '0[oO](?:_?[0-7])+',
    '0[bB](?:_?[01])+',
    String.raw`(?:${DIGITS})?\.${DIGITS}(?:${EXPONENT})?`,
    String.raw`${DIGITS}\.(?:${EXPONENT})?`,
    `${DIGITS}${EXPONENT}`,
    DIGITS,
  ].join('|'),
  'y',
);
const IDENTIFIER = /[\p{XID_Start}_][\p{XID_Continue}]*/uy;
const IDENTIFIER_CHAR = /[\p{XID_Continue}]/u;

const PYTHON_KEYWORDS = new Set([
  'None',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

function tokenize(ctx: BlockContext): Token[] {
  const src = ctx.source;
  const tokens: Token[] = [];
  let depth = 0;
  let lineBreak: number | undefined;
  let i = 0;
  const abs = (k: number): number => ctx.offset + k;
  while (i < src.length) {
    const ch = src[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < src.length && src[i] !== '\n' && src[i] !== '\r') i++;
      continue;
    }
    if (ch === '\\' && (src[i + 1] === '\n' || src[i + 1] === '\r')) {
      i += src[i + 1] === '\r' && src[i + 2] === '\n' ? 3 : 2;
      continue;
    }
    if (ch === '\n' || ch === '\r') {
      // Outside parentheses a line break ends the expression: only blanks and comments may follow.
      if (depth === 0) lineBreak ??= i;
      i++;
      continue;
    }
    if (lineBreak !== undefined) {
      throw blockError(ctx, 'unexpected line break', abs(lineBreak), 'outside parentheses an expression must be on one line');
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(src);
    if (number) {
      const text = number[0];
      const next = src[i + text.length];
      if (next === 'j' || next === 'J') throw blockError(ctx, `complex number '${text}${next}'`, abs(i), 'complex numbers are not supported');
      if (next !== undefined && IDENTIFIER_CHAR.test(next)) throw blockError(ctx, `invalid number '${text}${next}'`, abs(i));
      tokens.push({ t: 'number', value: numberValue(ctx, text, abs(i)), text, pos: abs(i) });
      i += text.length;
      continue;
    }
    IDENTIFIER.lastIndex = i;
    const identifier = IDENTIFIER.exec(src);
    if (identifier) {
      tokens.push({ t: 'name', text: identifier[0], pos: abs(i) });
      i += identifier[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (op !== undefined) {
      if (op === '(') depth++;
      else if (op === ')') depth = Math.max(0, depth - 1);
      tokens.push({ t: 'op', text: op, pos: abs(i) });
      i += op.length;
      continue;
    }
    throw unexpectedCharacter(ctx, src, i);
  }
  tokens.push({ t: 'end', text: '', pos: abs(src.length) });
  return tokens;
}

function unexpectedCharacter(ctx: BlockContext, src: string, i: number): TesseraError {
  const ch = String.fromCodePoint(src.codePointAt(i)!);
  const at = ctx.offset + i;
  if (ch === '"' || ch === "'") return blockError(ctx, `unexpected ${ch}`, at, 'strings are not supported');
  if (ch === '.') return blockError(ctx, "unexpected '.'", at, 'attribute access is not supported');
  if (ch === '[' || ch === ']') return blockError(ctx, `unexpected '${ch}'`, at, 'subscripts are not supported');
  if (ch === '=') return blockError(ctx, "unexpected '='", at, "assignments are not supported (use '==' to compare)");
  if (ch === '!') return blockError(ctx, "unexpected '!'", at, "use '!=' to compare or '~' for not");
  return blockError(ctx, `unexpected character '${ch}'`, at);
}

function numberValue(ctx: BlockContext, text: string, pos: number): PyValue {
  const plain = text.replace(/_/g, '');
  if (/^0[xob]/i.test(plain)) return pyInt(BigInt(plain.slice(0, 2).toLowerCase() + plain.slice(2)));
  if (/^\d+$/.test(plain)) {
    if (/^0+[1-9]/.test(plain)) throw blockError(ctx, `invalid number '${text}'`, pos, 'leading zeros in decimal integers are not permitted');
    return pyInt(BigInt(plain));
  }
  // numexpr's sanitiser refuses a '.' followed by anything but plain digits and an exponent.
  const fraction = text.indexOf('.');
  if (fraction >= 0 && text.includes('_', fraction)) throw blockError(ctx, `invalid number '${text}'`, pos, "no '_' after the decimal point");
  return pyFloat(Number(plain));
}

// ---- parser --------------------------------------------------------------------------------------

const OPERAND_HINT = "expected a number, a name, '(' or a unary operator";
const COMPARISONS = new Set(['<', '<=', '==', '!=', '>=', '>']);
/** Binary levels from loosest to tightest (Python's precedence; comparisons are handled above them). */
const LEVELS: readonly (readonly ArithmeticOp[])[] = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '//', '%']];
/** Operators numexpr's nodes implement only with the node on the left (no reflected method). */
const NO_REFLECTED = new Set<ArithmeticOp>(['&', '|', '^', '//']);

export interface ParsedBlock {
  readonly ast: Ast;
  /** Names referenced, in order of first appearance, with the index of that appearance. */
  readonly names: ReadonlyMap<string, number>;
}

export function parseBlock(ctx: BlockContext): ParsedBlock {
  return new Parser(ctx, tokenize(ctx)).parseAll();
}

class Parser {
  private index = 0;
  private depth = 0;
  private nodes = 0;
  private readonly names = new Map<string, number>();

  constructor(
    private readonly ctx: BlockContext,
    private readonly tokens: readonly Token[],
  ) {}

  parseAll(): ParsedBlock {
    const ast = this.expression();
    const next = this.peek();
    if (next.t !== 'end') {
      throw this.error(
        `unexpected ${describeToken(next)}`,
        next.pos,
        next.text === ')' ? "no '(' matches it" : 'expected an operator or the end of the expression',
      );
    }
    return { ast, names: this.names };
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private take(): Token {
    return this.tokens[this.index++]!;
  }

  private isOp(text: string): boolean {
    const tok = this.peek();
    return tok.t === 'op' && tok.text === text;
  }

  private error(what: string, pos: number, hint?: string): TesseraError {
    return blockError(this.ctx, what, pos, hint);
  }

  private count(pos: number): void {
    if (++this.nodes > MAX_NODES) throw this.error(`more than ${MAX_NODES} terms`, pos, 'the expression is too large');
  }

  private nest<T>(pos: number, parse: () => T): T {
    if (++this.depth > MAX_DEPTH) throw this.error(`nesting deeper than ${MAX_DEPTH} levels`, pos, 'the expression is too deeply nested');
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expression(): Ast {
    const left = this.binaryLevel(0);
    const first = this.peek();
    if (!(first.t === 'op' && COMPARISONS.has(first.text))) return left;
    this.take();
    const right = this.binaryLevel(0);
    const second = this.peek();
    if (second.t === 'op' && COMPARISONS.has(second.text)) {
      throw this.error(`chained comparison '${second.text}'`, second.pos, "numexpr cannot chain comparisons; write '(a < b) & (b < c)'");
    }
    return this.compare(first.text as CompareOp, left, right, first.pos);
  }

  private binaryLevel(level: number): Ast {
    if (level === LEVELS.length) return this.unary();
    const ops = LEVELS[level]!;
    let left = this.binaryLevel(level + 1);
    for (;;) {
      const tok = this.peek();
      if (tok.t !== 'op' || !ops.includes(tok.text as ArithmeticOp)) return left;
      this.take();
      const right = this.binaryLevel(level + 1);
      left = this.binary(tok.text as ArithmeticOp, left, right, tok.pos);
    }
  }

  private unary(): Ast {
    const tok = this.peek();
    if (tok.t === 'op' && (tok.text === '-' || tok.text === '+' || tok.text === '~')) {
      this.take();
      const operand = this.nest(tok.pos, () => this.unary());
      return this.unaryNode(tok.text, operand, tok.pos);
    }
    return this.power();
  }

  /** Python's `power: primary ['**' u_expr]`: binds tighter than a unary minus on its left, right-associative. */
  private power(): Ast {
    const base = this.primary();
    const tok = this.peek();
    if (!(tok.t === 'op' && tok.text === '**')) return base;
    this.take();
    const exponent = this.nest(tok.pos, () => this.unary());
    return this.binary('**', base, exponent, tok.pos);
  }

  private primary(): Ast {
    const atom = this.atom();
    const next = this.peek();
    if (next.t === 'op' && next.text === '(') throw this.error("unexpected '('", next.pos, 'only functions can be called');
    return atom;
  }

  private atom(): Ast {
    const tok = this.take();
    if (tok.t === 'number') {
      this.count(tok.pos);
      return { t: 'const', value: tok.value, node: false, pos: tok.pos };
    }
    if (tok.t === 'name') return this.name(tok);
    if (tok.t === 'op' && tok.text === '(') {
      if (this.isOp(')')) throw this.error("empty parentheses '()'", tok.pos, 'tuples are not supported');
      const inner = this.nest(tok.pos, () => this.expression());
      this.closeParen(tok.pos, this.isOp(',') ? 'tuples are not supported' : undefined);
      return inner;
    }
    if (tok.t === 'end') throw this.error('unexpected end of expression', tok.pos, OPERAND_HINT);
    throw this.error(`unexpected ${describeToken(tok)}`, tok.pos, OPERAND_HINT);
  }

  private closeParen(openPos: number, hint?: string): void {
    const tok = this.take();
    if (tok.t === 'op' && tok.text === ')') return;
    const opened = characterPosition(this.ctx.text, openPos);
    if (tok.t === 'end') throw this.error("missing ')'", tok.pos, `to close '(' at position ${opened}`);
    throw this.error(`unexpected ${describeToken(tok)}`, tok.pos, hint ?? `expected ')' to close '(' at position ${opened}`);
  }

  private name(tok: Token): Ast {
    const name = tok.text;
    this.count(tok.pos);
    if (name === 'True' || name === 'False') return { t: 'const', value: pyBool(name === 'True'), node: false, pos: tok.pos };
    if (name === 'and' || name === 'or' || name === 'not') {
      throw this.error(`unexpected '${name}'`, tok.pos, "use '&' for and, '|' for or, '~' for not");
    }
    if (PYTHON_KEYWORDS.has(name)) throw this.error(`unexpected keyword '${name}'`, tok.pos, 'Python statements and keywords are not supported');
    if (/^__\w+__$/.test(name)) throw this.error(`forbidden name '${name}'`, tok.pos);
    if (this.isOp('(')) return this.call(name, tok.pos);
    if (isFunctionName(name)) throw this.error(`function '${name}' used without arguments`, tok.pos, `call it: ${name}(...)`);
    if (!this.names.has(name)) this.names.set(name, tok.pos);
    return { t: 'var', name, pos: tok.pos };
  }

  private call(name: string, pos: number): Ast {
    if (!isFunctionName(name)) {
      throw this.error(`unknown function '${name}'`, pos, `functions are ${FUNCTION_NAMES.join(', ')}`);
    }
    this.count(pos);
    const open = this.take();
    const args = this.nest(open.pos, () => this.arguments(open.pos));
    const arity = name === 'where' ? 3 : FUNCTIONS.get(name)!.arity;
    if (args.length !== arity) {
      throw this.error(`${name}() takes ${arity} argument${arity > 1 ? 's' : ''} but ${args.length} given`, pos);
    }
    if (name === 'where') return this.where(args[0]!, args[1]!, args[2]!, pos);
    const fn = FUNCTIONS.get(name)!;
    const constants = args.every((a) => a.t === 'const');
    if (!constants) return { t: 'call', fn, args, pos };
    return {
      t: 'const',
      value: this.fold(pos, () =>
        foldCall(
          fn,
          args.map((a) => (a as { value: PyValue }).value),
        ),
      ),
      node: true,
      pos,
    };
  }

  private arguments(openPos: number): Ast[] {
    const args: Ast[] = [];
    if (this.isOp(')')) {
      this.take();
      return args;
    }
    for (;;) {
      args.push(this.expression());
      if (this.isOp(',')) {
        this.take();
        if (this.isOp(')')) break; // Python allows a trailing comma
        continue;
      }
      break;
    }
    this.closeParen(openPos, "expected ',' or ')' after a function argument");
    return args;
  }

  /** numexpr's `where` with a constant condition returns the chosen branch itself, untyped by the other. */
  private where(cond: Ast, then: Ast, otherwise: Ast, pos: number): Ast {
    if (cond.t !== 'const') return { t: 'where', cond, then, otherwise, pos };
    const chosen = isTruthy(cond.value) ? then : otherwise;
    return chosen.t === 'const' ? { ...chosen, node: true } : chosen;
  }

  private fold(pos: number, compute: () => PyValue): PyValue {
    try {
      return compute();
    } catch (e) {
      if (e instanceof ConstantError) throw this.error(e.message, pos, 'in a constant part of the expression');
      throw e;
    }
  }

  private unaryNode(op: string, operand: Ast, pos: number): Ast {
    if (operand.t === 'const') {
      // numexpr's ConstantNode returns itself for unary plus (a Python value becomes an int).
      if (op === '+' && operand.node) return operand;
      return { t: 'const', value: this.fold(pos, () => unaryOp(op as '-' | '+' | '~', operand.value)), node: operand.node, pos };
    }
    if (op === '+') return operand;
    this.count(pos);
    return { t: 'unary', op: op as '-' | '~', operand, pos };
  }

  private binary(op: ArithmeticOp, left: Ast, right: Ast, pos: number): Ast {
    if (left.t === 'const' && right.t === 'const') {
      // numexpr does not fold a ConstantNode power: its own check on integer powers applies.
      if (op === '**' && left.node && left.value.type === 'int' && right.value.type === 'int' && right.value.value < 0n) {
        throw this.error('integers to negative integer powers are not allowed', pos);
      }
      return { t: 'const', value: this.fold(pos, () => binaryOp(op, left.value, right.value)), node: left.node || right.node, pos };
    }
    if (left.t === 'const' && !left.node && NO_REFLECTED.has(op)) {
      throw this.error(`a constant on the left of '${op}'`, pos, `numexpr does not support it; put the constant on the right`);
    }
    this.count(pos);
    return { t: 'binary', op, left, right, pos };
  }

  private compare(op: CompareOp, left: Ast, right: Ast, pos: number): Ast {
    if (left.t === 'const' && right.t === 'const') {
      return { t: 'const', value: this.fold(pos, () => compareOp(op, left.value, right.value)), node: left.node || right.node, pos };
    }
    this.count(pos);
    return { t: 'compare', op, left, right, pos };
  }
}

function describeToken(tok: Token): string {
  if (tok.t === 'end') return 'end of expression';
  if (tok.t === 'name') return `name '${tok.text}'`;
  if (tok.t === 'number') return `number '${tok.text}'`;
  return `'${tok.text}'`;
}
