// What a user asks one trace run for (docs/design.md "One trace run, as data flows"): the output
// scheme and its sizes, and the IA32_RTIT_CTL options (docs/sdm/msrs.md §3.1), each under the
// name of its field in the field table (driver/hw/msrs.ts): one spelling per SDM field.
// `checkRequest` (check-request.ts) refuses what the CPU does not enumerate.
import type { Decoded } from './hw/field.js';
import type { IA32_RTIT_CTL } from './hw/msrs.js';

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

type CtlFields = (typeof IA32_RTIT_CTL)['fields'];
/** An IA32_RTIT_CTL field name (driver/hw/msrs.ts). */
export type CtlFieldName = keyof CtlFields;

/**
 * The IA32_RTIT_CTL fields that are NOT request options, each with what sets it instead. Every
 * other field of the table is an option of the same name and type (`CtlOptions`), so a field added
 * to the table is an option at once, under its SDM name.
 */
export const CTL_FIELDS_NOT_OPTIONS = {
  TraceEn: 'the driver, when it enables and disables tracing',
  ToPA: "output.scheme 'topa'",
  FabricEn: 'nothing: ptlab writes its trace to memory, never to the trace transport subsystem',
  CR3Filter: 'CR3_MATCH present',
  MTCEn: 'MTCFreq present',
  CYCEn: 'CycThresh present',
  ADDR0_CFG: 'ranges[0].role',
  ADDR1_CFG: 'ranges[1].role',
  ADDR2_CFG: 'ranges[2].role',
  ADDR3_CFG: 'ranges[3].role',
} as const satisfies { readonly [K in CtlFieldName]?: string };

/**
 * Enable bits set by the presence of their value field: a request gives MTCFreq (CycThresh) and
 * gets MTCEn=1 (CYCEn=1), so no request can ask for an MTC period with MTCEn=0.
 */
export const CTL_ENABLED_BY = { MTCEn: 'MTCFreq', CYCEn: 'CycThresh' } as const satisfies { readonly [K in CtlFieldName]?: CtlFieldName };

/** A CTL field that is a request option (under the field's name). */
export type CtlOptionName = Exclude<CtlFieldName, keyof typeof CTL_FIELDS_NOT_OPTIONS>;

/** Absent options are 0, except these: by default a request traces CPL > 0 with COFI packets (docs/sdm/msrs.md §3.1). */
export const CTL_OPTION_DEFAULTS = { User: true, BranchEn: true } as const satisfies { readonly [K in CtlOptionName]?: Decoded<CtlFields>[K] };

/**
 * The IA32_RTIT_CTL options of a request: one per field of the table but those in
 * `CTL_FIELDS_NOT_OPTIONS`, under the field's SDM name with its decoded type (a flag: boolean, a
 * wider field: its encoding), docs/sdm/msrs.md §3.1–§3.2:
 * - OS, User: trace CPL 0 / CPL > 0 (default: User only). BranchEn: COFI packets (default 1).
 * - TSCEn, DisRETC, PwrEvtEn, EventEn, DisTNT, InjectPsbPmiOnEnable (PSB and PMI preservation,
 *   docs/sdm/output.md §7.4), PTWEn, FUPonPTW: the CTL bits of those names. FUPonPTW without
 *   PTWEn is refused (checkRequest): it would ask for FUPs after PTW packets that never come.
 * - MTCFreq (an encoding of L14.1.EAX[31:16]; present ⇒ MTCEn=1), CycThresh (L14.1.EBX[15:0];
 *   present ⇒ CYCEn=1), PSBFreq (L14.1.EBX[31:16]).
 */
export type CtlOptions = { readonly [K in CtlOptionName]?: Decoded<CtlFields>[K] };

/** What a trace run asks of the CPU besides its output: the CTL options and the non-CTL ones. Absent options are off. */
export interface TraceOptions extends CtlOptions {
  /** IA32_RTIT_CR3_MATCH (the MSR's SDM name) = this value; present ⇒ CR3Filter=1. */
  readonly CR3_MATCH?: bigint;
  /** Up to 4 address ranges (ADDRn_CFG = 1 filter, 2 TraceStop). */
  readonly ranges?: readonly AddressRange[];
  /** Context switching at `slice` events (default 'none'). */
  readonly switching?: SwitchMode;
}

/** Everything a trace run asks of the CPU. Absent options are off. */
export interface TraceRequest extends TraceOptions {
  readonly output: SingleRangeRequest | TopaRequest;
}
