// Saving and restoring trace state at a context switch:
// manually with RDMSR/WRMSR (docs/sdm/xsave.md §5: CTL first on save, last on
// restore) or with XSAVES/XRSTORS of state component 8 (docs/sdm/xsave.md §2–§4),
// where the CPU enumerates XSAVES and IA32_XSS[8].
import { PtError, UnsupportedError } from './base/errors.js';
import { traceEnOf, withoutTraceEn } from './ctl.js';
import { NO_FAULTS, type DriverFaults } from './faults.js';
import { cpuidBitName, type PtCaps } from './hw/cpuid.js';
import {
  IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS,
} from './hw/msrs.js';
import { decodePtState, encodePtState, PT_STATE_BIT, ptStateBytes } from './hw/xsave.js';
import type { PtImage } from './pmi/handler.js';
import { rd, wr, type StepOp, type TargetIo } from './io.js';

const CTL = IA32_RTIT_CTL.address;
/** The MSRs the CPU itself changes while tracing: they must be read back at every save (docs/sdm/xsave.md §5 step 3). */
const LIVE = [IA32_RTIT_OUTPUT_BASE.address, IA32_RTIT_OUTPUT_MASK_PTRS.address, IA32_RTIT_STATUS.address] as const;

/** A saved trace context. */
export type SavedContext =
  | { readonly kind: 'manual'; readonly ctl: bigint; readonly live: readonly bigint[] }
  | { readonly kind: 'xsaves'; readonly area: Uint8Array; readonly extra: readonly bigint[] };

/** The output state of a saved context (CTL, OUTPUT_BASE, MASK_PTRS, STATUS), as a PMI handler edits it. */
export function readImage(s: SavedContext): PtImage {
  if (s.kind === 'manual') return { ctl: s.ctl, outputBase: s.live[0]!, maskPtrs: s.live[1]!, status: s.live[2]! };
  const st = decodePtState(componentOf(s.area));
  return { ctl: st.IA32_RTIT_CTL, outputBase: st.IA32_RTIT_OUTPUT_BASE, maskPtrs: st.IA32_RTIT_OUTPUT_MASK_PTRS, status: st.IA32_RTIT_STATUS };
}

/** `s` with `img`'s output state: the XSAVE area is edited in place (docs/sdm/xsave.md §1.1 offsets); a manual save is copied. */
export function writeImage(s: SavedContext, img: PtImage): SavedContext {
  if (s.kind === 'manual') return { kind: 'manual', ctl: s.ctl, live: [img.outputBase, img.maskPtrs, img.status] };
  const bytes = componentOf(s.area);
  const st = decodePtState(bytes);
  bytes.set(encodePtState({
    ...st, IA32_RTIT_OUTPUT_BASE: img.outputBase, IA32_RTIT_OUTPUT_MASK_PTRS: img.maskPtrs, IA32_RTIT_STATUS: img.status,
  }, bytes.length));
  return s;
}

// Stryker disable all: the driver fault 'drop-pend-psb' (driver/faults.ts) only, off in every real run
/** `s` with STATUS.PendPSB cleared (driver fault 'drop-pend-psb' only). */
function withoutPendPsb(s: SavedContext): SavedContext {
  const img = readImage(s);
  return writeImage(s, { ...img, status: IA32_RTIT_STATUS.encode({ ...IA32_RTIT_STATUS.decode(img.status), PendPSB: false }) });
}
// Stryker restore all

function componentOf(area: Uint8Array): Uint8Array {
  const bytes = ptStateBytes(area);
  // Stryker disable next-line all: a guard against misuse or a broken invariant that no valid scenario reaches (test/driver/guards.test.ts)
  if (!bytes) throw new PtError('bad_state', 'the XSAVE area holds no PT state (XCOMP_BV[8] = 0)');
  return bytes;
}

