// Programming the PT unit (docs/design.md step 3, docs/sdm/msrs.md, docs/sdm/xsave.md §5
// notes): the enable and disable sequences, each ONE msrBatch round trip.
import { PtBusyError, PtError } from './base/errors.js';
import { ctlFor, traceEnOf, withoutTraceEn } from './ctl.js';
import { NO_FAULTS, type DriverFaults } from './faults.js';
import {
  IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE,
  IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS,
} from './hw/msrs.js';
import { rd, wr, type StepOp, type TargetIo } from './io.js';
import type { HwPointers } from './output/plan.js';
import type { TraceRequest } from './request.js';

const CTL = IA32_RTIT_CTL.address, STATUS = IA32_RTIT_STATUS.address;
const BASE = IA32_RTIT_OUTPUT_BASE.address, MASK = IA32_RTIT_OUTPUT_MASK_PTRS.address;

/** What the disable sequence read (exact: TraceEn=0, docs/sdm/output.md §2). */
export interface StopState extends HwPointers {
  /** IA32_RTIT_CTL read back after the disable: TraceEn=0 (docs/design.md "The invariant"). */
  readonly ctl: bigint;
  readonly status: bigint;
  readonly stopped: boolean;
  readonly error: boolean;
}

/**
 * The enable/disable sequences of one trace run. A run enables once, so every MSR is written in
 * full (a cache of values already in the MSRs, as Linux's `pt_config_buffer` keeps across many
 * enables, would never hit here).
 */
export class Programmer {
  /** CTL as last written by `enable`. */
  ctl = 0n;

  constructor(private readonly io: TargetIo, private readonly req: TraceRequest, private readonly faults: DriverFaults = NO_FAULTS) {}

  /** Fail safe (as Linux's `pt_init` does): refuse (PtBusyError) when someone else has TraceEn=1. */
  async assertIdle(): Promise<void> {
    const [ctl] = await this.io.batch([rd(CTL, 'fail-safe: read IA32_RTIT_CTL')]);
    if (traceEnOf(ctl!) && !this.faults.has('no-fail-safe')) throw new PtBusyError(this.io.cpu, ctl!, this.io.target.description);
  }

  /** CR3_MATCH and ADDRn_A/B writes of the request (the values a context restore must also write). */
  filterOps(): StepOp[] {
    const ops: StepOp[] = [];
    if (this.req.CR3_MATCH !== undefined) ops.push(wr(IA32_RTIT_CR3_MATCH.address, this.req.CR3_MATCH, 'enable: CR3_MATCH'));
    for (const [n, r] of (this.req.ranges ?? []).entries()) {
      ops.push(wr(IA32_RTIT_ADDR_A[n]!.address, r.a, `enable: ADDR${n}_A`), wr(IA32_RTIT_ADDR_B[n]!.address, r.b, `enable: ADDR${n}_B`));
    }
    return ops;
  }

  /** TraceEn=0 → STATUS=0 → OUTPUT_BASE → OUTPUT_MASK_PTRS → CR3_MATCH → ADDRn → CTL with TraceEn=1, one round trip. */
  async enable(out: HwPointers): Promise<void> {
    const ctl = ctlFor(this.req, true);
    const ops: StepOp[] = [
      wr(CTL, withoutTraceEn(ctl), 'enable: TraceEn=0'),
      // A fresh trace: clear Stopped/Error, PacketByteCnt=0 so it starts with PSB+ (docs/sdm/msrs.md §4).
      wr(STATUS, 0n, 'enable: STATUS=0'),
      wr(BASE, out.outputBase, 'enable: OUTPUT_BASE'),
      wr(MASK, out.maskPtrs, 'enable: OUTPUT_MASK_PTRS'),
      ...this.filterOps(),
      wr(CTL, ctl, 'enable: CTL with TraceEn=1'),
    ];
    await this.io.batch(ops);
    this.ctl = ctl;
  }

  /**
   * TraceEn=0 → read CTL back → read STATUS (Error, Stopped) → read OUTPUT_BASE/MASK_PTRS, one round
   * trip. Throws PtError('bad_state') when CTL still reads TraceEn=1: the run's memory must not be
   * freed then (docs/design.md "The invariant").
   */
  async disable(): Promise<StopState> {
    const [, ctl, status, outputBase, maskPtrs] = await this.io.batch([
      wr(CTL, withoutTraceEn(this.ctl), 'disable: TraceEn=0'),
      rd(CTL, 'disable: read back CTL'),
      rd(STATUS, 'disable: read STATUS'),
      rd(BASE, 'disable: read OUTPUT_BASE'),
      rd(MASK, 'disable: read OUTPUT_MASK_PTRS'),
    ]);
    if (traceEnOf(ctl!)) throw new PtError('bad_state', `IA32_RTIT_CTL still reads TraceEn=1 (0x${ctl!.toString(16)}) after the disable`);
    const st = IA32_RTIT_STATUS.decode(status!);
    return { ctl: ctl!, status: status!, outputBase: outputBase!, maskPtrs: maskPtrs!, stopped: st.Stopped, error: st.Error };
  }
}
