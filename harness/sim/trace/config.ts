// The generator's view of IA32_RTIT_CTL / STATUS / CR3_MATCH / ADDRn, decoded
// once when TraceEn goes 0→1 (docs/sdm/msrs.md §3–§8). Validity (#GP) is the MSR
// file's business; this only reads fields.
import { IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';
import { ipLe, type RtitRegs } from './events.js';

/** ADDRn_CFG values (docs/sdm/README.md §4.1). */
export const ADDR_CFG_FILTER = 1;
export const ADDR_CFG_TRACESTOP = 2;

/** Inclusive address ranges as IP numbers (signed 64-bit values, compared unsigned). */
export interface Ranges {
  readonly a: readonly number[];
  readonly b: readonly number[];
}

/**
 * Everything the generator needs from the RTIT MSRs. A register field keeps its SDM name (the
 * field table's, driver/hw/msrs.ts); what the generator derives from fields is in lower case.
 */
export interface TraceConfig {
  readonly OS: boolean;
  readonly User: boolean;
  readonly BranchEn: boolean;
  readonly CR3Filter: boolean;
  /** CR3_MATCH bits 63:12 as a number (compared with CR3 bits 63:12, docs/sdm/README.md §3.2). */
  readonly cr3MatchPfn: number;
  readonly DisRETC: boolean;
  readonly DisTNT: boolean;
  readonly TSCEn: boolean;
  readonly MTCEn: boolean;
  readonly MTCFreq: number;
  /** CTL.CYCEn, honoured only with L14.0.EBX[1]. */
  readonly CYCEn: boolean;
  /** Minimum cycles between CYCs: 0 for CycThresh=0, else 2^(CycThresh−1) (docs/sdm/msrs.md §3.2). */
  readonly cycMin: number;
  /** PSB period in bytes: 2K << PSBFreq (docs/sdm/msrs.md §3.2). */
  readonly psbPeriod: number;
  readonly PTWEn: boolean;
  readonly FUPonPTW: boolean;
  readonly InjectPsbPmiOnEnable: boolean;
  readonly filter: Ranges;
  readonly stop: Ranges;
  /** STATUS fields. */
  readonly Stopped: boolean;
  readonly Error: boolean;
  readonly PendPSB: boolean;
  /** STATUS.PacketByteCnt (0 without L14.0.EBX[1]). */
  readonly PacketByteCnt: number;
}

/** Decodes the register values; `fixedPsbPeriod` replaces PSBFreq on CPUs without L14.0.EBX[1]. */
export function decodeTraceConfig(regs: RtitRegs, psbCyc: boolean, fixedPsbPeriod: number): TraceConfig {
  const c = IA32_RTIT_CTL.decode(regs.ctl);
  const s = IA32_RTIT_STATUS.decode(regs.status);
  const cfgs = [c.ADDR0_CFG, c.ADDR1_CFG, c.ADDR2_CFG, c.ADDR3_CFG];
  const pick = (want: number): Ranges => {
    const a: number[] = [];
    const b: number[] = [];
    cfgs.forEach((cfg, n) => {
      if (cfg !== want) return;
      a.push(Number(BigInt.asIntN(64, regs.addrA?.[n] ?? 0n)));
      b.push(Number(BigInt.asIntN(64, regs.addrB?.[n] ?? 0n)));
    });
    return { a, b };
  };
  return {
    OS: c.OS, User: c.User, BranchEn: c.BranchEn, CR3Filter: c.CR3Filter,
    cr3MatchPfn: Number((regs.cr3Match ?? 0n) >> 12n),
    DisRETC: c.DisRETC, DisTNT: c.DisTNT,
    TSCEn: c.TSCEn, MTCEn: c.MTCEn, MTCFreq: c.MTCFreq,
    CYCEn: psbCyc && c.CYCEn, cycMin: c.CycThresh === 0 ? 0 : 2 ** (c.CycThresh - 1),
    psbPeriod: psbCyc ? 2048 * 2 ** c.PSBFreq : fixedPsbPeriod,
    PTWEn: c.PTWEn, FUPonPTW: c.FUPonPTW, InjectPsbPmiOnEnable: c.InjectPsbPmiOnEnable,
    filter: pick(ADDR_CFG_FILTER), stop: pick(ADDR_CFG_TRACESTOP),
    Stopped: s.Stopped, Error: s.Error, PendPSB: s.PendPSB,
    PacketByteCnt: psbCyc ? s.PacketByteCnt : 0,
  };
}

/** True when `ip` is in any of the ranges (both ends inclusive, unsigned compare; docs/sdm/README.md §4.1). */
export function inRanges(r: Ranges, ip: number): boolean {
  for (let i = 0; i < r.a.length; i++) {
    if (ipLe(r.a[i]!, ip) && ipLe(ip, r.b[i]!)) return true;
  }
  return false;
}
