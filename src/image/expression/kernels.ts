/**
 * The vectorised operations a compiled expression is made of: each kernel is one tight loop over
 * `n` elements of typed arrays (`o[oo + i] = f(a[ao + i], b[bo + i], …)`), with numexpr's C
 * semantics per kind. Operands always arrive in their kind's canonical storage (bool Uint8Array,
 * int Int32Array, long and double Float64Array, float Float32Array), so each loop sees at most a
 * few array types. Storing into an Int32Array wraps like C's int32, storing into a Float32Array
 * rounds like C's float. int64 ('long') values live in doubles: exact to 2^53; results beyond go
 * through BigInt (rare, allocating) so that wrapping at 2^64 still matches numexpr, and -0 is
 * normalised to 0 (a C integer has no negative zero, and it would flip the sign of a later x/0).
 */
import type { BandArray } from '../image-data.js';
import type { Kind } from './kinds.js';
import { copySign, cPow, nextAfter, rint, signBit, signOf } from './cmath.js';

export type Kernel = (n: number, o: BandArray, oo: number, a: BandArray, ao: number, b: BandArray, bo: number, c: BandArray, co: number) => void;

const SAFE = Number.MAX_SAFE_INTEGER;
const TWO63 = 2 ** 63;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const FLOAT32_MAX = 3.4028234663852886e38;

const wrap64 = (x: bigint): number => Number(BigInt.asIntN(64, x));
const isInt32 = (x: number): boolean => x >= INT32_MIN && x <= INT32_MAX;

// ---- copies and stores ---------------------------------------------------------------------------

/**
 * Conversion by assignment: upcasts between kinds, and plain stores of non-float results.
 * TypedArray.prototype.set converts element by element exactly as `o[i] = a[i]` does, in native
 * code: a JavaScript loop here sees every pair of array types and ran 4–5× slower.
 */
const copy: Kernel = (n, o, oo, a, ao) => {
  o.set(a.subarray(ao, ao + n), oo);
};

/** numpy.nan_to_num for a float32 result: NaN → 0, ±inf → ±float32 max. */
export const storeNanToNumFloat32: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) {
    const v = a[ao + i]!;
    o[oo + i] = v !== v ? 0 : v === Infinity ? FLOAT32_MAX : v === -Infinity ? -FLOAT32_MAX : v;
  }
};

/** numpy.nan_to_num for a float64 result: NaN → 0, ±inf → ±float64 max. */
export const storeNanToNumFloat64: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) {
    const v = a[ao + i]!;
    o[oo + i] = v !== v ? 0 : v === Infinity ? Number.MAX_VALUE : v === -Infinity ? -Number.MAX_VALUE : v;
  }
};

export const storePlain: Kernel = copy;
export const castKernel: Kernel = copy;

const onesLike: Kernel = (n, o, oo) => {
  for (let i = 0; i < n; i++) o[oo + i] = 1;
};

// ---- arithmetic (int32 wraps through the Int32Array store; float32 rounds through its store) -----

const add: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! + b[bo + i]!;
};
const sub: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! - b[bo + i]!;
};
const mul: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! * b[bo + i]!;
};
const mulInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = Math.imul(a[ao + i]!, b[bo + i]!);
};
const div: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! / b[bo + i]!;
};
const neg: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) o[oo + i] = -a[ao + i]!;
};

/** numexpr: `y == 0 ? 0 : ((x % y) + y) % y` with C int32 wrap in the middle. */
const modInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = y === 0 ? 0 : (((x % y) + y) | 0) % y;
  }
};
/** numexpr: `x - floorf(x / y) * y`, every step rounded to float32. */
const modFloat: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = x - Math.fround(Math.floor(Math.fround(x / y)) * y);
  }
};
const modDouble: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = x - Math.floor(x / y) * y;
  }
};

