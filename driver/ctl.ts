// The IA32_RTIT_CTL value of a request (docs/sdm/msrs.md §3.1), built from the
// field table, never from bare shifts. A request's CTL options carry
// the field names (request.ts), so the mapping is a loop over the table's names.
import { IA32_RTIT_CTL } from './hw/msrs.js';
import {
  CTL_ENABLED_BY, CTL_FIELDS_NOT_OPTIONS, CTL_OPTION_DEFAULTS,
  type CtlFieldName, type CtlOptionName, type TraceRequest,
} from './request.js';

/** ADDRn_CFG encodings (docs/sdm/msrs.md §3.2). */
const ADDR_CFG_ROLE = { filter: 1, tracestop: 2 } as const;
const ADDR_CFG = ['ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG'] as const;

/** Every IA32_RTIT_CTL field name, in table (bit) order. */
export const CTL_FIELD_NAMES = Object.keys(IA32_RTIT_CTL.fields) as CtlFieldName[];

/** The CTL fields a request sets by name (request.ts `CtlOptions`), in table order. */
export const CTL_OPTION_NAMES: readonly CtlOptionName[] =
  CTL_FIELD_NAMES.filter((n): n is CtlOptionName => !Object.hasOwn(CTL_FIELDS_NOT_OPTIONS, n));

type CtlValue = boolean | number;
const optionOf = (req: TraceRequest, name: CtlOptionName): CtlValue | undefined => req[name];

/** The enable bits `CTL_ENABLED_BY` pairs with a value field, as entries. */
const ENABLES = Object.entries(CTL_ENABLED_BY) as [CtlFieldName, CtlOptionName][];

/**
 * The CTL fields `req` asks for, in table order: its options that are present and not false (a
 * value field counts when present, even 0), the enable bits they imply (MTCEn, CYCEn), CR3Filter
 * for CR3_MATCH, ToPA for ToPA output and ADDRn_CFG for its ranges. TraceEn is not among them.
 * checkRequest asks the field table for each one's gate.
 */
export function requestedCtlFields(req: TraceRequest): CtlFieldName[] {
  const asked = new Set<CtlFieldName>();
  for (const n of CTL_OPTION_NAMES) {
    const v = optionOf(req, n);
    if (v !== undefined && v !== false) asked.add(n);
  }
  for (const [enable, by] of ENABLES) if (optionOf(req, by) !== undefined) asked.add(enable);
  if (req.CR3_MATCH !== undefined) asked.add('CR3Filter');
  if (req.output.scheme === 'topa') asked.add('ToPA');
  for (const n of (req.ranges ?? []).keys()) if (n < ADDR_CFG.length) asked.add(ADDR_CFG[n]!);
  return CTL_FIELD_NAMES.filter((n) => asked.has(n));
}

/** IA32_RTIT_CTL for `req` with TraceEn = `traceEn` (checkRequest must have accepted `req`). */
export function ctlFor(req: TraceRequest, traceEn: boolean): bigint {
  const v: Record<string, CtlValue> = { ...CTL_OPTION_DEFAULTS };
  for (const n of CTL_OPTION_NAMES) {
    const o = optionOf(req, n);
    if (o !== undefined) v[n] = o;
  }
  for (const [enable, by] of ENABLES) v[enable] = optionOf(req, by) !== undefined;
  v.TraceEn = traceEn;
  v.ToPA = req.output.scheme === 'topa';
  v.CR3Filter = req.CR3_MATCH !== undefined;
  for (const [n, r] of (req.ranges ?? []).entries()) v[ADDR_CFG[n]!] = ADDR_CFG_ROLE[r.role];
  return IA32_RTIT_CTL.encode(v);
}

/** `ctl` with TraceEn cleared, every other bit kept. */
export function withoutTraceEn(ctl: bigint): bigint {
  return ctl & ~IA32_RTIT_CTL.encode({ TraceEn: true });
}

/** True when `ctl` has TraceEn set. */
export function traceEnOf(ctl: bigint): boolean {
  return IA32_RTIT_CTL.decode(ctl).TraceEn;
}
