// RecordingTarget: wraps any Target and turns every access into a
// TranscriptLine (DESIGN.md transcript.jsonl), in order, with seq and t_us.
// A batch becomes one line per executed op; a fault is recorded with its text.
import { CpuFaultError, describeFault } from './errors.js';
import type { CpuidRegs } from './hw/cpuid.js';
import {
  hex, type CallOpts, type Execution, type MsrOp, type MsrResult, type PhysMemory, type PhysRegion, type ReadOpts, type StartOpts,
  type Target, type TargetEvent, type TranscriptLine, type Workload,
} from './target.js';

type Op = TranscriptLine['op'];
type Fields = Omit<TranscriptLine, 'seq' | 't_us' | 'cpu' | 'op'>;

/** A Target that records every call it forwards to `inner`. */
export class RecordingTarget implements Target {
  readonly lines: TranscriptLine[] = [];
  /** The round trip (0-based target call) each line belongs to; a batch's lines share one. */
  readonly roundTripOf: number[] = [];
  /** Target calls forwarded so far. */
  roundTrips = 0;
  readonly phys: PhysMemory;
  private readonly t0: number;

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

  /** Forwards one call, recording it (or its fault) afterwards. */
  private async call<T>(cpu: number, op: Op, f: Fields, run: () => Promise<T>, result?: (v: T) => Fields): Promise<T> {
    this.roundTrips++;
    try {
      const v = await run();
      this.record(cpu, op, { ...f, ...(result ? result(v) : {}) });
      return v;
    } catch (e) {
      this.record(cpu, op, { ...f, fault: e instanceof CpuFaultError ? describeFault(e.fault) : String((e as Error).message ?? e) });
      throw e;
    }
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
    const res = await this.inner.msrBatch(cpu, ops, opts);
    for (const [i, r] of res.entries()) {
      const f: Fields = r.op === 'wrmsr' ? { msr: hex(r.msr), value: hex(opValue(ops, i)) } : { msr: hex(r.msr) };
      this.record(cpu, r.op, r.ok ? (r.op === 'rdmsr' ? { ...f, result: hex(r.value) } : f) : { ...f, fault: describeFault(r.fault) }, rt);
    }
    return res;
  }

  pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    return this.call(cpu, 'pmi-enable', {}, () => this.inner.pmiEnable(cpu, opts));
  }

  xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    return this.call(cpu, 'xsaves', { value: hex(rfbm) }, () => this.inner.xsaves(cpu, rfbm, opts), (a) => ({ result: `${a.length} bytes` }));
  }

  xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    return this.call(cpu, 'xrstors', { value: hex(rfbm) }, () => this.inner.xrstors(cpu, area, rfbm, opts));
  }

  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    this.roundTrips++;
    const exec = this.inner.start(workload, cpu, opts);
    this.record(cpu, 'start', { value: workload.name });
    const self = this;
    return {
      events: {
        async *[Symbol.asyncIterator](): AsyncGenerator<TargetEvent> {
          for await (const ev of exec.events) {
            self.record(ev.cpu, ev.kind, eventFields(ev), self.roundTrips - 1);
            yield ev;
          }
        },
      },
      [Symbol.asyncDispose]: () => exec[Symbol.asyncDispose](),
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.inner[Symbol.asyncDispose]();
  }

  /** Allocation and free are recorded (cpu -1: memory is not per CPU); memory reads and writes are not target accesses of the transcript. */
  private recordingPhys(p: PhysMemory): PhysMemory {
    return {
      get maxContiguous() { return p.maxContiguous; },
      alloc: (size: number, align: number, opts?: CallOpts): Promise<PhysRegion> =>
        this.call(-1, 'alloc', { value: `${hex(size)}/${hex(align)}` }, () => p.alloc(size, align, opts), (r) => ({ result: hex(r.base) })),
      free: (region: PhysRegion, opts?: CallOpts): Promise<void> =>
        this.call(-1, 'free', { value: hex(region.base) }, () => p.free(region, opts)),
      read: (addr: bigint, length: number, opts?: ReadOpts) => { this.roundTrips++; return p.read(addr, length, opts); },
      write: (addr: bigint, data: Uint8Array, opts?: CallOpts) => { this.roundTrips++; return p.write(addr, data, opts); },
    };
  }
}

function opValue(ops: readonly MsrOp[], i: number): bigint {
  const o = ops[i];
  return o?.op === 'wrmsr' ? o.value : 0n;
}

function eventFields(ev: TargetEvent): Fields {
  switch (ev.kind) {
    case 'pmi': return { value: hex(ev.globalStatus), result: `ctl=${hex(ev.ctl)} status=${hex(ev.status)} acked=${ev.acked} traceEnCleared=${ev.traceEnCleared}` };
    case 'slice': return { value: String(ev.branches) };
    case 'exit': return { value: String(ev.code) };
    case 'fault': return { fault: ev.error.message };
    default: { const x: never = ev; return x; }
  }
}
