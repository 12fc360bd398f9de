// XSAVES/XRSTORS of the PT state component (8) over the model's MSR file
// (docs/sdm/xsave.md §1–§3; SDM Vol. 1 §13.5.6 "PT State", §13.11–§13.12).
// Components other than 8 are not modelled: they are saved in their initial
// configuration (XSTATE_BV bit 0) and ignored on restore.
import type { CpuFault } from '../../driver/hw/cpu-fault.js';
import { UnsupportedError } from '../../driver/base/errors.js';
import { cpuidBitName } from '../../driver/hw/cpuid.js';
import type { MsrFile } from './msr-file.js';
import { cpuidOf } from './profiles.js';

/** Offsets in the XSAVE area (SDM Vol. 1 §13.4): 512-byte legacy region, 64-byte header. */
export const XSAVE_HEADER = 512;
export const XSAVE_EXTENDED = 576;
/** XCOMP_BV[63]: the area is in the compacted format (always, for XSAVES). */
const COMPACTED = 1n << 63n;
const PT_COMPONENT = 8;
const PT_BIT = 1n << 8n;
/** The nine MSRs of component 8, in area order (docs/sdm/xsave.md §1.1). */
export const PT_AREA_MSRS = [0x570, 0x560, 0x561, 0x571, 0x572, 0x580, 0x581, 0x582, 0x583] as const;
/** Bytes 0x48.. of component 8 are reserved (docs/sdm/xsave.md §1.1). */
const PT_DEFINED_BYTES = 0x48;

/** XCR0 of the model: every user component leaf 0DH,0 enumerates (x87, SSE, AVX). */
export function xcr0Of(f: MsrFile): bigint {
  return BigInt(cpuidOf(f.profile, 0xd, 0).eax >>> 0);
}

/** True when this CPU can XSAVES the PT component (docs/sdm/cpuid.md §4). */
export function canXsavePt(f: MsrFile): boolean {
  return f.caps.xsaves && f.caps.xssPtState;
}

function requireXsavePt(f: MsrFile): void {
  if (!f.caps.xsaves) throw new UnsupportedError('XSAVES', cpuidBitName('xsaves'));
  if (!f.caps.xssPtState) throw new UnsupportedError('XSAVES of PT state (component 8)', cpuidBitName('xssPtState'));
}

/** Component offsets in a compacted area for XCOMP_BV `comp` (SDM Vol. 1 §13.4.3), and the area size. */
export function compactedLayout(f: MsrFile, comp: bigint): { offsets: Map<number, number>; size: number } {
  const offsets = new Map<number, number>();
  let at = XSAVE_EXTENDED;
  for (let i = 2; i < 63; i++) {
    if (((comp >> BigInt(i)) & 1n) === 0n) continue;
    const r = cpuidOf(f.profile, 0xd, i);
    if ((r.ecx & 2) !== 0) at = Math.ceil(at / 64) * 64; // ECX[1]: 64-byte aligned when compacted
    offsets.set(i, at);
    at += r.eax >>> 0;
  }
  return { offsets, size: at };
}

/** CPUID.(0DH,1):EBX — XSAVES area size for the components in XCR0 | IA32_XSS (docs/sdm/cpuid.md §4). */
export function xsavesAreaSize(f: MsrFile): number {
  return compactedLayout(f, xcr0Of(f) | f.xss).size;
}

/** The MSRs of component 8 the CPU implements (absent ones have slots holding 0: docs/sdm/xsave.md §1.1). */
function implemented(f: MsrFile, msr: number): boolean {
  return f.read(msr).ok;
}

/**
 * XSAVES with RFBM = `rfbm`, with IA32_XSS[8] set around it: save CTL, clear TraceEn (a WRMSR
 * clearing it: flush, output pointers written back), save the other eight MSRs (docs/sdm/xsave.md §2).
 */
export function xsaves(f: MsrFile, rfbm: bigint): Uint8Array {
  requireXsavePt(f);
  const rfbmEff = rfbm & (xcr0Of(f) | f.xss | PT_BIT);
  const comp = rfbmEff; // XCOMP_BV = RFBM (x87/SSE live in the legacy region; the layout skips them)
  const { offsets, size } = compactedLayout(f, comp);
  const area = new Uint8Array(size);
  const dv = new DataView(area.buffer);
  let xstateBv = 0n;
  const pt = offsets.get(PT_COMPONENT);
  if (pt !== undefined) {
    const ctl = f.ctl;
    dv.setBigUint64(pt, ctl, true);
    if ((ctl & 1n) === 1n) f.store(0x570, ctl & ~1n); // step 2: clear TraceEn as a WRMSR would
    PT_AREA_MSRS.forEach((msr, i) => {
      if (i === 0) return;
      dv.setBigUint64(pt + 8 * i, implemented(f, msr) ? f.peek(msr) : 0n, true);
    });
    xstateBv |= PT_BIT; // the model never uses the init optimization (docs/sdm/xsave.md §2)
  }
  dv.setBigUint64(XSAVE_HEADER, xstateBv, true);
  dv.setBigUint64(XSAVE_HEADER + 8, COMPACTED | comp, true);
  return area;
}

