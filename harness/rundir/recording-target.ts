// RecordingTarget: wraps any Target and turns every access into a
// TranscriptLine (transcript-line.ts, docs/transcript.md), in order, with seq and t_us.
// A batch becomes one line per executed op; a fault is recorded with its text.
// The driver's memory operations are in the same order: allocation and free,
// every ToPA entry a table write changed (table, index, decoded entry), other
// writes by address and size, and the component-8 MSRs of every XSAVES and
// XRSTORS area, so order rules ("refill before CTL is restored") can be
// checked on any target. Each line also holds what `ptlab replay` needs to
// issue it again: a write's bytes, an XRSTORS area's bytes (unless its MSRs
// say all of it), a workload's
// recipe and start options, and which execution an event or an `end` is of.
import { withEvents } from '../../driver/exec-view.js';
import { CpuFaultError, describeFault } from '../../driver/hw/cpu-fault.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import { describeTopaEntry, TOPA_ENTRY_BYTES } from '../../driver/hw/topa.js';
import { hex } from '../../driver/base/hex.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, ReadOpts, StartOpts, Target, TargetEvent, Workload, WriteOpts } from '../../driver/target.js';
import { areaFields, bytesHex, eventFields, isCanonicalArea, type Fields } from './line-fields.js';
import type { TranscriptLine } from './transcript-line.js';

type Op = TranscriptLine['op'];

/** A Target that records every call it forwards to `inner`. */
export class RecordingTarget implements Target {
  readonly lines: TranscriptLine[] = [];
  /** The round trip (0-based target call) each line belongs to; a batch's lines share one. */
  readonly roundTripOf: number[] = [];
  /** Target calls forwarded so far. */
  roundTrips = 0;
  readonly phys: PhysMemory;
  private readonly t0: number;
  /** The entries last written to each ToPA table page (by base), to record only what changed. */
  private readonly tables = new Map<bigint, bigint[]>();
  /** Executions started so far (the next one's `exec` number). */
  private executions = 0;
  /** Target calls in progress: a line observed meanwhile waits for the call's own lines. */
  private inFlight = 0;
  private readonly observed: [number, Op, Fields][] = [];

  constructor(readonly inner: Target, private readonly clock: () => number = () => performance.now() * 1000) {
    this.t0 = clock();
    this.phys = this.recordingPhys(inner.phys);
  }

  get description(): string { return this.inner.description; }

  /** transcript.jsonl: one JSON object per line. */
  jsonl(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n') + (this.lines.length ? '\n' : '');
  }

  private record(cpu: number, op: Op, f: Fields, rt = this.roundTrips - 1): void {
    this.lines.push({ seq: this.lines.length, t_us: Math.round(this.clock() - this.t0), cpu, op, ...f });
    this.roundTripOf.push(rt);
  }

  /**
   * A line about something the target itself did (the model's memory oracle: a `corrupt` line),
   * not a call of the driver's. During a call it follows that call's own lines.
   */
  observe(cpu: number, op: Op, f: Fields): void {
    if (this.inFlight > 0) this.observed.push([cpu, op, f]);
    else this.record(cpu, op, f);
  }

