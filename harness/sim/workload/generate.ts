// generateWorkload(seed): a random but deterministic structured program (program.ts), lowered to
// real x86-64 code (lower.ts), with its control-flow model (model.ts) and optional model-only
// annotations (annotations.ts). Loop counters live in registers (one per loop depth, never
// clobbered by callees of that depth); branch outcomes come from those counters and from
// read-only tables in the image; the path ends with exit(0). Worst-case path length ≤ opts.branches.
import type { Workload } from '../../../driver/target.js';
import type { Annotation } from './annotations.js';
import { lower } from './lower.js';
import { WorkloadModel } from './model.js';
import { Rng } from './prng.js';
import { type CondSource, type Fn, type IndexSource, type Program, type ReturnStyle, type Stmt, seqCost, stmtCost } from './program.js';
import { type Cond, R10, R11, R12, R13, R14, R15, R8, R9, RBP, RBX, RCX, RDI, RSI } from './x86.js';

/** Default load address: clear of ordinary static binaries at 0x400000 (docs/design.md "Workloads"). */
export const DEFAULT_BASE = 0x1000_0000n;

/** Loop counter registers by loop depth; RAX and RDX are scratch, RSP is the stack. */
const POOL = [RCX, RBX, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15] as const;

/** Knobs of `generateWorkload`. */
export interface WorkloadOptions {
  /** Load address (default 0x10000000; must stay below 2^31 for PUSH imm32 return addresses). */
  readonly base?: bigint;
  /** Upper bound on the branches the path executes, the exit included (default 10 000). */
  readonly branches?: number;
  /** Deepest loop nesting (default 4, at most 13). */
  readonly maxDepth?: number;
  /** Deepest call nesting (default 3). */
  readonly maxCalls?: number;
  /** Model-only annotations to place on the path (default 0 each). */
  readonly interrupts?: number;
  readonly cr3Switches?: number;
  readonly ptwrites?: number;
  /** Pairs of mode changes (64→32, then back to 64). */
  readonly modeChanges?: number;
}

/** A generated workload whose `model` is always present. */
export interface GeneratedWorkload extends Workload {
  readonly model: WorkloadModel;
  readonly seed: number;
}

/** Builds the workload for `seed`; the same seed and options always give the same bytes and model. */
export function generateWorkload(seed: number, opts: WorkloadOptions = {}): GeneratedWorkload {
  const base = opts.base ?? DEFAULT_BASE;
  const branches = Math.max(2, Math.floor(opts.branches ?? 10_000));
  const rng = new Rng(seed);
  const program = new ProgramGen(rng, Math.min(opts.maxDepth ?? 4, POOL.length), opts.maxCalls ?? 3).program(branches - 1);
  const low = lower(program, base);
  const plain = new WorkloadModel(base, low.image, low.entryOffset, low.code, [], low.codeEnd);
  const annotations = placeAnnotations(new Rng(seed ^ 0x5eed_a11c), plain.branchCount, opts);
  const model = annotations.length === 0 ? plain : new WorkloadModel(base, low.image, low.entryOffset, low.code, annotations, low.codeEnd);
  return {
    name: `gen-${seed}-${branches}`,
    image: low.image,
    base,
    entry: base + BigInt(low.entryOffset),
    model,
    seed,
    recipe: recipeOf(seed, branches, base, opts),
  };
}

/** The generator's name in a recipe (Workload.recipe): `generateWorkload` with these options. */
export const GENERATOR = 'ptlab-generate';

/** How to call `generateWorkload` again: JSON numbers, the base as hex (replay: workloadOfRecipe). */
function recipeOf(seed: number, branches: number, base: bigint, o: WorkloadOptions): Record<string, string | number> {
  const { base: _b, branches: _n, ...rest } = o;
  const extra = Object.fromEntries(Object.entries(rest).filter(([, v]) => typeof v === 'number')) as Record<string, number>;
  return { generator: GENERATOR, seed, branches, base: `0x${base.toString(16)}`, ...extra };
}

interface Ctx {
  /** Live loop counters (readable, never written by this code). */
  readonly depth: number;
  readonly calls: number;
  /** 0: anything; 1: short body of a LOOP (rel8 reach); 2: a leaf inside it. */
  readonly small: 0 | 1 | 2;
  /** Nesting of if/switch bodies (bounds code size). */
  readonly nest: number;
}

const MAX_COUNT = 5000;
const MAX_STMTS = 600;

class ProgramGen {
  private readonly fns: Fn[] = [];
  private readonly cache = new Map<string, Fn[]>();
  private stmts = 0;

  constructor(private readonly rng: Rng, private readonly maxDepth: number, private readonly maxCalls: number) {}