/** numexpr: C division rounded towards minus infinity; by zero gives 0 (exact for int32 operands). */
const floordivInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const y = b[bo + i]!;
    o[oo + i] = y === 0 ? 0 : Math.floor(a[ao + i]! / y);
  }
};
const floordivFloat: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = Math.floor(Math.fround(a[ao + i]! / b[bo + i]!));
};
const floordivDouble: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = Math.floor(a[ao + i]! / b[bo + i]!);
};

/**
 * numexpr: negative exponents give C's `1 / x` (1, -1 or 0; numexpr crashes on 0, here 0); other
 * results that do not fit int32 come out as INT32_MIN, as x86's conversion does.
 */
const powInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    if (y < 0) o[oo + i] = x === 1 ? 1 : x === -1 ? -1 : 0;
    else {
      const r = Math.pow(x, y);
      o[oo + i] = isInt32(r) ? r : INT32_MIN;
    }
  }
};
const powFloating: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = cPow(a[ao + i]!, b[bo + i]!);
};

/** numexpr: shift counts outside 0–31 give 0 (left) or a shift by 31 (right). */
const lshiftInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const y = b[bo + i]!;
    o[oo + i] = y >>> 0 < 32 ? a[ao + i]! << y : 0;
  }
};
const rshiftInt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const y = b[bo + i]!;
    o[oo + i] = a[ao + i]! >> (y >>> 0 < 32 ? y : 31);
  }
};

/** On bools (0/1) these are the logical operations. */
const bitAnd: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! & b[bo + i]!;
};
const bitOr: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! | b[bo + i]!;
};
const bitXor: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! ^ b[bo + i]!;
};
const notBool: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! ^ 1;
};
const invertInt: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) o[oo + i] = ~a[ao + i]!;
};

// ---- int64 held in doubles -----------------------------------------------------------------------

const addLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    const r = x + y;
    o[oo + i] = r > SAFE || r < -SAFE ? wrap64(BigInt(x) + BigInt(y)) : r;
  }
};
const subLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    const r = x - y;
    o[oo + i] = r > SAFE || r < -SAFE ? wrap64(BigInt(x) - BigInt(y)) : r;
  }
};
const mulLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    const r = x * y;
    o[oo + i] = r > SAFE || r < -SAFE ? wrap64(BigInt(x) * BigInt(y)) : r + 0; // + 0: int64 has no -0
  }
};
const negLong: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) {
    const r = -a[ao + i]!;
    o[oo + i] = r >= TWO63 ? -TWO63 : r + 0;
  }
};
const modLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    if (y === 0) o[oo + i] = 0;
    else if (Math.abs(x) <= SAFE && Math.abs(y) <= SAFE) o[oo + i] = (((x % y) + y) % y) + 0;
    else {
      const bx = BigInt(x);
      const by = BigInt(y);
      o[oo + i] = wrap64(BigInt.asIntN(64, (bx % by) + by) % by);
    }
  }
};
const floordivLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    if (y === 0) o[oo + i] = 0;
    else if (Math.abs(x) <= SAFE && Math.abs(y) <= SAFE) {
      const r = x % y;
      o[oo + i] = (x - r) / y - (r !== 0 && x < 0 !== y < 0 ? 1 : 0) + 0;
    } else {
      const bx = BigInt(x);
      const by = BigInt(y);
      const q = bx / by;
      o[oo + i] = wrap64(bx % by !== 0n && bx < 0n !== by < 0n ? q - 1n : q);
    }
  }
};
/** numexpr: `llround(pow(x, y))`; out of int64 range gives INT64_MIN, negative exponents C's `1 / x`. */
const powLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    if (y < 0) {
      o[oo + i] = x === 1 ? 1 : x === -1 ? -1 : 0;
      continue;
    }
    const r = Math.pow(x, y);
    if (Math.abs(r) <= SAFE) o[oo + i] = r;
    else if (Math.abs(r) > 2 * TWO63) o[oo + i] = -TWO63;
    else {
      const exact = BigInt(x) ** BigInt(y);
      o[oo + i] = exact >= BigInt(TWO63) || exact < -BigInt(TWO63) ? -TWO63 : Number(exact);
    }
  }
};
const lshiftLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    if (!(y >= 0 && y < 64)) o[oo + i] = 0;
    else {
      const r = x * 2 ** y;
      o[oo + i] = Math.abs(r) <= SAFE ? r : wrap64(BigInt(x) << BigInt(y));
    }
  }
};
const rshiftLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const y = b[bo + i]!;
    o[oo + i] = Math.floor(a[ao + i]! / 2 ** (y >= 0 && y < 64 ? y : 63));
  }
};
const bitAndLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = isInt32(x) && isInt32(y) ? x & y : Number(BigInt(x) & BigInt(y));
  }
};
const bitOrLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = isInt32(x) && isInt32(y) ? x | y : Number(BigInt(x) | BigInt(y));
  }
};
const bitXorLong: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    const y = b[bo + i]!;
    o[oo + i] = isInt32(x) && isInt32(y) ? x ^ y : Number(BigInt(x) ^ BigInt(y));
  }
};
const invertLong: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) {
    const x = a[ao + i]!;
    o[oo + i] = Math.abs(x) <= SAFE ? -x - 1 : Number(~BigInt(x));
  }
};

