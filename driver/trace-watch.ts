// Which CPUs a driver may have left tracing, from the calls it sent (docs/design.md "The
// invariant"): every IA32_RTIT_CTL it wrote and how the write ended, every XRSTORS (which sets
// TraceEn from its image, docs/sdm/xsave.md §3) and every XSAVES of PT state (which clears it,
// §2 step 2). A call that threw may or may not have reached the CPU, so it counts as tracing when
// either its value or what was there before had TraceEn=1. A read of CTL on a CPU the driver has
// written is believed over the writes (a disable that did not take shows there). A CPU someone else
// traces on is not in the list: the driver never wrote CTL there, so it is not the driver's to stop.
import { traceEnOf } from './ctl.js';
import { IA32_RTIT_CTL } from './hw/msrs.js';
import { decodePtState, ptStateBytes } from './hw/xsave.js';
import type { MsrOp, MsrResult } from './target.js';
import type { TracingCpu } from './teardown.js';

const CTL = IA32_RTIT_CTL.address;

/** How a call ended: it took effect, it faulted (#GP: nothing changed), or nobody knows (it threw). */
export type CallOutcome = 'done' | 'faulted' | 'unknown';

/** The IA32_RTIT_CTL each CPU may hold because of this driver's calls. */
export class TraceEnWatch {
  /** Last CTL value written per CPU (TraceEn may be 1 when bit 0 is). */
  private readonly ctl = new Map<number, bigint>();

  /** A WRMSR of CTL on `cpu`. */
  ctlWrite(cpu: number, value: bigint, outcome: CallOutcome): void {
    if (outcome === 'faulted') return;
    const before = this.ctl.get(cpu);
    if (outcome === 'done' || traceEnOf(value) || before === undefined) this.ctl.set(cpu, value);
    else if (!traceEnOf(before)) this.ctl.set(cpu, value);
    // unknown with TraceEn=0 over a CTL that had it: may still be 1, keep the older value
  }

  /** An RDMSR of CTL on `cpu` that read `value`: on a CPU this driver has written, what CTL now holds. */
  ctlRead(cpu: number, value: bigint): void {
    if (this.ctl.has(cpu)) this.ctl.set(cpu, value);
  }

  /** An MSR batch on `cpu` and its results (undefined: the batch threw, every op's outcome unknown). */
  batch(cpu: number, ops: readonly MsrOp[], results: readonly MsrResult[] | undefined): void {
    for (const [i, o] of ops.entries()) {
      if (o.msr !== CTL) continue;
      const r = results?.[i];
      if (o.op === 'rdmsr') { if (r?.ok) this.ctlRead(cpu, r.value); continue; }
      this.ctlWrite(cpu, o.value, results === undefined ? 'unknown' : r === undefined ? 'faulted' : r.ok ? 'done' : 'faulted');
    }
  }

  /** An XRSTORS of `area` on `cpu`: CTL is loaded from the image, last (docs/sdm/xsave.md §3 step 5). */
  xrstors(cpu: number, area: Uint8Array, outcome: CallOutcome): void {
    let ctl: bigint | undefined;
    try {
      const bytes = ptStateBytes(area);
      ctl = bytes ? decodePtState(bytes).IA32_RTIT_CTL : undefined;
    } catch {
      ctl = undefined;
    }
    // An image the driver cannot read may hold anything: assume it enabled tracing.
    this.ctlWrite(cpu, ctl ?? 1n, outcome);
  }

  /** An XSAVES of PT state on `cpu`: TraceEn cleared once saved (docs/sdm/xsave.md §2 step 2). */
  xsaves(cpu: number, outcome: CallOutcome): void {
    const before = this.ctl.get(cpu);
    if (outcome === 'done' && before !== undefined) this.ctl.set(cpu, before & ~1n);
  }

  /** The CPUs that may be tracing because of this driver, with the CTL last written there. */
  tracing(): TracingCpu[] {
    return [...this.ctl].filter(([, v]) => traceEnOf(v)).map(([cpu, ctl]) => ({ cpu, ctl }));
  }
}
