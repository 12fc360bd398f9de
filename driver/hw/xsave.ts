// PT state = XSAVE state component 8 and the compacted XSAVE area that
// XSAVES/XRSTORS use (docs/sdm/xsave.md §1, §3; SDM Vol. 1 §13.5.6 "PT State",
// §13.4 "XSAVE Area", §13.12 "XRSTORS").
import { bits, MASK64, pow2 } from './field.js';
import {
  IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE,
  IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS,
} from './msrs.js';
import { PtError } from '../base/errors.js';

/** The 9 MSRs of PT state, at their offsets in component 8 (docs/sdm/xsave.md §1.1). */
export const PT_STATE_LAYOUT = [
  { offset: 0x00, msr: IA32_RTIT_CTL },
  { offset: 0x08, msr: IA32_RTIT_OUTPUT_BASE },
  { offset: 0x10, msr: IA32_RTIT_OUTPUT_MASK_PTRS },
  { offset: 0x18, msr: IA32_RTIT_STATUS },
  { offset: 0x20, msr: IA32_RTIT_CR3_MATCH },
  { offset: 0x28, msr: IA32_RTIT_ADDR_A[0]! },
  { offset: 0x30, msr: IA32_RTIT_ADDR_B[0]! },
  { offset: 0x38, msr: IA32_RTIT_ADDR_A[1]! },
  { offset: 0x40, msr: IA32_RTIT_ADDR_B[1]! },
] as const;

/** The MSR names of PT state, e.g. "IA32_RTIT_CTL". */
export type PtStateMsr =
  | 'IA32_RTIT_CTL' | 'IA32_RTIT_OUTPUT_BASE' | 'IA32_RTIT_OUTPUT_MASK_PTRS' | 'IA32_RTIT_STATUS'
  | 'IA32_RTIT_CR3_MATCH' | 'IA32_RTIT_ADDR0_A' | 'IA32_RTIT_ADDR0_B' | 'IA32_RTIT_ADDR1_A' | 'IA32_RTIT_ADDR1_B';
/** The values of the 9 MSRs of component 8. */
export type PtState = { readonly [K in PtStateMsr]: bigint };

/** XSAVE state-component number of PT state (a supervisor component, IA32_XSS[8]). */
export const PT_STATE_COMPONENT = 8;
/** Bit 8: PT state in XSTATE_BV, XCOMP_BV, RFBM and IA32_XSS. */
export const PT_STATE_BIT: bigint = pow2(PT_STATE_COMPONENT);
/** Bytes of component 8 that hold MSRs; 0x48 … end are reserved (must be zero). */
export const PT_STATE_DEFINED_BYTES = 0x48;
/** Component size when CPUID.(0DH,8):EAX is not known: every CPU observed reports 128 (docs/sdm/xsave.md §1). */
export const PT_STATE_DEFAULT_SIZE = 128;

/** Size of the legacy region (x87/SSE) at the start of every XSAVE area. */
export const XSAVE_LEGACY_BYTES = 512;
/** Offset of XSTATE_BV in the XSAVE header. */
export const XSTATE_BV_OFFSET = 512;
/** Offset of XCOMP_BV in the XSAVE header. */
export const XCOMP_BV_OFFSET = 520;
/** Size of the XSAVE header. */
export const XSAVE_HEADER_BYTES = 64;
/** Start of the compacted extended region: where component 8 sits when no component 2–7 is present. */
export const XSAVE_EXTENDED_OFFSET = XSAVE_LEGACY_BYTES + XSAVE_HEADER_BYTES; // 576
/** XCOMP_BV[63]: the area is in the compacted format (always so for XSAVES). */
export const XCOMP_BV_COMPACTED: bigint = pow2(63);

