// What a user asks one trace run for (docs/design.md "One trace run, as data flows"): the output
// scheme and its sizes, and the IA32_RTIT_CTL options (docs/sdm/msrs.md §3.1).
// `checkRequest` (check-request.ts) refuses what the CPU does not enumerate.

/** Where INT and STOP go in the ToPA tables, and what the PMI handler does (docs/sdm/output.md §7.1). */
export type TopaPolicy =
  /** Add entries after the table's last one on each PMI; chain a new table once the table is full. */
  | 'grow'
  /** On each PMI, make the current table's END link to a new, filled-in table. */
  | 'chain'
  /** END back to the base; filled regions are swapped for fresh ones so nothing is overwritten. */
  | 'circular-fresh'
  /** A reused ring with STOP+INT on the entry before unread data (Linux `pt_buffer_reset_markers`). */
  | 'protect-unread'
  /** One output entry + END to the table itself (the only layout MENTRY=0 CPUs accept: docs/sdm/output.md §4.6). */
  | 'single-entry'
  /**
   * The SDM algorithm's branch chosen at each PMI under a memory budget (`TopaRequest.budget`):
   * grow while the output regions fit in the budget, then circularize the table (END back to its
   * base, each region copied out before it is reused, STOP on the entry before unread data).
   */
  | 'budget';

/** Policy 'budget' without `budget`: 1 MiB of output regions. */
export const DEFAULT_TOPA_BUDGET = 1 << 20;

/** Every ToPA policy, for tables of tests and CLI checks. */
export const TOPA_POLICIES: readonly TopaPolicy[] = ['grow', 'chain', 'circular-fresh', 'protect-unread', 'single-entry', 'budget'];

/** Single-range output: one circular, size-aligned range (docs/sdm/output.md §3). */
export interface SingleRangeRequest {
  readonly scheme: 'single-range';
  /** Bytes: a power of two from 128 B to the target's maximum contiguous allocation. */
  readonly size: number;
}

/** ToPA output (docs/sdm/output.md §4). */
export interface TopaRequest {
  readonly scheme: 'topa';
  readonly policy: TopaPolicy;
  /** Bytes of each output region: 4 KiB << 0..15. */
  readonly regionSize: number;
  /** Output regions in the first table (and in each chained table, and per grow step). */
  readonly regions: number;
  /** Capacity of one table in entries, the END included (default 512: one 4 KiB page). */
  readonly tableEntries?: number;
  /** Policy 'budget': bytes of output regions the driver may hold at once (default 1 MiB). */
  readonly budget?: number;
}

/** An address range of IA32_RTIT_ADDRn_A/B with its ADDRn_CFG role (docs/sdm/msrs.md §3.2, §8). */
export interface AddressRange {
  readonly role: 'filter' | 'tracestop';
  /** Inclusive bounds, canonical linear addresses. */
  readonly a: bigint;
  readonly b: bigint;
}

/** How the driver saves and restores trace state at a `slice` event (docs/sdm/xsave.md §2–§5). */
export type SwitchMode = 'none' | 'manual' | 'xsaves';

/** Everything a trace run asks of the CPU. Absent options are off. */
export interface TraceRequest {
  readonly output: SingleRangeRequest | TopaRequest;
  /** CTL.OS / CTL.User: trace CPL 0 / CPL > 0 (default: User only). */
  readonly os?: boolean;
  readonly user?: boolean;
  /** CTL.BranchEn (default true). */
  readonly branchEn?: boolean;
  /** CTL.TSCEn. */
  readonly tsc?: boolean;
  /** CTL.MTCEn with MTCFreq = `freq` (an encoding of L14.1.EAX[31:16]). */
  readonly mtc?: { readonly freq: number };
  /** CTL.CYCEn with CycThresh = `thresh` (an encoding of L14.1.EBX[15:0]). */
  readonly cyc?: { readonly thresh: number };
  /** CTL.PSBFreq encoding (L14.1.EBX[31:16]). */
  readonly psbFreq?: number;
  /** CTL.DisRETC: no RET compression. */
  readonly disRetc?: boolean;
  /** CTL.CR3Filter with IA32_RTIT_CR3_MATCH = this value. */
  readonly cr3Match?: bigint;
  /** Up to 4 address ranges (ADDRn_CFG = 1 filter, 2 TraceStop). */
  readonly ranges?: readonly AddressRange[];
  /** CTL.PTWEn, and FUPonPTW when `fupOnPtw`. */
  readonly ptwrite?: { readonly fupOnPtw?: boolean };
  /** CTL.PwrEvtEn. */
  readonly powerEvents?: boolean;
  /** CTL.EventEn. */
  readonly eventTrace?: boolean;
  /** CTL.DisTNT. */
  readonly disTnt?: boolean;
  /** CTL.InjectPsbPmiOnEnable: PSB and PMI preservation (docs/sdm/output.md §7.4). */
  readonly pmiPreservation?: boolean;
  /** Context switching at `slice` events (default 'none'). */
  readonly switching?: SwitchMode;
}
