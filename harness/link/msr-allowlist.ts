// The MSRs ptlab writes on a real CPU (docs/formats/seq.md "Targets"; the guest module keeps the
// same list: guest/kmod/ptlab.c ptlab_wrmsr_allowed): the PT unit's (every IA32_RTIT_*,
// docs/sdm/msrs.md §1–§3) and the performance-monitoring status MSRs of the ToPA PMI
// (IA32_PERF_GLOBAL_STATUS, _RESET, _SET: docs/sdm/msrs.md §11). A write to any of them changes
// tracing only. Everything else — IA32_DEBUGCTL (LBR, BTF, freeze bits), IA32_XSS (the OS's
// XSAVES supervisor state), the LVT performance-monitor entry (where every PMI of the machine
// goes), and every MSR outside the field tables — reaches state the kernel owns: every helper
// target refuses it (`run`, `seq`, `replay`), unless it was opened with `allowMsr` (`ptlab seq
// --allow-msr`), and so does the module, unless its administrator listed it (`allow_msr=`).
import { PtError } from '../../driver/base/errors.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, MSR_NAMES, RTIT_MSRS,
} from '../../driver/hw/msrs.js';

/** The allowlist, by address. */
export const WRMSR_ALLOWLIST: ReadonlySet<number> = new Set([
  ...RTIT_MSRS.map((m) => m.address),
  IA32_PERF_GLOBAL_STATUS.address, IA32_PERF_GLOBAL_STATUS_RESET.address, IA32_PERF_GLOBAL_STATUS_SET.address,
]);

/** The allowlist as the refusal names it. */
export const WRMSR_ALLOWLIST_TEXT = 'IA32_RTIT_*, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET';

/** A WRMSR (or a batch holding one) to an MSR outside the allowlist, refused before anything was sent. */
export class MsrNotAllowedError extends PtError {
  override readonly name = 'MsrNotAllowedError';
  constructor(readonly msr: number, readonly where: string) {
    super('bad_config', `WRMSR ${MSR_NAMES.get(msr) ?? `0x${msr.toString(16)}`} on ${where} refused: it is not a PT or performance-monitoring MSR (${WRMSR_ALLOWLIST_TEXT}); \`ptlab seq --allow-msr\` lifts the refusal`);
  }
}

/** Throws MsrNotAllowedError for the first write of `ops` outside the allowlist. */
export function checkWrites(ops: Iterable<{ readonly op: 'rdmsr' | 'wrmsr'; readonly msr: number }>, where: string): void {
  for (const o of ops) if (o.op === 'wrmsr' && !WRMSR_ALLOWLIST.has(o.msr)) throw new MsrNotAllowedError(o.msr, where);
}
