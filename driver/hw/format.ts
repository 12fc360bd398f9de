// Pretty-printing of register values from their field tables, e.g.
// "IA32_RTIT_CTL TraceEn OS User ToPA BranchEn MTCFreq=3".
import type { FieldTable, RegisterCodec } from './field.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS, RTIT_MSRS,
} from './msrs.js';
import { IA32_X2APIC_LVT_PMI } from './lvt.js';

/** "NAME field field=value …" for any codec. */
export function formatRegister<T extends FieldTable<C>, C>(codec: RegisterCodec<T, C>, raw: bigint): string {
  return `${codec.name} ${codec.format(raw)}`;
}

type AnyCodec = RegisterCodec<FieldTable<never>, never> & { readonly address: number };

/** Every MSR ptlab can print, by address. */
export const MSR_CODECS: ReadonlyMap<number, AnyCodec> = new Map(
  ([...RTIT_MSRS, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS,
    IA32_X2APIC_LVT_PMI] as unknown as AnyCodec[]).map((c) => [c.address, c] as const),
);

/** Pretty-prints `value` of MSR `msr` from its field table; an unknown MSR prints as "MSR 0x… 0x…". */
export function formatMsr(msr: number, value: bigint): string {
  const codec = MSR_CODECS.get(msr);
  return codec ? formatRegister(codec, value) : `MSR 0x${msr.toString(16)} 0x${value.toString(16)}`;
}