// ---- comparisons and selection ---------------------------------------------------------------------

const gt: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! > b[bo + i]! ? 1 : 0;
};
const ge: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! >= b[bo + i]! ? 1 : 0;
};
const eq: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! === b[bo + i]! ? 1 : 0;
};
const ne: Kernel = (n, o, oo, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! !== b[bo + i]! ? 1 : 0;
};
/** where(c, x, y): the condition is the first operand, a bool array. */
const where: Kernel = (n, o, oo, c, co, a, ao, b, bo) => {
  for (let i = 0; i < n; i++) o[oo + i] = c[co + i]! !== 0 ? a[ao + i]! : b[bo + i]!;
};

// ---- functions (float32 results are rounded by the store, like numexpr's float functions) ---------

const sqrt: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) o[oo + i] = Math.sqrt(a[ao + i]!);
};

const FLOAT_FUNCTIONS: Record<string, Kernel> = {
  sin: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.sin(a[ao + i]!);
  },
  cos: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.cos(a[ao + i]!);
  },
  tan: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.tan(a[ao + i]!);
  },
  arcsin: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.asin(a[ao + i]!);
  },
  arccos: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.acos(a[ao + i]!);
  },
  arctan: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.atan(a[ao + i]!);
  },
  arctan2: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.atan2(a[ao + i]!, b[bo + i]!);
  },
  sinh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.sinh(a[ao + i]!);
  },
  cosh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.cosh(a[ao + i]!);
  },
  tanh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.tanh(a[ao + i]!);
  },
  arcsinh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.asinh(a[ao + i]!);
  },
  arccosh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.acosh(a[ao + i]!);
  },
  arctanh: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.atanh(a[ao + i]!);
  },
  log: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.log(a[ao + i]!);
  },
  log10: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.log10(a[ao + i]!);
  },
  log1p: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.log1p(a[ao + i]!);
  },
  log2: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.log2(a[ao + i]!);
  },
  exp: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.exp(a[ao + i]!);
  },
  expm1: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.expm1(a[ao + i]!);
  },
  sqrt,
  abs: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.abs(a[ao + i]!);
  },
  ceil: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.ceil(a[ao + i]!);
  },
  floor: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.floor(a[ao + i]!);
  },
  trunc: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.trunc(a[ao + i]!);
  },
  round: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = rint(a[ao + i]!);
  },
  sign: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = signOf(a[ao + i]!);
  },
  fmod: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = a[ao + i]! % b[bo + i]!;
  },
  hypot: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.hypot(a[ao + i]!, b[bo + i]!);
  },
  copysign: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = copySign(a[ao + i]!, b[bo + i]!);
  },
  nextafter: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = nextAfter(a[ao + i]!, b[bo + i]!);
  },
  maximum: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.max(a[ao + i]!, b[bo + i]!);
  },
  minimum: (n, o, oo, a, ao, b, bo) => {
    for (let i = 0; i < n; i++) o[oo + i] = Math.min(a[ao + i]!, b[bo + i]!);
  },
  isnan: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) {
      const v = a[ao + i]!;
      o[oo + i] = v !== v ? 1 : 0;
    }
  },
  isinf: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) {
      const v = a[ao + i]!;
      o[oo + i] = v === Infinity || v === -Infinity ? 1 : 0;
    }
  },
  isfinite: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) {
      const v = a[ao + i]!;
      o[oo + i] = v - v === 0 ? 1 : 0;
    }
  },
  signbit: (n, o, oo, a, ao) => {
    for (let i = 0; i < n; i++) o[oo + i] = signBit(a[ao + i]!);
  },
};