/** Throws UnsupportedError unless the CPU can XSAVES PT state (docs/sdm/xsave.md §1: CPUID.(0DH,1):EAX[3] and ECX[8]). */
// Stryker disable all: reached only through the guarded constructor call above (checkRequest refuses first)
export function requireXsavesPt(caps: PtCaps): void {
  if (!caps.xsaves) throw new UnsupportedError('XSAVES/XRSTORS', cpuidBitName('xsaves'));
  if (!caps.xssPtState) throw new UnsupportedError('XSAVES of PT state (IA32_XSS[8])', cpuidBitName('xssPtState'));
}
// Stryker restore all

/** Saves and restores one context's trace state. */
export class ContextSwitcher {
  /**
   * `software`: the CR3_MATCH/ADDRn writes this context owns (only software changes them), written
   * again at restore. With XSAVES, component 8 holds ADDR0/ADDR1 only; ADDR2/ADDR3 are switched by
   * hand (docs/sdm/xsave.md §1.1).
   */
  constructor(
    private readonly io: TargetIo,
    caps: PtCaps,
    readonly mode: 'manual' | 'xsaves',
    private readonly software: readonly StepOp[],
    private readonly faults: DriverFaults = NO_FAULTS,
    // Stryker disable next-line BlockStatement: the body is only the guard below (same reason)
  ) {
    // Stryker disable next-line all: checkRequest refuses XSAVES switching on such a CPU before a ContextSwitcher exists; this guards direct API use (unit tests hit it)
    if (mode === 'xsaves') requireXsavesPt(caps);
  }

  /** Save: CTL first (read, then clear TraceEn), then the MSRs the CPU updates. */
  async save(): Promise<SavedContext> {
    if (this.mode === 'xsaves') {
      // XSAVES saves CTL, clears TraceEn, then saves the other 8 (docs/sdm/xsave.md §2).
      const area = await this.io.xsaves(PT_STATE_BIT);
      const extra = await this.io.batch(this.handSwitched().map((o) => rd(o.msr, `save: ${o.step}`)));
      return { kind: 'xsaves', area, extra };
    }
    const [ctl] = await this.io.batch([rd(CTL, 'save: read CTL')]);
    const stop = traceEnOf(ctl!) ? [wr(CTL, withoutTraceEn(ctl!), 'save: TraceEn=0')] : [];
    const reads = LIVE.map((m) => rd(m, 'save: read output state'));
    // Stryker disable all: a driver-fault hook (driver/faults.ts), off in every real run
    if (this.faults.has('manual-save-before-stop')) {
      const vals = await this.io.batch([...reads, ...stop]);
      return { kind: 'manual', ctl: ctl!, live: vals.slice(0, reads.length) };
    }
    // Stryker restore all
    const vals = await this.io.batch([...stop, ...reads]);
    return { kind: 'manual', ctl: ctl!, live: vals.slice(stop.length) };
  }

  /** Restore: everything but CTL (TraceEn is 0), then CTL last; XRSTORS loads CTL last itself (§3 step 5). */
  async restore(saved: SavedContext): Promise<void> {
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    const s = this.faults.has('drop-pend-psb') ? withoutPendPsb(saved) : saved;
    if (s.kind === 'xsaves') {
      const extra = this.handSwitched().map((o, i) => wr(o.msr, s.extra[i]!, `restore: ${o.step}`));
      await this.io.batch(extra);
      await this.io.xrstors(s.area, PT_STATE_BIT);
      return;
    }
    const rest = [
      ...LIVE.map((m, i) => wr(m, s.live[i]!, 'restore: output state')),
      ...this.software.map((o) => ({ ...o, step: `restore: ${o.step}` })),
    ];
    const ctl = wr(CTL, s.ctl, 'restore: CTL last');
    // Stryker disable next-line all: a driver-fault hook (driver/faults.ts), off in every real run
    const first = this.faults.has('manual-restore-ctl-first') ? [ctl] : [];
    await this.io.batch([...first, ...rest, ctl]);
  }

  /** ADDR2/ADDR3 writes: not in component 8. */
  private handSwitched(): StepOp[] {
    const outside = new Set([2, 3].flatMap((n) => [IA32_RTIT_ADDR_A[n]!.address, IA32_RTIT_ADDR_B[n]!.address]));
    return this.software.filter((o) => outside.has(o.msr));
  }
}
