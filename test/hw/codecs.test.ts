import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { fieldMask, MASK64, type Field, type RegisterCodec } from '../../driver/hw/field.js';
import {
  IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET, IA32_RTIT_ADDR_A,
  IA32_RTIT_ADDR_B, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS,
  IA32_RTIT_STATUS, IA32_XSS, isCanonical, msrLabel, physAddrReservedMask, TRACE_TOPA_PMI,
} from '../../driver/hw/msrs.js';
import { TOPA_ENTRY } from '../../driver/hw/topa.js';
import { IA32_X2APIC_LVT_PMI } from '../../driver/hw/lvt.js';

type AnyCodec = RegisterCodec<Record<string, Field<never>>, never>;
const CODECS = [
  IA32_RTIT_CTL, IA32_RTIT_STATUS, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_CR3_MATCH,
  ...IA32_RTIT_ADDR_A, ...IA32_RTIT_ADDR_B, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET,
  IA32_PERF_GLOBAL_STATUS_SET, IA32_XSS, TOPA_ENTRY, IA32_X2APIC_LVT_PMI,
] as unknown as AnyCodec[];

// Round trips, table-driven from the field tables themselves: every field of every codec, with
// all its bits set and with only its lowest bit set.
const FIELD_CASES = CODECS.flatMap((codec) =>
  Object.entries(codec.fields).flatMap(([name, f]) => [
    { codec, name, f, raw: fieldMask(f), label: `${codec.name}.${name} all ones` },
    { codec, name, f, raw: fieldMask(f) & -fieldMask(f), label: `${codec.name}.${name} lowest bit` },
  ]));

test.for(FIELD_CASES)('$label survives decode → encode', ({ codec, raw }) => {
  expect(codec.encode(codec.decode(raw))).toBe(raw);
});

test.for(FIELD_CASES)('$label decodes into its own field only', ({ codec, name, raw }) => {
  const d = codec.decode(raw) as Record<string, unknown>;
  for (const [other, v] of Object.entries(d)) {
    if (other !== name) expect([false, 0, 0n], `${other} of ${name}`).toContain(v);
  }
});

test.for(CODECS.map((codec) => ({ codec, name: codec.name })))('$name: decode → encode keeps exactly the defined bits of any value', ({ codec }) => {
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: MASK64 }), (raw) => codec.encode(codec.decode(raw)) === (raw & codec.definedMask)), { numRuns: 200 });
});

