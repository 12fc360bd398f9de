// Driver fault knobs: each one makes the driver break ONE
// ordering or bookkeeping rule of the SDM, the way a plausible driver bug
// would. They exist to prove that the scenario suite — the only check a lab
// has on real hardware — catches a wrong driver, not only a wrong model:
// test/scenarios/driver-faults.test.ts turns each on and expects a FAIL.
// None is ever on unless asked for (`ptlab run --driver-fault NAME`).
import { PtError } from './base/errors.js';

/** One deliberate driver bug, named for the rule it breaks. */
export type DriverFault =
  /** PMI handler: CTL (TraceEn=1) is restored before the ToPA tables are refilled (docs/sdm/output.md §7.1: refill with TraceEn=0). */
  | 'restore-ctl-before-refill'
  /** PMI handler: CTL is restored before STATUS and the output pointers are rewritten (§7.2: those writes need TraceEn=0). */
  | 'restore-ctl-before-pointers'
  /** PMI handler: PendTopaPMI is left at 1 after a PMI handled with TraceEn=1 (§7.4 rule 2). */
  | 'skip-pend-clear'
  /** PMI handler: the LVT entry is unmasked before PendTopaPMI is cleared and [55] acknowledged (§7.4 rule 2). */
  | 'unmask-before-clear'
  /** PMI handler: GLOBAL_STATUS[55] is never acknowledged through IA32_PERF_GLOBAL_STATUS_RESET (docs/sdm/msrs.md §11). */
  | 'skip-global-ack'
  /** PMI handler: the "not a ToPA PMI" test is inverted (GLOBAL_STATUS[55] clear is taken as a ToPA PMI). */
  | 'invert-not-topa'
  /** Final stop: a ToPA PMI still pending or pended at the final disable is left as it is. */
  | 'skip-final-settle'
  /** Open: the fail-safe refusal to program a CPU someone else traces on (TraceEn=1) is skipped. */
  | 'no-fail-safe'
  /** Manual context restore: CTL (TraceEn=1) is written first instead of last (docs/sdm/xsave.md §5). */
  | 'manual-restore-ctl-first'
  /** Manual context save: the output MSRs are read before TraceEn is cleared (inexact while tracing: docs/sdm/msrs.md §5). */
  | 'manual-save-before-stop'
  /** Several contexts: a ToPA PMI is always taken as the loaded context's, never as a switched-out one's (contexts.ts). */
  | 'ignore-switched-out'
  /** PMI handler: GLOBAL_STATUS[55] is acknowledged again although the top half did (a newer PMI's [55] can be lost). */
  | 'double-ack'
  /** Context restore: STATUS.PendPSB of the saved state is cleared before it is loaded (a PSB owed at the save is lost: docs/sdm/output.md §7.4). */
  | 'drop-pend-psb'
  /** Release: a run that ends early frees its buffers without clearing TraceEn first (docs/sdm/output.md §9). */
  | 'free-before-disable'
  /** Open: the trace is not confined to the workload (no IP or CR3 filter): other code on the CPU is traced too. */
  | 'no-confine'
  /** PMI handler: the LVT entry is never unmasked (as if perf's NMI handler always did it: docs/sdm/msrs.md §11.1). */
  | 'skip-unmask'
  /** Trace run: TraceEn is set before the workload is started, not once it waits at its entry: the loader is traced too. */
  | 'early-enable'
  /** Several contexts: the loaded context's part of a merged ToPA PMI is never serviced (PmiHandler.handleIfDue does nothing: docs/sdm/output.md §4.5). */
  | 'skip-merged-pmi';

/** What each fault breaks, in one line (ptlab list, result.json figures). */
export const DRIVER_FAULTS: Readonly<Record<DriverFault, string>> = {
  'restore-ctl-before-refill': 'the PMI handler restores CTL before refilling the ToPA tables',
  'restore-ctl-before-pointers': 'the PMI handler restores CTL before rewriting STATUS and the output pointers',
  'skip-pend-clear': 'the PMI handler leaves PendTopaPMI set',
  'unmask-before-clear': 'the PMI handler unmasks the LVT before clearing PendTopaPMI and acknowledging [55]',
  'skip-global-ack': 'the PMI handler never acknowledges GLOBAL_STATUS[55]',
  'invert-not-topa': 'the PMI handler inverts its "not a ToPA PMI" test',
  'skip-final-settle': 'the final stop leaves a pending ToPA PMI unhandled',
  'no-fail-safe': 'the driver programs a CPU although TraceEn is already 1',
  'manual-restore-ctl-first': 'the manual context restore writes CTL first',
  'manual-save-before-stop': 'the manual context save reads the output MSRs before clearing TraceEn',
  'ignore-switched-out': 'a ToPA PMI is always handled as the loaded context\'s, never on a switched-out context\'s image',
  'double-ack': 'the PMI handler acknowledges GLOBAL_STATUS[55] although the top half already did',
  'drop-pend-psb': 'the context restore clears PendPSB in the saved STATUS before loading it',
  'free-before-disable': 'a run that ends early frees its buffers while TraceEn may still be 1',
  'no-confine': 'the trace is not confined to the workload: other code on the traced CPU is traced too',
  'skip-unmask': 'the PMI handler never unmasks the LVT entry, counting on a co-resident perf handler to',
  'early-enable': 'TraceEn is set before the workload is started, so the code that loads it is traced too',
  'skip-merged-pmi': 'a ToPA PMI that was a switched-out context\'s and the loaded one\'s is serviced for the switched-out one only',
};

/** Every fault name. */
export const DRIVER_FAULT_NAMES = Object.keys(DRIVER_FAULTS) as DriverFault[];

/** The set of faults a driver component consults; empty in every real run. */
export type DriverFaults = ReadonlySet<DriverFault>;

/** No fault: the driver as it should be. */
export const NO_FAULTS: DriverFaults = new Set();

/** Throws PtError('bad_config') unless `name` is a driver fault. */
export function driverFault(name: string): DriverFault {
  if (!(name in DRIVER_FAULTS)) throw new PtError('bad_config', `unknown driver fault '${name}' (faults: ${DRIVER_FAULT_NAMES.join(', ')})`);
  return name as DriverFault;
}
