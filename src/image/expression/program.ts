/**
 * Compiles typed block trees into one flat program of kernel calls and runs it over the pixels in
 * blocks of BLOCK elements, as numexpr's virtual machine does: temporaries are block-sized and
 * reused as soon as their last reader has run (so they stay in cache), constants are broadcast
 * once into block-sized registers, an input that needs converting (uint8 → int32 …) is converted
 * once per block whoever reads it, and every block's result is stored straight into its output
 * band with numpy.nan_to_num applied. Nothing is allocated per pixel or per block.
 */
import { TesseraError } from '../../errors.js';
import type { BandArray, DType } from '../image-data.js';
import { allocateStorage, STORAGE_OF_KIND, type Kind, type Storage } from './kinds.js';
import { castKernel, kernelFor, storeNanToNumFloat32, storeNanToNumFloat64, storePlain, type Kernel } from './kernels.js';
import type { TypedNode } from './typing.js';

/** Elements per pass: 16–64 KiB per temporary, small enough for L1/L2. */
const BLOCK = 2048;

interface Register {
  array: BandArray;
  /** Input and output registers advance with the block; temporaries and constants do not. */
  readonly moving: boolean;
  /** Set for temporaries: the pool they return to. */
  readonly pool?: Storage;
}

interface Instruction {
  readonly kernel: Kernel;
  readonly out: Register;
  readonly a: Register;
  readonly b: Register;
  readonly c: Register;
}

const EMPTY = new Float64Array(0);
const UNUSED: Register = { array: new Float64Array(1), moving: false };

export class Program {
  private readonly code: Instruction[] = [];
  private readonly inputs = new Map<string, Register>();
  private readonly outputs: Register[] = [];
  private readonly free: Record<Storage, Register[]> = { u8: [], i32: [], f32: [], f64: [] };
  private readonly constants = new Map<string, Register>();
  private readonly registers = new Map<TypedNode, Register>();
  private readonly remainingUses = new Map<TypedNode, number>();

  /**
   * @param roots one typed tree per output band
   * @param inputDtypes dtype of every input the trees read
   */
  constructor(
    roots: readonly TypedNode[],
    private readonly inputDtypes: ReadonlyMap<string, DType>,
  ) {
    for (const root of roots) this.countUses(root);
    for (const root of roots) {
      const value = this.emit(root);
      const out: Register = { array: EMPTY, moving: true };
      this.outputs.push(out);
      const store = root.kind === 'float' ? storeNanToNumFloat32 : root.kind === 'double' ? storeNanToNumFloat64 : storePlain;
      this.code.push({ kernel: store, out, a: value, b: UNUSED, c: UNUSED });
      this.release(root);
    }
  }

  /** Evaluates every block over `length` elements, writing output band i into `outputs[i]`. */
  run(inputs: ReadonlyMap<string, BandArray>, outputs: readonly BandArray[], length: number): void {
    for (const [name, register] of this.inputs) register.array = inputs.get(name)!;
    this.outputs.forEach((register, i) => {
      register.array = outputs[i]!;
    });
    try {
      for (let start = 0; start < length; start += BLOCK) {
        const n = Math.min(BLOCK, length - start);
        for (const { kernel, out, a, b, c } of this.code) {
          kernel(n, out.array, out.moving ? start : 0, a.array, a.moving ? start : 0, b.array, b.moving ? start : 0, c.array, c.moving ? start : 0);
        }
      }
    } finally {
      // Do not keep the caller's pixels alive through a cached program.
      for (const register of this.inputs.values()) register.array = EMPTY;
      for (const register of this.outputs) register.array = EMPTY;
    }
  }

  private countUses(node: TypedNode): void {
    const seen = this.remainingUses.get(node);
    this.remainingUses.set(node, (seen ?? 0) + 1);
    if (seen === undefined && node.t === 'op') for (const arg of node.args) this.countUses(arg);
  }

  /** One use of `node` is over: its temporary goes back to the pool after the last one. */
  private release(node: TypedNode): void {
    const left = this.remainingUses.get(node)! - 1;
    this.remainingUses.set(node, left);
    if (left > 0) return;
    const register = this.registers.get(node);
    if (register) this.releaseRegister(register);
  }

  private releaseRegister(register: Register): void {
    if (register.pool) this.free[register.pool].push(register);
  }

  private temporary(kind: Kind): Register {
    const storage = STORAGE_OF_KIND[kind];
    return this.free[storage].pop() ?? { array: allocateStorage(storage, BLOCK), moving: false, pool: storage };
  }

  private constant(kind: Kind, value: number): Register {
    const storage = STORAGE_OF_KIND[kind];
    const converted = kind === 'float' ? Math.fround(value) : value;
    const key = `${storage}:${Object.is(converted, -0) ? '-0' : String(converted)}`;
    let register = this.constants.get(key);
    if (!register) {
      const array = allocateStorage(storage, BLOCK);
      array.fill(converted);
      register = { array, moving: false };
      this.constants.set(key, register);
    }
    return register;
  }

  private emit(node: TypedNode): Register {
    const done = this.registers.get(node);
    if (done) return done;
    let register: Register;
    if (node.t === 'const') register = this.constant(node.kind, node.value);
    else if (node.t === 'input') register = this.emitInput(node.name, node.kind);
    else register = this.emitOperation(node);
    this.registers.set(node, register);
    return register;
  }

  private emitInput(name: string, kind: Kind): Register {
    let raw = this.inputs.get(name);
    if (!raw) {
      raw = { array: EMPTY, moving: true };
      this.inputs.set(name, raw);
    }
    const dtype = this.inputDtypes.get(name);
    if (dtype === undefined) throw new TesseraError('Internal', `expression input '${name}' has no dtype`);
    if (CANONICAL_DTYPE[kind] === dtype) return raw;
    const converted = this.temporary(kind);
    this.code.push({ kernel: castKernel, out: converted, a: raw, b: UNUSED, c: UNUSED });
    return converted;
  }

  private emitOperation(node: Extract<TypedNode, { t: 'op' }>): Register {
    const operands: Register[] = [];
    const casts: Register[] = [];
    node.args.forEach((arg, i) => {
      const target = node.op === 'where' && i === 0 ? 'bool' : node.operandKind;
      const register = this.emit(arg);
      operands.push(this.cast(arg, register, target, casts));
    });
    for (const arg of node.args) this.release(arg);
    for (const cast of casts) this.releaseRegister(cast);
    const kernel = kernelFor(node.op, node.operandKind);
    if (!kernel) throw new TesseraError('Internal', `no kernel for ${node.op} on ${node.operandKind}`);
    const out = this.temporary(node.kind);
    this.code.push({ kernel, out, a: operands[0] ?? UNUSED, b: operands[1] ?? UNUSED, c: operands[2] ?? UNUSED });
    return out;
  }

  /** numexpr casts operands up to the operation's kind: constants by value, arrays by a conversion pass. */
  private cast(node: TypedNode, register: Register, target: Kind, casts: Register[]): Register {
    if (node.kind === target) return register;
    if (node.t === 'const') return this.constant(target, node.value);
    if (STORAGE_OF_KIND[node.kind] === STORAGE_OF_KIND[target]) return register; // long → double: same doubles
    const converted = this.temporary(target);
    this.code.push({ kernel: castKernel, out: converted, a: register, b: UNUSED, c: UNUSED });
    casts.push(converted);
    return converted;
  }
}

/** The input dtype whose arrays kernels of each kind read directly (others get a conversion pass). */
const CANONICAL_DTYPE: Record<Kind, DType> = { bool: 'bool', int: 'int32', long: 'int64', float: 'float32', double: 'float64' };