/** All 9 MSRs zero: the initial configuration (docs/sdm/xsave.md §1.2). */
export const PT_STATE_INIT: PtState = Object.freeze({
  IA32_RTIT_CTL: 0n, IA32_RTIT_OUTPUT_BASE: 0n, IA32_RTIT_OUTPUT_MASK_PTRS: 0n, IA32_RTIT_STATUS: 0n,
  IA32_RTIT_CR3_MATCH: 0n, IA32_RTIT_ADDR0_A: 0n, IA32_RTIT_ADDR0_B: 0n, IA32_RTIT_ADDR1_A: 0n, IA32_RTIT_ADDR1_B: 0n,
});

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** Component 8 as bytes: the 9 MSRs little-endian at their offsets, zeros from 0x48 to `size`. */
export function encodePtState(values: Partial<PtState>, size: number = PT_STATE_DEFAULT_SIZE): Uint8Array {
  if (size < PT_STATE_DEFINED_BYTES) throw new PtError('bad_config', `PT state component of ${size} bytes is smaller than 0x48`);
  const out = new Uint8Array(size);
  const dv = view(out);
  for (const { offset, msr } of PT_STATE_LAYOUT) dv.setBigUint64(offset, (values[msr.name as PtStateMsr] ?? 0n) & MASK64, true);
  return out;
}

/** The 9 MSRs from component 8's bytes (reserved bytes are not looked at: see `ptStateReservedProblem`). */
export function decodePtState(bytes: Uint8Array): PtState {
  if (bytes.byteLength < PT_STATE_DEFINED_BYTES) {
    throw new PtError('eos', `PT state component is ${bytes.byteLength} bytes, needs at least 0x48`);
  }
  const dv = view(bytes);
  const out: Record<string, bigint> = {};
  for (const { offset, msr } of PT_STATE_LAYOUT) out[msr.name] = dv.getBigUint64(offset, true);
  return out as PtState;
}

/** The first non-zero reserved byte (0x48 … end) of component 8: XRSTORS raises #GP (docs/sdm/xsave.md §1.1). */
export function ptStateReservedProblem(bytes: Uint8Array): { readonly offset: number; readonly reason: string } | undefined {
  for (let i = PT_STATE_DEFINED_BYTES; i < bytes.byteLength; i++) {
    if (bytes[i] !== 0) return { offset: i, reason: `reserved byte 0x${i.toString(16)} of PT state is 0x${bytes[i]!.toString(16)}` };
  }
  return undefined;
}

/** Size and 64-byte-alignment flag of an XSAVE component (CPUID.(0DH,i):EAX and ECX[1]). */
export interface ComponentLayout {
  readonly size: number;
  readonly align64: boolean;
}

/**
 * Offset of component `i` (≥ 2) in a compacted area with XCOMP_BV `xcompBv`: components present
 * in XCOMP_BV follow each other in increasing order from byte 576, each at the next 64-byte
 * boundary if its align64 flag is set (SDM Vol. 1 §13.4.3, docs/sdm/xsave.md §1.1).
 */
export function compactedOffset(i: number, xcompBv: bigint, layout: (j: number) => ComponentLayout): number {
  let off = XSAVE_EXTENDED_OFFSET;
  for (let j = 2; j <= i; j++) {
    if (bits(xcompBv, j, j) === 0n) continue;
    const l = layout(j);
    if (l.align64) off = Math.ceil(off / 64) * 64;
    if (j === i) return off;
    off += l.size;
  }
  throw new PtError('bad_config', `component ${i} is not in XCOMP_BV 0x${xcompBv.toString(16)}`);
}

/** What `buildPtXsaveArea` writes. */
export interface PtXsaveAreaSpec {
  /** PT state to store; undefined writes XSTATE_BV[8] = 0 (initial configuration) and zeros. */
  readonly state?: Partial<PtState>;
  /** CPUID.(0DH,8):EAX; default 128. */
  readonly componentSize?: number;
}

/**
 * A compacted XSAVE area holding only component 8: 512-byte legacy region, header with
 * XSTATE_BV at 512 and XCOMP_BV = bit 63 | bit 8 at 520, component 8 at byte 576.
 */
export function buildPtXsaveArea(spec: PtXsaveAreaSpec = {}): Uint8Array {
  const size = spec.componentSize ?? PT_STATE_DEFAULT_SIZE;
  const area = new Uint8Array(XSAVE_EXTENDED_OFFSET + size);
  const dv = view(area);
  dv.setBigUint64(XSTATE_BV_OFFSET, spec.state ? PT_STATE_BIT : 0n, true);
  dv.setBigUint64(XCOMP_BV_OFFSET, XCOMP_BV_COMPACTED | PT_STATE_BIT, true);
  area.set(encodePtState(spec.state ?? {}, size), XSAVE_EXTENDED_OFFSET);
  return area;
}

/** The header of an XSAVE area. */
export interface XsaveHeader {
  readonly xstateBv: bigint;
  readonly xcompBv: bigint;
}

