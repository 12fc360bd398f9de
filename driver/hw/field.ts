// Field tables for hardware registers: one table drives decode, encode, the
// reserved mask, printing and test cases. Every bare shift on a
// register value lives in this file.
import { hex } from '../base/hex.js';

/** A capability test used to gate a field: the field is reserved when it returns false. */
export interface Gate<C> {
  /** Where the SDM enumerates it, e.g. "CPUID.(EAX=14H,ECX=0):EBX[1]". */
  readonly cpuid: string;
  /** What that CPUID bit enumerates, in the SDM's words, e.g. "configurable PSB and cycle-accurate mode". */
  readonly what: string;
  test(caps: C): boolean;
}

/** A CPU-dependent width: bits of the field at or above `width(caps)` are reserved (e.g. MAXPHYADDR). */
export interface Limit<C> {
  /** Where the SDM enumerates the width, e.g. "CPUID.80000008H:EAX[7:0] (MAXPHYADDR)". */
  readonly cpuid: string;
  width(caps: C): number;
}

interface FieldBase<C> {
  readonly hi: number;
  readonly lo: number;
  /**
   * Absent: always present. Present: reserved unless the CPU enumerates it. A gated `readOnly`
   * field is "reserved, writes ignored" when absent (e.g. STATUS.FilterEn without L14.0.EBX[2]).
   */
  readonly gate?: Gate<C>;
  /** Writes to the field are ignored (no #GP), e.g. STATUS.TriggerEn. */
  readonly readOnly?: boolean;
  /** Absent: all of hi:lo exists. Present: the bits at or above the CPU's width are reserved. */
  readonly limit?: Limit<C>;
}
/** One bit, decoded as a boolean. */
export interface FlagField<C> extends FieldBase<C> { readonly kind: 'flag' }
/** An unsigned integer of at most 32 bits, decoded as a number (shifted down). */
export interface UintField<C> extends FieldBase<C> { readonly kind: 'uint' }
/** A wide unsigned integer, decoded as a bigint (shifted down). */
export interface WideField<C> extends FieldBase<C> { readonly kind: 'wide' }
/** An address part kept in place (low bits zero), decoded as a bigint: e.g. a 4 KiB-aligned base. */
export interface AddrField<C> extends FieldBase<C> { readonly kind: 'addr' }

/** Any field of a register table. */
export type Field<C = never> = FlagField<C> | UintField<C> | WideField<C> | AddrField<C>;
type FieldOpts<C> = { gate?: Gate<C>; readOnly?: boolean; limit?: Limit<C> };

/** One bit. */
export const flag = <C = never>(bit: number, o: FieldOpts<C> = {}): FlagField<C> =>
  ({ kind: 'flag', hi: bit, lo: bit, ...o });
/** Bits hi:lo as a number (at most 32 bits wide). */
export const uint = <C = never>(hi: number, lo: number, o: FieldOpts<C> = {}): UintField<C> => {
  if (hi - lo + 1 > 32) throw new RangeError(`uint(${hi}, ${lo}) is wider than 32 bits: use wide()`);
  return { kind: 'uint', hi, lo, ...o };
};
/** Bits hi:lo as a bigint, shifted down. */
export const wide = <C = never>(hi: number, lo: number, o: FieldOpts<C> = {}): WideField<C> =>
  ({ kind: 'wide', hi, lo, ...o });
/** Bits hi:lo as a bigint kept in place (an address with its low bits zero). */
export const addr = <C = never>(hi: number, lo: number, o: FieldOpts<C> = {}): AddrField<C> =>
  ({ kind: 'addr', hi, lo, ...o });

/** A register's fields by SDM name, in bit order. */
export type FieldTable<C = never> = Readonly<Record<string, Field<C>>>;

type ValueOf<F> = F extends FlagField<any> ? boolean : F extends UintField<any> ? number : bigint;
/** The decoded form of a register: one property per field. */
export type Decoded<T extends FieldTable<any>> = { readonly [K in keyof T]: ValueOf<T[K]> };
/** What `encode` takes: any subset of the fields; missing fields are 0. */
export type Encodable<T extends FieldTable<any>> = { readonly [K in keyof T]?: ValueOf<T[K]> };

/** All 64 bits set. */
export const MASK64 = (1n << 64n) - 1n;

/** 2^n as a bigint (sizes and limits: 4 KiB << Size, 2^MAXPHYADDR). */
export function pow2(n: number): bigint {
  return 1n << BigInt(n);
}

/** Bits hi:lo set. */
export function bitRange(hi: number, lo: number): bigint {
  return ((1n << BigInt(hi - lo + 1)) - 1n) << BigInt(lo);
}