  program(budget: number): Program {
    const main: Stmt[] = [];
    let left = budget;
    const n = this.rng.int(1, 3);
    for (let i = 0; i < n && left >= 2; i++) {
      const share = i === n - 1 ? left : Math.max(2, Math.floor(left * (0.3 + 0.5 * this.rng.u32() / 0x1_0000_0000)));
      const s = this.loop(share, { depth: 0, calls: 0, small: 0, nest: 0 });
      main.push(s);
      left -= stmtCost(s);
    }
    return { main, fns: this.fns };
  }

  private seq(budget: number, ctx: Ctx): Stmt[] {
    const out: Stmt[] = [];
    let left = budget;
    const n = this.rng.int(1, ctx.small ? 2 : 4);
    for (let i = 0; i < n; i++) {
      const share = i === n - 1 ? left : this.rng.int(0, left);
      const s = this.stmt(share, ctx);
      if (s === null) continue;
      out.push(s);
      left -= stmtCost(s);
      if (!ctx.small && this.rng.chance(0.2)) out.push({ t: 'nop', n: this.rng.int(1, 9) });
    }
    return out;
  }

  private stmt(b: number, ctx: Ctx): Stmt | null {
    this.stmts++;
    const big = this.stmts < MAX_STMTS;
    const live = ctx.depth > 0;
    const choices: [number, () => Stmt | null][] = [];
    if (b >= 2 && big && !ctx.small && ctx.depth < this.maxDepth) choices.push([3, () => this.loop(b, ctx)]);
    if (b >= 1 && live && ctx.small !== 2 && (ctx.small || (big && ctx.nest < 3))) choices.push([4, () => this.ifStmt(b, ctx)]);
    if (b >= 2 && ctx.calls < this.maxCalls) choices.push([3, () => this.call(b, ctx)]);
    if (b >= 2 && ctx.calls < this.maxCalls) choices.push([2, () => this.icall(b, ctx)]);
    if (b >= 2 && big && !ctx.small && ctx.nest < 3) choices.push([2, () => this.switchStmt(b, ctx)]);
    if (b >= 1) choices.push([1, () => ({ t: 'zcall' })], [1, () => ({ t: 'jmp', skip: this.rng.int(0, 8) })], [1, () => ({ t: 'ijmp', skip: this.rng.int(0, 8) })]);
    if (choices.length === 0) return null;
    let w = this.rng.int(1, choices.reduce((s, [x]) => s + x, 0));
    for (const [x, f] of choices) {
      w -= x;
      if (w <= 0) return f();
    }
    return null;
  }

  /** A counted loop whose worst-case cost fits `b` (b ≥ 2). */
  private loop(b: number, ctx: Ctx): Stmt {
    const reg = POOL[ctx.depth] as number;
    const form = reg === RCX && this.rng.chance(0.4) ? 'loop' : this.rng.chance(0.6) ? 'dec' : 'up';
    const hi = Math.max(1, Math.min(MAX_COUNT, Math.floor(b / 2)));
    const target = Math.max(1, Math.round(Math.exp(Math.log(hi) * this.rng.u32() / 0x1_0000_0000)));
    const inner: Ctx = form === 'loop'
      ? { depth: ctx.depth + 1, calls: ctx.calls, small: 1, nest: ctx.nest }
      : { depth: ctx.depth + 1, calls: ctx.calls, small: 0, nest: ctx.nest };
    const body = this.seq(Math.max(0, Math.floor(b / target) - 1), inner);
    const count = Math.max(1, Math.min(MAX_COUNT, Math.floor(b / (seqCost(body) + 1))));
    return { t: 'loop', form, reg, count, body };
  }

  private ifStmt(b: number, ctx: Ctx): Stmt {
    const inner: Ctx = { ...ctx, small: ctx.small ? 2 : 0, nest: ctx.nest + 1 };
    const cond = this.cond(ctx);
    const then = this.seq(this.rng.int(0, b - 1), inner);
    const left = b - 1 - seqCost(then) - 1;
    const els = !ctx.small && left >= 0 && this.rng.chance(0.4) ? this.seq(this.rng.int(0, left), inner) : null;
    return { t: 'if', cond, then, else: els };
  }

  private cond(ctx: Ctx): CondSource {
    const reg = POOL[this.rng.int(0, ctx.depth - 1)] as number;
    switch (this.rng.int(0, 2)) {
      case 0:
        return { t: 'test', reg, mask: this.rng.chance(0.7) ? 1 << this.rng.int(0, 4) : this.rng.int(1, 0xff), cc: this.rng.chance(0.5) ? 'Z' : 'NZ' };
      case 1: {
        const ccs: Cond[] = ['Z', 'NZ', 'L', 'GE', 'LE', 'G'];
        return { t: 'cmp', reg, imm: this.rng.int(0, 24), cc: this.rng.pick(ccs) };
      }
      default: {
        const p = this.rng.pick([0.1, 0.5, 0.9]);
        const bytes = Array.from({ length: 64 }, () => (this.rng.chance(p) ? this.rng.int(1, 255) : 0));
        return { t: 'table', reg, bytes, cc: this.rng.chance(0.5) ? 'Z' : 'NZ' };
      }
    }
  }