// Hand-written raw values (docs/sdm/msrs.md §3.1, §4, §6; docs/sdm/output.md §4.2; docs/sdm/msrs.md §11.1).
describe('decoding hand-written values', () => {
  test.for([
    { raw: 0x1n, field: 'TraceEn', want: true },
    { raw: 0x2n, field: 'CYCEn', want: true },
    { raw: 0x4n, field: 'OS', want: true },
    { raw: 0x8n, field: 'User', want: true },
    { raw: 0x10n, field: 'PwrEvtEn', want: true },
    { raw: 0x20n, field: 'FUPonPTW', want: true },
    { raw: 0x40n, field: 'FabricEn', want: true },
    { raw: 0x80n, field: 'CR3Filter', want: true },
    { raw: 0x100n, field: 'ToPA', want: true },
    { raw: 0x200n, field: 'MTCEn', want: true },
    { raw: 0x400n, field: 'TSCEn', want: true },
    { raw: 0x800n, field: 'DisRETC', want: true },
    { raw: 0x1000n, field: 'PTWEn', want: true },
    { raw: 0x2000n, field: 'BranchEn', want: true },
    { raw: 0xc000n, field: 'MTCFreq', want: 3 },
    { raw: 0x3c000n, field: 'MTCFreq', want: 15 },
    { raw: 0x48_0000n, field: 'CycThresh', want: 9 },
    { raw: 0x500_0000n, field: 'PSBFreq', want: 5 },
    { raw: 0x8000_0000n, field: 'EventEn', want: true },
    { raw: 0x1_0000_0000n, field: 'ADDR0_CFG', want: 1 },
    { raw: 0x20_0000_0000n, field: 'ADDR1_CFG', want: 2 },
    { raw: 0x200_0000_0000n, field: 'ADDR2_CFG', want: 2 },
    { raw: 0x1000_0000_0000n, field: 'ADDR3_CFG', want: 1 },
    { raw: 0x0080_0000_0000_0000n, field: 'DisTNT', want: true },
    { raw: 0x0100_0000_0000_0000n, field: 'InjectPsbPmiOnEnable', want: true },
  ] as const)('IA32_RTIT_CTL $raw decodes $field = $want', ({ raw, field, want }) => {
    expect(IA32_RTIT_CTL.decode(raw)[field]).toBe(want);
  });

  test.for([
    { raw: 0x1n, field: 'FilterEn', want: true },
    { raw: 0x2n, field: 'ContextEn', want: true },
    { raw: 0x4n, field: 'TriggerEn', want: true },
    { raw: 0x10n, field: 'Error', want: true },
    { raw: 0x20n, field: 'Stopped', want: true },
    { raw: 0x40n, field: 'PendPSB', want: true },
    { raw: 0x80n, field: 'PendTopaPMI', want: true },
    { raw: 0x1_ffff_0000_0000n, field: 'PacketByteCnt', want: 0x1ffff },
    { raw: 0x1234_0000_0000n, field: 'PacketByteCnt', want: 0x1234 },
  ] as const)('IA32_RTIT_STATUS $raw decodes $field = $want', ({ raw, field, want }) => {
    expect(IA32_RTIT_STATUS.decode(raw)[field]).toBe(want);
  });

  test('IA32_RTIT_OUTPUT_MASK_PTRS 0x10_0000_03FF is LowerMask 0x7F, entry 7, offset 0x10', () => {
    expect(IA32_RTIT_OUTPUT_MASK_PTRS.decode(0x10_0000_03ffn)).toEqual({ LowerMask: 0x7f, MaskOrTableOffset: 7, OutputOffset: 0x10 });
  });

  test('IA32_RTIT_OUTPUT_BASE keeps the base in place', () => {
    expect(IA32_RTIT_OUTPUT_BASE.decode(0x1234_5680n).BasePhysAddr).toBe(0x1234_5680n);
  });

  test('IA32_RTIT_CR3_MATCH ignores nothing but keeps bits 63:5 in place', () => {
    expect(IA32_RTIT_CR3_MATCH.decode(0x1234_5020n).CR3).toBe(0x1234_5020n);
  });

  test('IA32_RTIT_ADDR0_A holds a full 64-bit address', () => {
    expect(IA32_RTIT_ADDR_A[0]!.decode(0xffff_8000_0000_1000n).Address).toBe(0xffff_8000_0000_1000n);
  });

  test.for([
    { raw: 0x0080_0000_0000_0000n, field: 'Trace_ToPA_PMI' },
    { raw: 0x0400_0000_0000_0000n, field: 'LBR_Frz' },
    { raw: 0x0800_0000_0000_0000n, field: 'CTR_Frz' },
  ] as const)('IA32_PERF_GLOBAL_STATUS $raw decodes $field', ({ raw, field }) => {
    expect(IA32_PERF_GLOBAL_STATUS.decode(raw)[field]).toBe(true);
  });

  test.for([
    { raw: 0x8000_0003n, field: 'Ovf_PMC', want: 0x8000_0003 },
    { raw: 0x5_0000_0000n, field: 'Ovf_FixedCtr', want: 5 },
    { raw: 0x2000_0000_0000_0000n, field: 'Ovf_Uncore', want: true },
    { raw: 0x4000_0000_0000_0000n, field: 'OvfBuf', want: true },
    { raw: 0x8000_0000_0000_0000n, field: 'CondChgd', want: true },
  ] as const)('IA32_PERF_GLOBAL_STATUS $raw decodes $field = $want', ({ raw, field, want }) => {
    expect(IA32_PERF_GLOBAL_STATUS.decode(raw)[field]).toBe(want);
  });

  test('IA32_PERF_GLOBAL_STATUS_RESET and _SET share the GLOBAL_STATUS layout (write 1 to clear / set)', () => {
    expect(IA32_PERF_GLOBAL_STATUS_RESET.decode(0x0080_0000_0000_0000n).Trace_ToPA_PMI).toBe(true);
    expect(IA32_PERF_GLOBAL_STATUS_SET.decode(0x0080_0000_0000_0000n).Trace_ToPA_PMI).toBe(true);
    expect([IA32_PERF_GLOBAL_STATUS_RESET.address, IA32_PERF_GLOBAL_STATUS_SET.address]).toEqual([0x390, 0x391]);
  });

  test('IA32_RTIT_ADDR3_B is MSR 0x587 and holds a full 64-bit address', () => {
    expect(IA32_RTIT_ADDR_B[3]!.address).toBe(0x587);
    expect(IA32_RTIT_ADDR_B[3]!.decode(0x7fff_ffff_f000n).Address).toBe(0x7fff_ffff_f000n);
  });

  test('TRACE_TOPA_PMI is bit 55', () => {
    expect(TRACE_TOPA_PMI).toBe(0x0080_0000_0000_0000n);
  });

  test('IA32_XSS 0x100 decodes PT (component 8)', () => {
    expect(IA32_XSS.decode(0x100n).PT).toBe(true);
  });

  test('a ToPA entry 0x1234_5254 decodes as INT, STOP, Size 9 (2 MiB), Base 0x1234_5000', () => {
    expect(TOPA_ENTRY.decode(0x1234_5254n)).toEqual({ END: false, INT: true, STOP: true, Size: 9, Base: 0x1234_5000n });
  });

  test('a ToPA END entry 0x8000_0001 links to 0x8000_0000', () => {
    expect(TOPA_ENTRY.decode(0x8000_0001n)).toEqual({ END: true, INT: false, STOP: false, Size: 0, Base: 0x8000_0000n });
  });

  test('the LVT value 0x1_04FE is vector 0xFE, NMI delivery, masked', () => {
    expect(IA32_X2APIC_LVT_PMI.decode(0x1_04fen)).toEqual({ Vector: 0xfe, DeliveryMode: 4, DeliveryStatus: false, Mask: true });
  });
});

