// The local-APIC LVT Performance Monitor entry, through which a ToPA PMI is
// delivered (docs/sdm/msrs.md §11.1; SDM Vol. 3A "Local Vector Table").
import { fieldMask, flag, msrDefiner, uint } from './field.js';

/** x2APIC MSR of the LVT Performance Monitor register (xAPIC: MMIO offset 0x340). */
export const X2APIC_LVT_PMI_MSR = 0x834;
/** xAPIC MMIO offset of the same register, from the APIC base (default 0xFEE0_0340). */
export const XAPIC_LVT_PMI_OFFSET = 0x340;

/** IA32_X2APIC_LVT_PMI (0x834): Vector 7:0, Delivery Mode 10:8, Delivery Status 12 (RO), Mask 16. */
export const IA32_X2APIC_LVT_PMI = msrDefiner<unknown>()('IA32_X2APIC_LVT_PMI', X2APIC_LVT_PMI_MSR, {
  Vector: uint(7, 0),
  DeliveryMode: uint(10, 8),
  DeliveryStatus: flag(12, { readOnly: true }),
  Mask: flag(16),
});

/** Mask (bit 16), 1 = masked: the CPU sets it when it delivers a PMI (docs/sdm/msrs.md §11.1). */
export const LVT_MASK: bigint = fieldMask(IA32_X2APIC_LVT_PMI.fields.Mask);
/** Delivery Status (bit 12): read-only, a WRMSR leaves it as it is. */
export const LVT_DELIVERY_STATUS: bigint = IA32_X2APIC_LVT_PMI.readOnlyMask;
/** The bits a WRMSR sets: every field but the read-only Delivery Status (vector 7:0, delivery mode 10:8, mask 16). */
export const LVT_WRITABLE: bigint = IA32_X2APIC_LVT_PMI.definedMask & ~IA32_X2APIC_LVT_PMI.readOnlyMask;

/** Delivery Mode encodings allowed for this entry (INIT 101b and ExtINT 111b are not: docs/sdm/msrs.md §11.1). */
export const LVT_DELIVERY_MODE = { Fixed: 0b000, SMI: 0b010, NMI: 0b100 } as const;
/** Name of an allowed delivery mode. */
export type LvtDeliveryMode = keyof typeof LVT_DELIVERY_MODE;

/** Value after reset: masked, everything else 0. */
export const LVT_PMI_RESET = 0x0001_0000n;

/** The LVT entry the SDM recommends for a ToPA PMI: Fixed delivery of `vector`, not masked. */
export function lvtPmiEntry(vector: number, mode: LvtDeliveryMode = 'Fixed'): bigint {
  return IA32_X2APIC_LVT_PMI.encode({ Vector: vector, DeliveryMode: LVT_DELIVERY_MODE[mode] });
}

/** The delivery mode's name, or undefined for an encoding not allowed in this entry. */
export function lvtDeliveryMode(raw: bigint): LvtDeliveryMode | undefined {
  const m = IA32_X2APIC_LVT_PMI.decode(raw).DeliveryMode;
  return (Object.keys(LVT_DELIVERY_MODE) as LvtDeliveryMode[]).find((k) => LVT_DELIVERY_MODE[k] === m);
}

/** The same value with Mask cleared: what a PMI handler writes back (the CPU masks on delivery). */
export function lvtUnmasked(raw: bigint): bigint {
  const d = IA32_X2APIC_LVT_PMI.decode(raw);
  return IA32_X2APIC_LVT_PMI.encode({ Vector: d.Vector, DeliveryMode: d.DeliveryMode, DeliveryStatus: d.DeliveryStatus });
}