  /** A function callable at this depth and call level, reused when one fits. */
  private fn(b: number, ctx: Ctx, plainOnly: boolean): Fn {
    const key = `${ctx.depth}:${ctx.calls + 1}`;
    const pool = this.cache.get(key) ?? [];
    const fits = pool.filter((f) => f.cost <= b && (!plainOnly || f.ret.t === 'plain'));
    if (fits.length > 0 && this.rng.chance(0.6)) return this.rng.pick(fits);
    const r = this.rng.u32() / 0x1_0000_0000;
    const ret: ReturnStyle = plainOnly || r < 0.6 ? { t: 'plain' }
      : r < 0.85 ? { t: 'add', skip: this.rng.int(1, 16) } : { t: 'push', skip: this.rng.int(0, 16) };
    const inner: Ctx = { depth: ctx.depth, calls: ctx.calls + 1, small: 0, nest: 0 };
    const body = this.seq(this.rng.int(0, b - 2), inner);
    const f: Fn = { id: this.fns.length, body, ret, cost: seqCost(body) + 2 };
    this.fns.push(f);
    // A push-return function returns to one fixed call site: never reuse it.
    if (ret.t !== 'push') this.cache.set(key, [...pool, f]);
    return f;
  }

  private call(b: number, ctx: Ctx): Stmt {
    return { t: 'call', fn: this.fn(b, ctx, false) };
  }

  private index(ctx: Ctx, n: number): IndexSource {
    return ctx.depth > 0 && this.rng.chance(0.8)
      ? { t: 'reg', reg: POOL[this.rng.int(0, ctx.depth - 1)] as number }
      : { t: 'const', value: this.rng.int(0, n - 1) };
  }

  private icall(b: number, ctx: Ctx): Stmt {
    if (this.rng.chance(0.25)) {
      return { t: 'icall', fns: [this.fn(b, ctx, false)], idx: { t: 'const', value: 0 }, via: 'reg' };
    }
    const n = this.rng.chance(0.5) ? 2 : 4;
    const fns = Array.from({ length: n }, () => this.fn(b, ctx, true));
    return { t: 'icall', fns, idx: this.index(ctx, n), via: 'table' };
  }

  private switchStmt(b: number, ctx: Ctx): Stmt {
    const n = this.rng.chance(0.5) ? 2 : 4;
    const inner: Ctx = { ...ctx, nest: ctx.nest + 1 };
    const cases = Array.from({ length: n }, () => this.seq(this.rng.int(0, b - 2), inner));
    return { t: 'switch', idx: this.index(ctx, n), cases };
  }
}

/** Places the requested model-only annotations at seeded branch indices before the exit. */
function placeAnnotations(rng: Rng, branchCount: number, opts: WorkloadOptions): Annotation[] {
  const out: Annotation[] = [];
  const last = branchCount - 2; // `at` must have a `to` inside the workload: never the exit itself
  if (last < 0) return out;
  for (let i = 0; i < (opts.interrupts ?? 0); i++) {
    out.push({ kind: 'interrupt', at: rng.int(0, last), handler: 0xffff_ffff_8100_0000n + BigInt(rng.int(0, 0xfff) * 16) });
  }
  for (let i = 0; i < (opts.cr3Switches ?? 0); i++) {
    out.push({ kind: 'cr3', at: rng.int(0, last), cr3: BigInt(rng.int(1, 0xf_ffff)) << 12n });
  }
  for (let i = 0; i < (opts.ptwrites ?? 0); i++) {
    const size = rng.chance(0.5) ? 4 : 8;
    const v = (BigInt(rng.u32()) << 32n) | BigInt(rng.u32());
    out.push({ kind: 'ptwrite', at: rng.int(0, last), value: size === 4 ? v & 0xffff_ffffn : v, size });
  }
  // Mode pairs never overlap: each return to 64-bit comes at or before the next pair's start.
  const starts = Array.from({ length: opts.modeChanges ?? 0 }, () => rng.int(0, last)).sort((x, y) => x - y);
  starts.forEach((at, i) => {
    const back = Math.min(at + rng.int(0, 3), starts[i + 1] ?? last, last);
    out.push({ kind: 'mode', at, exec: 32 }, { kind: 'mode', at: back, exec: 64 });
  });
  // Stable sort keeps each 32→64 pair in order when both land on one index.
  return out.map((a, i) => ({ a, i })).sort((x, y) => x.a.at - y.a.at || x.i - y.i).map((x) => x.a);
}