  /** Runs one target call with observed lines held back until `done` recorded the call's lines. */
  private async inCall<T>(run: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await run();
    } finally {
      if (--this.inFlight === 0) for (const [cpu, op, f] of this.observed.splice(0)) this.record(cpu, op, f);
    }
  }

  /** Forwards one call, recording it (or its fault) afterwards. */
  private async call<T>(cpu: number, op: Op, f: Fields, run: () => Promise<T>, result?: (v: T) => Fields): Promise<T> {
    this.roundTrips++;
    return this.inCall(async () => {
      try {
        const v = await run();
        this.record(cpu, op, { ...f, ...(result ? result(v) : {}) });
        return v;
      } catch (e) {
        this.record(cpu, op, { ...f, fault: e instanceof CpuFaultError ? describeFault(e.fault) : String((e as Error).message ?? e) });
        throw e;
      }
    });
  }

  cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    return this.call(cpu, 'cpuid', { value: `${hex(leaf)}.${subleaf}` }, () => this.inner.cpuid(leaf, subleaf, cpu, opts),
      (r) => ({ result: `eax=${hex(r.eax >>> 0)} ebx=${hex(r.ebx >>> 0)} ecx=${hex(r.ecx >>> 0)} edx=${hex(r.edx >>> 0)}` }));
  }

  rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    return this.call(cpu, 'rdmsr', { msr: hex(msr) }, () => this.inner.rdmsr(cpu, msr, opts), (v) => ({ result: hex(v) }));
  }

  wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    return this.call(cpu, 'wrmsr', { msr: hex(msr), value: hex(value) }, () => this.inner.wrmsr(cpu, msr, value, opts));
  }

  async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    this.roundTrips++;
    const rt = this.roundTrips - 1;
    return this.inCall(async () => {
      const res = await this.inner.msrBatch(cpu, ops, opts);
      for (const [i, r] of res.entries()) {
        const f: Fields = r.op === 'wrmsr' ? { msr: hex(r.msr), value: hex(opValue(ops, i)) } : { msr: hex(r.msr) };
        this.record(cpu, r.op, r.ok ? (r.op === 'rdmsr' ? { ...f, result: hex(r.value) } : f) : { ...f, fault: describeFault(r.fault) }, rt);
      }
      return res;
    });
  }

  /** A driver decision, as a `note` line (no target call). */
  note(cpu: number, text: string): void {
    this.record(cpu, 'note', { value: text }, this.roundTrips - 1);
    this.inner.note?.(cpu, text);
  }

  /** The inner target's (no target call: nothing recorded). */
  cr3Of(cpu: number): bigint | undefined {
    return this.inner.cr3Of?.(cpu);
  }

  pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    return this.call(cpu, 'pmi-enable', {}, () => this.inner.pmiEnable(cpu, opts));
  }

  xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    return this.call(cpu, 'xsaves', { value: hex(rfbm) }, () => this.inner.xsaves(cpu, rfbm, opts),
      (a) => ({ result: `${a.length} bytes`, ...areaFields(a) }));
  }

  xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    return this.call(cpu, 'xrstors', { value: hex(rfbm), ...areaFields(area), ...(isCanonicalArea(area) ? {} : { data: bytesHex(area) }) },
      () => this.inner.xrstors(cpu, area, rfbm, opts));
  }

  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    this.roundTrips++;
    const exec = this.inner.start(workload, cpu, opts);
    const n = this.executions++;
    this.record(cpu, 'start', {
      value: workload.name, exec: n,
      ...(workload.recipe ? { workload: workload.recipe } : {}),
      ...(opts?.sliceBranches !== undefined ? { sliceBranches: opts.sliceBranches } : {}),
      ...(opts?.thread ? { thread: true } : {}),
      ...(opts?.held ? { held: true } : {}),
    });
    const self = this;
    let ended = false;
    const view = withEvents(exec, {
      async *[Symbol.asyncIterator](): AsyncGenerator<TargetEvent> {
        for await (const ev of exec.events) {
          self.record(ev.cpu, ev.kind, { ...eventFields(ev), exec: n }, self.roundTrips - 1);
          yield ev;
        }
      },
    }, {
      placed: (call) => this.call(cpu, 'placed', { exec: n }, call, (p) => ({ result: p.cr3 === undefined ? 'cr3 unknown' : `cr3=${hex(p.cr3)}` })),
      go: (call) => this.call(cpu, 'go', { exec: n }, call),
    });
    return {
      ...view,
      [Symbol.asyncDispose]: async () => {
        await exec[Symbol.asyncDispose]();
        if (!ended) { ended = true; self.record(cpu, 'end', { exec: n }, self.roundTrips - 1); }
      },
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.inner[Symbol.asyncDispose]();
  }

  /**
   * Memory as the driver uses it (cpu -1: memory is not per CPU). Allocation, free and writes are
   * recorded; reads (collection) are not: they change nothing a replay or an order rule needs.
   */
  private recordingPhys(p: PhysMemory): PhysMemory {
    return {
      get maxContiguous() { return p.maxContiguous; },
      alloc: (size: number, align: number, opts?: CallOpts): Promise<PhysRegion> =>
        this.call(-1, 'alloc', { value: `${hex(size)}/${hex(align)}` }, () => p.alloc(size, align, opts), (r) => {
          this.tables.delete(r.base); // zero-filled again
          return { result: hex(r.base) };
        }),
      free: (region: PhysRegion, opts?: CallOpts): Promise<void> =>
        this.call(-1, 'free', { value: hex(region.base) }, () => p.free(region, opts)),
      read: (addr: bigint, length: number, opts?: ReadOpts) => { this.roundTrips++; return p.read(addr, length, opts); },
      write: async (addr: bigint, data: Uint8Array, opts?: WriteOpts) => {
        this.roundTrips++;
        try {
          await p.write(addr, data, opts);
        } catch (e) {
          this.record(-1, 'write', { addr: hex(addr), value: `${data.length} bytes`, data: bytesHex(data), fault: String((e as Error).message ?? e) });
          throw e;
        }
        if (opts?.content === 'topa-table') this.recordTopa(addr, data);
        else this.record(-1, 'write', { addr: hex(addr), value: `${data.length} bytes`, data: bytesHex(data) });
      },
    };
  }

  /** One `topa` line per entry of the table write that differs from what the table held. */
  private recordTopa(base: bigint, data: Uint8Array): void {
    const known = this.tables.get(base) ?? [];
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let i = 0; (i + 1) * TOPA_ENTRY_BYTES <= data.length; i++) {
      const e = dv.getBigUint64(i * TOPA_ENTRY_BYTES, true);
      if ((known[i] ?? 0n) === e) continue;
      known[i] = e;
      this.record(-1, 'topa', { addr: hex(base), index: i, value: hex(e), entry: describeTopaEntry(e) });
    }
    this.tables.set(base, known);
  }
}

/** The value the i-th op of a batch wrote (0 for a read). */
function opValue(ops: readonly MsrOp[], i: number): bigint {
  const o = ops[i];
  return o?.op === 'wrmsr' ? o.value : 0n;
}
