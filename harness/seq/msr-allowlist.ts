// The MSRs a sequence may write on a real CPU without --allow-msr (docs/formats/seq.md "Targets"):
// the PT unit's (every IA32_RTIT_*, docs/sdm/msrs.md §1–§3) and the performance-monitoring status
// MSRs of the ToPA PMI (IA32_PERF_GLOBAL_STATUS, _RESET, _SET: docs/sdm/msrs.md §11). A write to
// any of them changes tracing only. Everything else — IA32_DEBUGCTL (LBR, BTF, freeze bits),
// IA32_XSS (the OS's XSAVES supervisor state), the LVT performance-monitor entry (where every
// PMI of the machine goes), and every MSR outside the field tables — reaches state the kernel
// owns, so it needs --allow-msr.
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, RTIT_MSRS,
} from '../../driver/hw/msrs.js';

/** The allowlist, by address. */
export const WRMSR_ALLOWLIST: ReadonlySet<number> = new Set([
  ...RTIT_MSRS.map((m) => m.address),
  IA32_PERF_GLOBAL_STATUS.address, IA32_PERF_GLOBAL_STATUS_RESET.address, IA32_PERF_GLOBAL_STATUS_SET.address,
]);

/** The allowlist as the refusal names it. */
export const WRMSR_ALLOWLIST_TEXT = 'IA32_RTIT_*, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET';
