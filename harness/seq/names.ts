// The names a sequence file may use: MSRs and their fields from the driver/hw field tables (the
// SDM's names, no second spelling), step kinds, and the nearest valid name for a misspelling.
import type { Field, MsrCodec } from '../../driver/hw/field.js';
import { IA32_X2APIC_LVT_PMI } from '../../driver/hw/lvt.js';
import { nearest } from '../text/nearest.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS, RTIT_MSRS,
} from '../../driver/hw/msrs.js';

/** An MSR a sequence can name: its SDM name, address and field table. */
export interface KnownMsr {
  readonly name: string;
  readonly address: number;
  readonly fields: Readonly<Record<string, Field<any>>>;
  readonly codec: MsrCodec<any, any>;
}

/** Every MSR with a field table, by SDM name. */
export const KNOWN_MSRS: ReadonlyMap<string, KnownMsr> = new Map(
  ([...RTIT_MSRS, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS, IA32_X2APIC_LVT_PMI] as MsrCodec<any, any>[])
    .map((c) => [c.name, { name: c.name, address: c.address, fields: c.fields, codec: c }] as const),
);

const BY_ADDRESS: ReadonlyMap<number, KnownMsr> = new Map([...KNOWN_MSRS.values()].map((m) => [m.address, m] as const));

/** The MSR at `address`, if it has a field table. */
export function msrAt(address: number): KnownMsr | undefined {
  return BY_ADDRESS.get(address);
}

/** Every "MSR.Field" name: what a misspelled field is matched against. */
export const FIELD_NAMES: readonly string[] = [...KNOWN_MSRS.values()].flatMap((m) => Object.keys(m.fields).map((f) => `${m.name}.${f}`));

/** The nearest "MSR.Field" for a field `field` misspelled in `msr`: that MSR's own fields first, then any. */
export function nearestField(msr: KnownMsr, field: string): string | undefined {
  const own = nearest(field, Object.keys(msr.fields));
  if (own !== undefined) return `${msr.name}.${own}`;
  const any = nearest(`${msr.name}.${field}`, FIELD_NAMES);
  return any;
}