type XFault = Omit<CpuFault, 'vector'>;

/** Broken XRSTORS orders, for negative controls only (knobs.ts): CTL loaded first, or CTL alone. */
export type XrstorsQuirk = 'ctl-first' | 'only-ctl';
const fault = (reason: string, msr?: number, value?: bigint): XFault =>
  msr === undefined ? { op: 'xrstors', reason } : { op: 'xrstors', msr, value: value ?? 0n, reason };

/**
 * XRSTORS of `area` with RFBM = `rfbm` (docs/sdm/xsave.md §3). Returns the #GP as data; before a #GP
 * nothing is changed (the model checks everything first). CTL is loaded last.
 */
export function xrstors(f: MsrFile, area: Uint8Array, rfbm: bigint, quirk?: XrstorsQuirk): XFault | undefined {
  requireXsavePt(f);
  if (area.length < XSAVE_EXTENDED) return fault(`area of ${area.length} bytes is shorter than the legacy region and header`);
  const dv = new DataView(area.buffer, area.byteOffset, area.byteLength);
  const xstateBv = dv.getBigUint64(XSAVE_HEADER, true);
  const xcompBv = dv.getBigUint64(XSAVE_HEADER + 8, true);
  const enabled = xcr0Of(f) | f.xss | PT_BIT;
  // Step 1: the usual XRSTORS header checks (SDM Vol. 1 §13.12).
  if ((xcompBv & COMPACTED) === 0n) return fault('XCOMP_BV[63] = 0 (XRSTORS needs the compacted format)');
  if ((xcompBv & ~COMPACTED & ~enabled) !== 0n) return fault('XCOMP_BV sets a component not in XCR0 | IA32_XSS');
  if ((xstateBv & ~xcompBv) !== 0n || (xstateBv & COMPACTED) !== 0n) return fault('XSTATE_BV sets a component not in XCOMP_BV');
  for (let i = XSAVE_HEADER + 16; i < XSAVE_EXTENDED; i++) if (area[i] !== 0) return fault(`header byte ${i - XSAVE_HEADER} is not 0`);
  const rfbmEff = rfbm & enabled;
  if ((rfbmEff & PT_BIT) === 0n) return undefined;
  // Step 2: TraceEn=1 → #GP before any PT state changes.
  if (f.traceEn) return fault('IA32_RTIT_CTL.TraceEn=1', 0x570, f.ctl);
  // Step 3: XSTATE_BV[8]=0 → the initial configuration (all nine MSRs 0).
  const image: bigint[] = new Array<bigint>(PT_AREA_MSRS.length).fill(0n);
  if ((xstateBv & PT_BIT) !== 0n) {
    const { offsets } = compactedLayout(f, xcompBv & ~COMPACTED);
    const pt = offsets.get(PT_COMPONENT)!;
    const size = cpuidOf(f.profile, 0xd, PT_COMPONENT).eax >>> 0;
    if (pt + size > area.length) return fault(`area of ${area.length} bytes ends inside component 8`);
    for (let i = 0; i < PT_AREA_MSRS.length; i++) image[i] = dv.getBigUint64(pt + 8 * i, true);
    for (let b = PT_DEFINED_BYTES; b < size; b++) {
      if (area[pt + b] !== 0) return fault(`reserved byte 0x${b.toString(16)} of component 8 is not 0`);
    }
  }
  // Step 4: every value must pass the WRMSR rules (TraceEn assumed 0); absent MSRs must be 0 (Open Question 17).
  for (let i = 0; i < PT_AREA_MSRS.length; i++) {
    const msr = PT_AREA_MSRS[i]!, v = image[i]!;
    if (!implemented(f, msr)) {
      if (v !== 0n) return fault('slot of an MSR this CPU lacks is not 0', msr, v);
      continue;
    }
    const gp = f.checkWrite(msr, v, 0n);
    if (gp) return fault(gp.reason, msr, v);
  }
  // Step 5: load the others, CTL last (it may start tracing: docs/sdm/xsave.md §3 step 6).
  if (quirk === 'ctl-first') f.store(0x570, image[0]!);
  if (quirk !== 'only-ctl') for (let i = 1; i < PT_AREA_MSRS.length; i++) if (implemented(f, PT_AREA_MSRS[i]!)) f.store(PT_AREA_MSRS[i]!, image[i]!);
  if (quirk === 'ctl-first') return undefined;
  // The initial configuration reads 0 in every MSR but MASK_PTRS (docs/sdm/xsave.md §1.2), so the
  // read-only STATUS bits 0–2 are cleared too; a loaded image follows WRMSR (bits 0–2 ignored).
  if ((xstateBv & PT_BIT) === 0n) f.status = 0n;
  f.store(0x570, image[0]!);
  return undefined;
}
