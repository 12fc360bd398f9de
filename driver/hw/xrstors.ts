// Whether XRSTORS of PT state raises #GP, as a pure function (docs/sdm/xsave.md §3
// steps 1–4; msrs.md §10: "XRSTORS (RFBM[8]=1): #GP if TraceEn=1"). Each image value
// is judged by the WRMSR rules of msr-rules.ts, the rule set the model and the driver share.
import { bits } from './field.js';
import { IA32_RTIT_CTL } from './msrs.js';
import { rdmsrFault, wrmsrFault, type MsrCpu, type MsrCpuState, type MsrRule } from './msr-rules.js';
import {
  PT_STATE_COMPONENT, PT_STATE_LAYOUT, ptStateBytes, ptStateReservedProblem, readXsaveHeader, xrstorsHeaderProblem,
  type ComponentLayout, type XrstorsHeaderContext, type XrstorsHeaderRule,
} from './xsave.js';

/** Why XRSTORS raises #GP: a header rule, TraceEn=1, a reserved byte, or the WRMSR rule an image value breaks. */
export type XrstorsProblem =
  | { readonly kind: 'header'; readonly rule: XrstorsHeaderRule; readonly reason: string }
  | { readonly kind: 'trace-en'; readonly reason: string }
  | { readonly kind: 'reserved-byte'; readonly offset: number; readonly reason: string }
  | { readonly kind: 'msr'; readonly msr: number; readonly value: bigint; readonly rule: MsrRule; readonly reason: string };

/** What XRSTORS is judged against: the CPU and its state (as for WRMSR) plus the instruction's operands. */
export interface XrstorsContext {
  readonly cpu: MsrCpu;
  /** The current IA32_RTIT_CTL, CPL and VMX operation. */
  readonly state: MsrCpuState;
  /** Requested-feature bitmap (EDX:EAX & (XCR0 | IA32_XSS)). */
  readonly rfbm: bigint;
  /** XCR0 | IA32_XSS. */
  readonly enabled: bigint;
  /** Linear address of the area. */
  readonly address?: bigint;
  /** CPUID.(0DH,8):EAX; default 128. */
  readonly componentSize?: number;
  /** Layout of components 2–7 if XCOMP_BV has any. */
  readonly layout?: (j: number) => ComponentLayout;
}

/**
 * The first reason XRSTORS of `area` raises #GP for PT state, or undefined. Order: header checks,
 * then (RFBM[8]=1) TraceEn=1 now, then (XSTATE_BV[8]=1) reserved bytes 0x48…end, then every
 * image value under the WRMSR rules with TraceEn treated as 0, IA32_RTIT_CTL last. A slot of an
 * MSR the CPU lacks must be 0 (Open Question 17).
 */
export function xrstorsPtProblem(area: Uint8Array, ctx: XrstorsContext): XrstorsProblem | undefined {
  const hctx: { -readonly [K in keyof XrstorsHeaderContext]: XrstorsHeaderContext[K] } = { enabled: ctx.enabled };
  if (ctx.address !== undefined) hctx.address = ctx.address;
  if (ctx.state.cpl !== undefined) hctx.cpl = ctx.state.cpl;
  const header = xrstorsHeaderProblem(area, hctx);
  if (header) return { kind: 'header', ...header };
  if (bits(ctx.rfbm, PT_STATE_COMPONENT, PT_STATE_COMPONENT) === 0n) return undefined;
  if (IA32_RTIT_CTL.decode(ctx.state.ctl).TraceEn) return { kind: 'trace-en', reason: 'XRSTORS of PT state while IA32_RTIT_CTL.TraceEn = 1' };
  const { xstateBv } = readXsaveHeader(area);
  if (bits(xstateBv, PT_STATE_COMPONENT, PT_STATE_COMPONENT) === 0n) return undefined; // initial configuration: all 0
  const opts: { componentSize?: number; layout?: (j: number) => ComponentLayout } = {};
  if (ctx.componentSize !== undefined) opts.componentSize = ctx.componentSize;
  if (ctx.layout !== undefined) opts.layout = ctx.layout;
  const bytes = ptStateBytes(area, opts);
  if (!bytes) return undefined; // XSTATE_BV ⊆ XCOMP_BV was checked, so this is unreachable in practice
  const rsvd = ptStateReservedProblem(bytes);
  if (rsvd) return { kind: 'reserved-byte', ...rsvd };
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const idle: MsrCpuState = { ...ctx.state, ctl: 0n };
  // CTL (offset 0) is judged last, as it is loaded last (docs/sdm/xsave.md §3 step 5).
  for (const { offset, msr } of [...PT_STATE_LAYOUT.slice(1), PT_STATE_LAYOUT[0]]) {
    const value = dv.getBigUint64(offset, true);
    if (value === 0n && rdmsrFault(ctx.cpu, idle, msr.address)) continue;
    const f = wrmsrFault(ctx.cpu, idle, msr.address, value);
    if (f) return { kind: 'msr', msr: msr.address, value, rule: f.rule, reason: `${msr.name}: ${f.reason}` };
  }
  return undefined;
}
