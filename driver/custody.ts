// CustodyTarget: a Target that remembers what the code above it holds on the CPU below — every
// buffer it allocated and has not freed (with its role, read from the ToPA tables it wrote), and
// every CPU it may have left tracing (trace-watch.ts) — so that whatever ends a run (a return, a
// throw, an abort), `settle` can give it all back under the invariant of docs/design.md "The
// invariant": TraceEn=0 confirmed first, then free, or leak. The runner wraps every run's target
// in one, below the recorder, so hand-programmed scenario code is held to the same rule as the
// driver's own sessions.
import type { CpuidRegs } from './hw/cpuid.js';
import { TOPA_ENTRY, TOPA_ENTRY_BYTES } from './hw/topa.js';
import { IA32_RTIT_CTL } from './hw/msrs.js';
import { freeOrLeak, NOTHING_TORN_DOWN, TEARDOWN_TIMEOUT_MS, type OwnedBuffer, type Teardown, type TracingCpu } from './teardown.js';
import { TraceEnWatch, type CallOutcome } from './trace-watch.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, ReadOpts, StartOpts, Target, Workload, WriteOpts } from './target.js';
import { CpuFaultError } from './hw/cpu-fault.js';
import { PtError } from './base/errors.js';

const CTL = IA32_RTIT_CTL.address;

/** An allocation the target refused (it did not happen), as opposed to one whose answer was lost. */
const isRefusal = (e: unknown): boolean => e instanceof PtError && (e.code === 'alloc_failed' || e.code === 'bad_config' || e.code === 'bad_state' || e.code === 'aborted');

/** How a call that threw ended: a #GP changed nothing; anything else may or may not have reached the CPU. */
const outcomeOf = (e: unknown): CallOutcome => (e instanceof CpuFaultError ? 'faulted' : 'unknown');

/** A Target that tracks what its user holds; see the file comment. */
export class CustodyTarget implements Target {
  readonly phys: PhysMemory;
  readonly watch = new TraceEnWatch();
  /** Buffers allocated through this target and not freed, by base. */
  private readonly held = new Map<bigint, OwnedBuffer>();
  /**
   * Sizes of allocations whose answer was lost (the call threw for another reason than a refusal):
   * the target may hold them, at an address nobody here knows.
   */
  readonly lostAllocations: number[] = [];

  constructor(readonly inner: Target) {
    const p = inner.phys;
    this.phys = {
      get maxContiguous(): number { return p.maxContiguous; },
      alloc: async (size: number, align: number, opts?: CallOpts): Promise<PhysRegion> => {
        let r: PhysRegion;
        try {
          r = await p.alloc(size, align, opts);
        } catch (e) {
          if (!isRefusal(e)) this.lostAllocations.push(size);
          throw e;
        }
        this.held.set(r.base, { region: r, role: 'buffer' });
        return r;
      },
      free: async (region: PhysRegion, opts?: CallOpts): Promise<void> => {
        try {
          await p.free(region, opts);
        } catch (e) {
          // A held buffer the target no longer knows was freed by an earlier free whose answer was lost.
          if (!(this.held.has(region.base) && e instanceof PtError && e.code === 'bad_address')) throw e;
        }
        this.held.delete(region.base);
      },
      read: (addr: bigint, length: number, opts?: ReadOpts) => p.read(addr, length, opts),
      write: async (addr: bigint, data: Uint8Array, opts?: WriteOpts): Promise<void> => {
        await p.write(addr, data, opts);
        if (opts?.content === 'topa-table') this.learnRoles(addr, data);
      },
    };
  }

  get description(): string { return this.inner.description; }

  /** Buffers held now (allocated through this target, not freed), in allocation order. */
  get buffers(): readonly OwnedBuffer[] {
    return [...this.held.values()];
  }

  /** CPUs that may be tracing because of calls made through this target. */
  get tracing(): TracingCpu[] {
    return this.watch.tracing();
  }

  /**
   * Gives back everything held: TraceEn=0 confirmed on every CPU that may trace, then every buffer
   * freed, or all of them leaked (teardown.ts freeOrLeak). Calls go through `via` (the recorder
   * above this target, so the transcript shows them), which must lead back down to this target.
   */
  async settle(via: Target = this, timeoutMs = TEARDOWN_TIMEOUT_MS): Promise<Teardown> {
    const buffers = this.buffers, cpus = this.tracing;
    if (buffers.length === 0 && cpus.length === 0) return NOTHING_TORN_DOWN;
    const t = await freeOrLeak(via, buffers, cpus, timeoutMs);
    for (const b of t.leaked) this.held.delete(b.region.base); // reported: no longer this run's to give back
    return t;
  }

  /** Names the buffers a ToPA table write shows: the table itself, the output regions its entries name. */
  private learnRoles(addr: bigint, data: Uint8Array): void {
    const table = this.held.get(addr);
    if (table) this.held.set(addr, { region: table.region, role: 'ToPA table' });
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let i = 0; (i + 1) * TOPA_ENTRY_BYTES <= data.length; i++) {
      const e = TOPA_ENTRY.decode(dv.getBigUint64(i * TOPA_ENTRY_BYTES, true));
      const b = e.END ? undefined : this.held.get(e.Base);
      if (b && b.role === 'buffer') this.held.set(e.Base, { region: b.region, role: 'output region' });
    }
  }

  cpuid(leaf: number, subleaf: number, cpu?: number, opts?: CallOpts): Promise<CpuidRegs> {
    return this.inner.cpuid(leaf, subleaf, cpu, opts);
  }

  async rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    const v = await this.inner.rdmsr(cpu, msr, opts);
    if (msr === CTL) this.watch.ctlRead(cpu, v);
    return v;
  }

  async wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    try {
      await this.inner.wrmsr(cpu, msr, value, opts);
    } catch (e) {
      if (msr === CTL) this.watch.ctlWrite(cpu, value, outcomeOf(e));
      throw e;
    }
    if (msr === CTL) this.watch.ctlWrite(cpu, value, 'done');
  }

  async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    let res: MsrResult[];
    try {
      res = await this.inner.msrBatch(cpu, ops, opts);
    } catch (e) {
      this.watch.batch(cpu, ops, undefined);
      throw e;
    }
    this.watch.batch(cpu, ops, res);
    return res;
  }

  pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    return this.inner.pmiEnable(cpu, opts);
  }

  async xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    const area = await this.inner.xsaves(cpu, rfbm, opts);
    this.watch.xsaves(cpu, 'done');
    return area;
  }

  async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    try {
      await this.inner.xrstors(cpu, area, rfbm, opts);
    } catch (e) {
      this.watch.xrstors(cpu, area, outcomeOf(e));
      throw e;
    }
    this.watch.xrstors(cpu, area, 'done');
  }

  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    return this.inner.start(workload, cpu, opts);
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