/** Reads XSTATE_BV and XCOMP_BV. */
export function readXsaveHeader(area: Uint8Array): XsaveHeader {
  if (area.byteLength < XSAVE_EXTENDED_OFFSET) throw new PtError('eos', `XSAVE area of ${area.byteLength} bytes has no complete header`);
  const dv = view(area);
  return { xstateBv: dv.getBigUint64(XSTATE_BV_OFFSET, true), xcompBv: dv.getBigUint64(XCOMP_BV_OFFSET, true) };
}

/**
 * Component 8's bytes in a compacted area (undefined when XCOMP_BV[8] = 0). `layout` gives the
 * sizes of any component 2–7 also present; by default only component 8 may be.
 */
export function ptStateBytes(area: Uint8Array, opts: { componentSize?: number; layout?: (j: number) => ComponentLayout } = {}): Uint8Array | undefined {
  const { xcompBv } = readXsaveHeader(area);
  if (bits(xcompBv, PT_STATE_COMPONENT, PT_STATE_COMPONENT) === 0n) return undefined;
  const size = opts.componentSize ?? PT_STATE_DEFAULT_SIZE;
  const layout = opts.layout ?? ((j: number): ComponentLayout => {
    if (j === PT_STATE_COMPONENT) return { size, align64: false };
    throw new PtError('bad_config', `XCOMP_BV has component ${j}; pass its layout`);
  });
  const off = compactedOffset(PT_STATE_COMPONENT, xcompBv, layout);
  if (area.byteLength < off + size) throw new PtError('eos', `XSAVE area ends before component 8 (${off} + ${size})`);
  return area.subarray(off, off + size);
}

/** The XRSTORS header rule an area breaks (docs/sdm/xsave.md §3 step 1). */
export type XrstorsHeaderRule = 'CPL' | 'alignment' | 'XCOMP_BV[63]' | 'XCOMP_BV' | 'XSTATE_BV' | 'header-reserved';

/** What XRSTORS checks the header against. */
export interface XrstorsHeaderContext {
  /** XCR0 | IA32_XSS. */
  readonly enabled: bigint;
  /** Linear address of the area; must be 64-byte aligned. */
  readonly address?: bigint;
  readonly cpl?: number;
}

/**
 * The first XRSTORS header check (docs/sdm/xsave.md §3 step 1) that fails, as a #GP reason, or
 * undefined: CPL=0, 64-byte alignment, XCOMP_BV[63]=1, XCOMP_BV ⊆ XCR0|IA32_XSS,
 * XSTATE_BV ⊆ XCOMP_BV, header bytes 63:16 zero.
 */
export function xrstorsHeaderProblem(area: Uint8Array, ctx: XrstorsHeaderContext): { rule: XrstorsHeaderRule; reason: string } | undefined {
  if (ctx.cpl !== undefined && ctx.cpl > 0) return { rule: 'CPL', reason: `XRSTORS at CPL ${ctx.cpl}` };
  if (ctx.address !== undefined && ctx.address % 64n !== 0n) {
    return { rule: 'alignment', reason: `XSAVE area at 0x${ctx.address.toString(16)} is not 64-byte aligned` };
  }
  const { xstateBv, xcompBv } = readXsaveHeader(area);
  const h = (v: bigint): string => `0x${v.toString(16)}`;
  if (bits(xcompBv, 63, 63) === 0n) return { rule: 'XCOMP_BV[63]', reason: `XCOMP_BV ${h(xcompBv)} has bit 63 clear (standard format)` };
  const comps = bits(xcompBv, 62, 0);
  if ((comps & ~ctx.enabled) !== 0n) {
    return { rule: 'XCOMP_BV', reason: `XCOMP_BV ${h(xcompBv)} sets bits not in XCR0|IA32_XSS ${h(ctx.enabled)}` };
  }
  if ((xstateBv & ~comps) !== 0n) return { rule: 'XSTATE_BV', reason: `XSTATE_BV ${h(xstateBv)} is not a subset of XCOMP_BV ${h(xcompBv)}` };
  for (let i = XSTATE_BV_OFFSET + 16; i < XSAVE_EXTENDED_OFFSET; i++) {
    if (area[i] !== 0) return { rule: 'header-reserved', reason: `XSAVE header byte ${i - XSTATE_BV_OFFSET} is not zero` };
  }
  return undefined;
}