/** Bits hi:lo of `value`, shifted down. */
export function bits(value: bigint, hi: number, lo: number): bigint {
  return (value >> BigInt(lo)) & ((1n << BigInt(hi - lo + 1)) - 1n);
}

/** Mask of every bit that `f` covers. */
export function fieldMask(f: Field<any>): bigint {
  return bitRange(f.hi, f.lo);
}

function decodeField(f: Field<any>, raw: bigint): boolean | number | bigint {
  switch (f.kind) {
    case 'flag': return ((raw >> BigInt(f.lo)) & 1n) === 1n;
    case 'uint': return Number(bits(raw, f.hi, f.lo));
    case 'wide': return bits(raw, f.hi, f.lo);
    case 'addr': return raw & fieldMask(f);
  }
}

function encodeField(name: string, f: Field<any>, v: boolean | number | bigint): bigint {
  const mask = fieldMask(f);
  let placed: bigint;
  switch (f.kind) {
    case 'flag': placed = v ? 1n << BigInt(f.lo) : 0n; break;
    case 'uint':
    case 'wide': placed = BigInt(v as number | bigint) << BigInt(f.lo); break;
    case 'addr': placed = BigInt(v as bigint); break;
  }
  if (placed < 0n || (placed & ~mask) !== 0n) {
    throw new RangeError(`field ${name} (bits ${f.hi}:${f.lo}) cannot hold ${String(v)}`);
  }
  return placed;
}


/** Bits of field `f` that a CPU with `caps` does not implement because of its `limit`. */
function beyondLimitMask<C>(f: Field<C>, caps: C): bigint {
  if (!f.limit) return 0n;
  const w = f.limit.width(caps);
  return w > f.hi ? 0n : w <= f.lo ? fieldMask(f) : fieldMask(f) & ~bitRange(w - 1, 0);
}

/** Index of the lowest set bit of a non-zero value. */
export function lowestSetBit(v: bigint): number {
  let n = 0;
  while (((v >> BigInt(n)) & 1n) === 0n && n < 64) n++;
  return n;
}

/** Why a value is not writable: which reserved bit (and why it is reserved) it sets. */
export type ReservedViolation =
  /** A bit no field covers: reserved on every CPU. */
  | { readonly kind: 'reserved'; readonly bit: number }
  /** A gated field is non-zero although the CPU does not enumerate it. */
  | { readonly kind: 'ungated'; readonly field: string; readonly cpuid: string }
  /** A bit of a field at or above the CPU's width (e.g. MAXPHYADDR). */
  | { readonly kind: 'beyond-limit'; readonly field: string; readonly bit: number; readonly width: number; readonly cpuid: string };

/** "reserved bit 18 set" / "PwrEvtEn=1 but CPUID…[5] = 0" / "bit 45 of BasePhysAddr ≥ width 39 (CPUID…)". */
export function describeViolation(v: ReservedViolation): string {
  switch (v.kind) {
    case 'reserved': return `reserved bit ${v.bit} set`;
    case 'ungated': return `${v.field} set but ${v.cpuid} = 0`;
    case 'beyond-limit': return `${v.field} bit ${v.bit} set at or above width ${v.width} (${v.cpuid})`;
  }
}

/** A register type built from a field table. */
export interface RegisterCodec<T extends FieldTable<C>, C = never> {
  readonly name: string;
  readonly fields: T;
  /** Every bit some field covers. */
  readonly definedMask: bigint;
  /** Every bit no field covers: the architecture's reserved bits (must be zero). */
  readonly reservedMask: bigint;
  /** The fields of `raw`; the object is frozen and may be shared by every decode of the same value. */
  decode(raw: bigint): Decoded<T>;
  encode(values: Encodable<T>): bigint;
  /**
   * Reserved bits for a CPU with capabilities `caps` (a WRMSR setting one raises #GP): unenumerated
   * fields and bits beyond a field's limit count as reserved; an unenumerated read-only field does
   * not (it is "reserved, writes ignored").
   */
  reservedMaskFor(caps: C): bigint;
  /** The first gated, writable field that `raw` sets although `caps` lacks it, if any. */
  ungatedField(raw: bigint, caps: C): { name: string; cpuid: string } | undefined;
  /** The first reserved bit `raw` sets for `caps` (per `reservedMaskFor`), explained; undefined if none. */
  violation(raw: bigint, caps: C): ReservedViolation | undefined;
  /** Bits whose writes the CPU ignores (read-only fields). */
  readonly readOnlyMask: bigint;
  /** "TraceEn=1 ToPA=1 MTCFreq=3 …" — non-zero fields in table order. */
  format(raw: bigint): string;
}

/** Distinct raw values whose decode a codec remembers. */
const DECODE_MEMO = 4096;