const signInteger: Kernel = (n, o, oo, a, ao) => {
  for (let i = 0; i < n; i++) {
    const v = a[ao + i]!;
    o[oo + i] = v > 0 ? 1 : v < 0 ? -1 : 0;
  }
};

// ---- table ---------------------------------------------------------------------------------------

const TABLE = new Map<string, Kernel>();
function define(op: string, kinds: readonly Kind[], kernel: Kernel): void {
  for (const kind of kinds) TABLE.set(`${op}:${kind}`, kernel);
}

const FLOATING: readonly Kind[] = ['float', 'double'];
define('add', ['int', 'float', 'double'], add);
define('add', ['long'], addLong);
define('sub', ['int', 'float', 'double'], sub);
define('sub', ['long'], subLong);
define('mul', ['int'], mulInt);
define('mul', FLOATING, mul);
define('mul', ['long'], mulLong);
define('div', FLOATING, div);
define('mod', ['int'], modInt);
define('mod', ['long'], modLong);
define('mod', ['float'], modFloat);
define('mod', ['double'], modDouble);
define('floordiv', ['int'], floordivInt);
define('floordiv', ['long'], floordivLong);
define('floordiv', ['float'], floordivFloat);
define('floordiv', ['double'], floordivDouble);
define('pow', ['int'], powInt);
define('pow', ['long'], powLong);
define('pow', FLOATING, powFloating);
define('neg', ['int', 'float', 'double'], neg);
define('neg', ['long'], negLong);
define('lshift', ['int'], lshiftInt);
define('lshift', ['long'], lshiftLong);
define('rshift', ['int'], rshiftInt);
define('rshift', ['long'], rshiftLong);
define('and', ['bool', 'int'], bitAnd);
define('and', ['long'], bitAndLong);
define('or', ['bool', 'int'], bitOr);
define('or', ['long'], bitOrLong);
define('xor', ['bool', 'int'], bitXor);
define('xor', ['long'], bitXorLong);
define('invert', ['bool'], notBool);
define('invert', ['int'], invertInt);
define('invert', ['long'], invertLong);
define('gt', ['int', 'long', 'float', 'double'], gt);
define('ge', ['int', 'long', 'float', 'double'], ge);
define('eq', ['bool', 'int', 'long', 'float', 'double'], eq);
define('ne', ['bool', 'int', 'long', 'float', 'double'], ne);
define('where', ['bool', 'int', 'long', 'float', 'double'], where);
define('ones_like', ['int', 'long', 'float', 'double'], onesLike);
define('sqrt', FLOATING, sqrt);
for (const [name, kernel] of Object.entries(FLOAT_FUNCTIONS)) define(`fn:${name}`, FLOATING, kernel);
define('fn:round', ['int', 'long'], copy);
define('fn:sign', ['int', 'long'], signInteger);

/** The kernel of an operation computed in `kind`, or undefined if numexpr has no such opcode. */
export function kernelFor(op: string, kind: Kind): Kernel | undefined {
  return TABLE.get(`${op}:${kind}`);
}
