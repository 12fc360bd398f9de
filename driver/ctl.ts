// The IA32_RTIT_CTL value of a request (docs/sdm/msrs.md §3.1), built from the
// field table, never from bare shifts (STYLE §3).
import { IA32_RTIT_CTL } from './hw/msrs.js';
import type { TraceRequest } from './request.js';

/** ADDRn_CFG encodings (docs/sdm/msrs.md §3.2). */
const ADDR_CFG_ROLE = { filter: 1, tracestop: 2 } as const;
const ADDR_CFG = ['ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG'] as const;

/** IA32_RTIT_CTL for `req` with TraceEn = `traceEn` (checkRequest must have accepted `req`). */
export function ctlFor(req: TraceRequest, traceEn: boolean): bigint {
  const v: Record<string, boolean | number> = {
    TraceEn: traceEn,
    OS: req.os ?? false,
    User: req.user ?? true,
    BranchEn: req.branchEn ?? true,
    ToPA: req.output.scheme === 'topa',
    TSCEn: req.tsc ?? false,
    DisRETC: req.disRetc ?? false,
    CR3Filter: req.cr3Match !== undefined,
    MTCEn: req.mtc !== undefined,
    MTCFreq: req.mtc?.freq ?? 0,
    CYCEn: req.cyc !== undefined,
    CycThresh: req.cyc?.thresh ?? 0,
    PSBFreq: req.psbFreq ?? 0,
    PTWEn: req.ptwrite !== undefined,
    FUPonPTW: req.ptwrite?.fupOnPtw ?? false,
    PwrEvtEn: req.powerEvents ?? false,
    EventEn: req.eventTrace ?? false,
    DisTNT: req.disTnt ?? false,
    InjectPsbPmiOnEnable: req.pmiPreservation ?? false,
  };
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