/** Builds the codec of one register from its field table. */
export function defineRegister<C, T extends FieldTable<C>>(name: string, fields: T): RegisterCodec<T, C> {
  const entries = Object.entries(fields) as [string, Field<C>][];
  let definedMask = 0n;
  let readOnlyMask = 0n;
  for (const [fname, f] of entries) {
    const m = fieldMask(f);
    if ((definedMask & m) !== 0n) throw new Error(`${name}: field ${fname} overlaps another field`);
    definedMask |= m;
    if (f.readOnly) readOnlyMask |= m;
  }
  // Decodes remembered by raw value (frozen, so sharing them is safe): a driver reads and writes
  // the same few CTL, STATUS and GLOBAL_STATUS values over and over, and a fresh decode walks the
  // whole table and allocates. Bounded: a register that takes many values cannot grow it without end.
  const decoded = new Map<bigint, Decoded<T>>();
  const ungatedField = (raw: bigint, caps: C): { name: string; cpuid: string } | undefined => {
    for (const [fname, f] of entries) {
      if (f.gate && !f.readOnly && !f.gate.test(caps) && (raw & fieldMask(f)) !== 0n) return { name: fname, cpuid: f.gate.cpuid };
    }
    return undefined;
  };
  return {
    name,
    fields,
    definedMask,
    reservedMask: MASK64 & ~definedMask,
    readOnlyMask,
    decode(raw) {
      let d = decoded.get(raw);
      if (d === undefined) {
        const out: Record<string, boolean | number | bigint> = {};
        for (const [fname, f] of entries) out[fname] = decodeField(f, raw);
        d = Object.freeze(out) as Decoded<T>;
        if (decoded.size >= DECODE_MEMO) decoded.clear();
        decoded.set(raw, d);
      }
      return d;
    },
    encode(values) {
      let raw = 0n;
      for (const [fname, v] of Object.entries(values) as [string, boolean | number | bigint | undefined][]) {
        const f = fields[fname];
        if (f === undefined) throw new RangeError(`${name} has no field ${fname}`);
        if (v !== undefined) raw |= encodeField(fname, f, v);
      }
      return raw;
    },
    reservedMaskFor(caps) {
      let mask = MASK64 & ~definedMask;
      for (const [, f] of entries) {
        if (f.gate && !f.readOnly && !f.gate.test(caps)) mask |= fieldMask(f);
        mask |= beyondLimitMask(f, caps);
      }
      return mask;
    },
    ungatedField,
    violation(raw, caps) {
      const rsvd = raw & MASK64 & ~definedMask;
      if (rsvd !== 0n) return { kind: 'reserved', bit: lowestSetBit(rsvd) };
      const ungated = ungatedField(raw, caps);
      if (ungated) return { kind: 'ungated', field: ungated.name, cpuid: ungated.cpuid };
      for (const [fname, f] of entries) {
        const over = raw & beyondLimitMask(f, caps);
        if (over !== 0n && f.limit) {
          return { kind: 'beyond-limit', field: fname, bit: lowestSetBit(over), width: f.limit.width(caps), cpuid: f.limit.cpuid };
        }
      }
      return undefined;
    },
    format(raw) {
      const parts: string[] = [];
      for (const [fname, f] of entries) {
        const v = decodeField(f, raw);
        if (v === false || v === 0 || v === 0n) continue;
        parts.push(v === true ? fname : `${fname}=${typeof v === 'bigint' ? hex(v) : v}`);
      }
      const rsvd = raw & ~definedMask & MASK64;
      if (rsvd !== 0n) parts.push(`reserved=${hex(rsvd)}`);
      return parts.length ? parts.join(' ') : '0';
    },
  };
}

/** `defineRegister` with the capability type fixed, so the field table's type is still inferred. */
export function registerDefiner<C>() {
  return <T extends FieldTable<C>>(name: string, fields: T): RegisterCodec<T, C> => defineRegister<C, T>(name, fields);
}

/** An MSR: a register codec with its address. */
export type MsrCodec<T extends FieldTable<C>, C = never> = RegisterCodec<T, C> & { readonly address: number };

/** Builds the codec of one MSR (e.g. `defineMsr('IA32_RTIT_CTL', 0x570, {...})`). */
export function defineMsr<C, T extends FieldTable<C>>(name: string, address: number, fields: T): MsrCodec<T, C> {
  return Object.assign(defineRegister<C, T>(name, fields), { address });
}

/** `defineMsr` with the capability type fixed, so the field table's type is still inferred. */
export function msrDefiner<C>() {
  return <T extends FieldTable<C>>(name: string, address: number, fields: T): MsrCodec<T, C> =>
    defineMsr<C, T>(name, address, fields);
}