describe('encoding', () => {
  test('IA32_RTIT_CTL encodes TraceEn OS User ToPA BranchEn MTCFreq=3 as 0xE10D', () => {
    expect(IA32_RTIT_CTL.encode({ TraceEn: true, OS: true, User: true, ToPA: true, BranchEn: true, MTCFreq: 3 })).toBe(0xe10dn);
  });

  test('a value too wide for its field is a RangeError', () => {
    expect(() => IA32_RTIT_CTL.encode({ MTCFreq: 16 })).toThrow(RangeError);
  });

  test('an unknown field name is a RangeError', () => {
    expect(() => IA32_RTIT_CTL.encode({ Nope: true } as never)).toThrow(RangeError);
  });
});

describe('helpers', () => {
  test.for([
    { v: 0x0000_7fff_ffff_ffffn, width: 48, want: true },
    { v: 0xffff_8000_0000_0000n, width: 48, want: true },
    { v: 0x0000_8000_0000_0000n, width: 48, want: false },
    { v: 0xfff0_0000_0000_0000n, width: 48, want: false },
    { v: 0x00ff_ffff_ffff_ffffn, width: 57, want: true },
    { v: 0xff00_0000_0000_0000n, width: 57, want: true },
    { v: 0x0100_0000_0000_0000n, width: 57, want: false },
  ])('isCanonical($v, $width) is $want', ({ v, width, want }) => {
    expect(isCanonical(v, width)).toBe(want);
  });

  test('physAddrReservedMask(39) is bits 63:39', () => {
    expect(physAddrReservedMask(39)).toBe(0xffff_ff80_0000_0000n);
  });

  test('msrLabel names a known MSR and falls back to hex', () => {
    expect(msrLabel(0x570)).toBe('IA32_RTIT_CTL (0x570)');
    expect(msrLabel(0x123)).toBe('MSR 0x123');
  });
});
