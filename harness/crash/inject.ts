// A Target that fails on purpose at its k-th operation (the crash-point sweep, docs/design.md
// "The crash-point sweep"): every call of the Target interface and every pull of an execution's
// next event is one operation, counted from 1. At operation `at` the injection happens, in one
// of four ways a lab sees:
//
//   throw   — the call fails without reaching the CPU (the helper answered an error); later calls work
//   timeout — the call reaches the CPU and takes effect, but its answer is lost (a helper timeout)
//   abort   — the run's abort signal fires (a user's stop): the call and the driver's later calls,
//             which carry that signal, fail with PtError('aborted')
//   drop    — the link goes away: this call and every later one fail without reaching the CPU
import { PtError } from '../../driver/base/errors.js';
import { withEvents } from '../../driver/exec-view.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, ReadOpts, StartOpts, Target, TargetEvent, Workload, WriteOpts } from '../../driver/target.js';
import { TargetError } from '../link/errors.js';

/** How the injected failure looks to the driver. */
export type CrashMode = 'throw' | 'timeout' | 'abort' | 'drop';
export const CRASH_MODES: readonly CrashMode[] = ['throw', 'timeout', 'abort', 'drop'];

/** Where and how to fail; without one, the target only counts. */
export interface Injection {
  /** The operation (1-based) that fails. */
  readonly at: number;
  readonly mode: CrashMode;
  /** Fired by `abort` (the run's RunSpec.signal). */
  readonly abort?: AbortController;
}

/** A Target over `inner` that counts its operations and fails at the injection point. */
export class InjectingTarget implements Target {
  readonly phys: PhysMemory;
  /** Operations so far. */
  ops = 0;
  /** The link went away (`drop`): why, as Target users see it (SuiteTarget.lost). */
  lostBecause: string | undefined;
  /** The operation the injection hit, once it did: its kind ("msrBatch", "phys.free", "event"). */
  hit: string | undefined;

  constructor(readonly inner: Target, private readonly injection?: Injection) {
    const p = inner.phys;
    this.phys = {
      get maxContiguous(): number { return p.maxContiguous; },
      alloc: (size: number, align: number, opts?: CallOpts): Promise<PhysRegion> => this.op('phys.alloc', opts, () => p.alloc(size, align, opts)),
      free: (region: PhysRegion, opts?: CallOpts): Promise<void> => this.op('phys.free', opts, () => p.free(region, opts)),
      read: (addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> => this.op('phys.read', opts, () => p.read(addr, length, opts)),
      write: (addr: bigint, data: Uint8Array, opts?: WriteOpts): Promise<void> => this.op('phys.write', opts, () => p.write(addr, data, opts)),
    };
  }

  get description(): string { return this.inner.description; }

  /** One operation: counted, and failed as the injection says when it is the one. */
  private async op<T>(kind: string, opts: CallOpts | undefined, run: () => Promise<T>): Promise<T> {
    const n = ++this.ops;
    const inj = this.injection;
    if (this.lostBecause !== undefined) throw this.dropped(kind);
    if (inj === undefined || n !== inj.at) return run();
    this.hit = kind;
    switch (inj.mode) {
      case 'throw':
        throw new TargetError('helper-command', 'protocol', `injected: operation ${n} (${kind}) failed before it reached the CPU`);
      case 'timeout': {
        await run().catch(() => undefined);
        throw new TargetError('helper-command', 'timeout', `injected: operation ${n} (${kind}) took effect, but its answer never came`);
      }
      case 'abort':
        inj.abort?.abort(new Error(`injected abort at operation ${n} (${kind})`));
        if (opts?.signal?.aborted) throw new PtError('aborted', `aborted: injected at operation ${n} (${kind})`);
        return run();
      case 'drop':
        this.lostBecause = `injected: the link went away at operation ${n} (${kind})`;
        throw this.dropped(kind);
      default: {
        const x: never = inj.mode;
        throw new Error(`unknown crash mode ${String(x)}`);
      }
    }
  }

  private dropped(kind: string): TargetError {
    return new TargetError('helper-command', 'closed', `${this.lostBecause!} (then ${kind})`);
  }

  cpuid(leaf: number, subleaf: number, cpu?: number, opts?: CallOpts): Promise<CpuidRegs> {
    return this.op('cpuid', opts, () => this.inner.cpuid(leaf, subleaf, cpu, opts));
  }

  rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    return this.op('rdmsr', opts, () => this.inner.rdmsr(cpu, msr, opts));
  }

  wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    return this.op('wrmsr', opts, () => this.inner.wrmsr(cpu, msr, value, opts));
  }

  msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    return this.op('msrBatch', opts, () => this.inner.msrBatch(cpu, ops, opts));
  }

  pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    return this.op('pmiEnable', opts, () => this.inner.pmiEnable(cpu, opts));
  }

  xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    return this.op('xsaves', opts, () => this.inner.xsaves(cpu, rfbm, opts));
  }

  xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    return this.op('xrstors', opts, () => this.inner.xrstors(cpu, area, rfbm, opts));
  }

  /** Starting is not an operation (it returns at once); waiting for its placement, letting it go and each pull of its next event are. */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    const exec = this.inner.start(workload, cpu, opts);
    const self = this;
    return withEvents(exec, {
      [Symbol.asyncIterator](): AsyncIterator<TargetEvent> {
        const it = exec.events[Symbol.asyncIterator]();
        return {
          next: () => self.op('event', opts, () => it.next()),
          return: async (v?: unknown) => (it.return ? it.return(v) : { done: true, value: undefined }),
        };
      },
    }, {
      placed: (call) => this.op('placed', opts, call),
      go: (call) => this.op('go', opts, call),
    });
  }

  note(cpu: number, text: string): void {
    this.inner.note?.(cpu, text);
  }

  cr3Of(cpu: number): bigint | undefined {
    return this.inner.cr3Of?.(cpu);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.inner[Symbol.asyncDispose]();
  }
}
