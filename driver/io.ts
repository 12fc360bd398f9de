// The driver's access to one CPU of a target: MSR batches that turn a #GP
// into a typed error naming the step, and a count of round trips (every
// awaited target call), so a PMI's cost can be reported.
import { GeneralProtectionError, type CpuFault } from './hw/cpu-fault.js';
import type { CallOpts, MemoryContent, MsrOp, PhysRegion, Target } from './target.js';

/** A #GP inside a named step of a driver sequence ("enable: OUTPUT_BASE"). */
export class StepFaultError extends GeneralProtectionError {
  constructor(fault: CpuFault, readonly step: string) {
    super({ ...fault, reason: `${step}: ${fault.reason}` });
  }
}

/** One MSR operation with the name of the step it belongs to. */
export type StepOp = MsrOp & { readonly step: string };

/** One CPU of a target, as the driver uses it: counted round trips, faults as StepFaultError. */
export class TargetIo {
  /** Awaited target calls so far. */
  roundTrips = 0;
  /** MSR batches so far (a subset of `roundTrips`). */
  batches = 0;

  constructor(readonly target: Target, readonly cpu: number, readonly opts: CallOpts = {}) {}

  /** Runs `ops` as ONE msrBatch; returns the value of every op (reads: the value read). Throws StepFaultError on #GP. */
  async batch(ops: readonly StepOp[]): Promise<bigint[]> {
    if (ops.length === 0) return [];
    this.roundTrips++;
    this.batches++;
    const res = await this.target.msrBatch(this.cpu, ops.map(({ step: _s, ...op }) => op), this.opts);
    const out: bigint[] = [];
    for (const [i, r] of res.entries()) {
      if (!r.ok) throw new StepFaultError(r.fault, ops[i]!.step);
      out.push(r.value);
    }
    return out;
  }

  /** Physical read (one round trip); with `into`, the bytes land there (see ReadOpts). */
  async read(addr: bigint, length: number, into?: Uint8Array): Promise<Uint8Array> {
    this.roundTrips++;
    return this.target.phys.read(addr, length, into === undefined ? this.opts : { ...this.opts, into });
  }

  /** Physical write (one round trip); `content` tells a recorder what the bytes are. */
  async write(addr: bigint, data: Uint8Array, content?: MemoryContent): Promise<void> {
    this.roundTrips++;
    await this.target.phys.write(addr, data, content === undefined ? this.opts : { ...this.opts, content });
  }

  /** Size-aligned, physically contiguous allocation (AllocationError surfaces as is). */
  async alloc(size: number, align: number = size): Promise<PhysRegion> {
    this.roundTrips++;
    return this.target.phys.alloc(size, align, this.opts);
  }

  async free(region: PhysRegion): Promise<void> {
    this.roundTrips++;
    await this.target.phys.free(region, this.opts);
  }

  /** XSAVES of `rfbm` (one round trip). */
  async xsaves(rfbm: bigint): Promise<Uint8Array> {
    this.roundTrips++;
    return this.target.xsaves(this.cpu, rfbm, this.opts);
  }

  /** XRSTORS of `area` (one round trip). */
  async xrstors(area: Uint8Array, rfbm: bigint): Promise<void> {
    this.roundTrips++;
    await this.target.xrstors(this.cpu, area, rfbm, this.opts);
  }

  /** Records a driver decision next to the operations (Target.note; no round trip). */
  note(text: string): void {
    this.target.note?.(this.cpu, text);
  }

  /** Unmasks the LVT performance-monitor entry. */
  async pmiEnable(): Promise<void> {
    this.roundTrips++;
    await this.target.pmiEnable(this.cpu, this.opts);
  }
}

/** A read op. */
export const rd = (msr: number, step: string): StepOp => ({ op: 'rdmsr', msr, step });
/** A write op. */
export const wr = (msr: number, value: bigint, step: string): StepOp => ({ op: 'wrmsr', msr, value, step });
