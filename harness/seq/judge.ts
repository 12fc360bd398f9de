// What a read value means for a step's expectation: pure functions from the value read (and the
// physical bases of named buffers) to the expectation's name suffix, verdict and detail.
import { hex } from '../../driver/base/hex.js';
import { MASK64 } from '../../driver/hw/field.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { Masked, MsrRef, ReadExpect } from './model.js';

/** One judged check: what it was (appended to "file:line kind"), whether it held, and why. */
export interface Judged {
  readonly what: string;
  readonly ok: boolean;
  readonly detail: string;
}

const matches = (v: bigint, m: Masked): boolean => (v & m.mask) === m.value;
const showMasked = (m: Masked, full: bigint): string => (m.mask === full ? hex(m.value) : `${hex(m.value)} under mask ${hex(m.mask)}`);
const asBig = (x: boolean | number | bigint): bigint => (typeof x === 'boolean' ? (x ? 1n : 0n) : BigInt(x));
const small = (x: bigint): string => (x > 9n ? hex(x) : String(x));

/** A CPUID result against the registers `expect` names. */
export function judgeCpuid(leaf: number, subleaf: number, regs: CpuidRegs, expect: Readonly<Partial<Record<keyof CpuidRegs, Masked>>>): Judged {
  const got = `eax=${hex(regs.eax >>> 0)} ebx=${hex(regs.ebx >>> 0)} ecx=${hex(regs.ecx >>> 0)} edx=${hex(regs.edx >>> 0)}`;
  const entries = Object.entries(expect) as [keyof CpuidRegs, Masked][];
  const ok = entries.every(([k, m]) => matches(BigInt(regs[k] >>> 0), m));
  const want = entries.map(([k, m]) => `${k}=${showMasked(m, 0xffff_ffffn)}`).join(' ');
  return { what: `leaf ${hex(leaf)}.${subleaf}`, ok, detail: `expected ${want}; read ${got}` };
}

/** An RDMSR result `v` against `e`; `baseOf` gives a named buffer's physical base. */
export function judgeRead(msr: MsrRef, e: ReadExpect, v: bigint, baseOf: (name: string) => bigint): Judged {
  const read = `${hex(v)}${msr.known ? ` (${msr.known.codec.format(v)})` : ''}`;
  switch (e.kind) {
    case 'gp':
      return { what: msr.label, ok: false, detail: `expected #GP${e.rule ? ` (${e.rule})` : ''}; read ${read}` };
    case 'buffer': {
      const b = baseOf(e.name);
      return { what: `${msr.label} = the base of ${e.name}`, ok: v === b, detail: `expected ${hex(b)}; read ${read}` };
    }
    case 'masked':
      return { what: msr.label, ok: matches(v, e.m), detail: `expected ${showMasked(e.m, MASK64)}; read ${read}` };
    case 'fields': {
      const fields = msr.known!.codec.decode(v) as Record<string, boolean | number | bigint>;
      const want = [...e.fields].map(([f, x]) => `${f}=${small(x)}`).join(' ');
      const got = [...e.fields.keys()].map((f) => `${f}=${small(asBig(fields[f]!))}`).join(' ');
      const ok = [...e.fields].every(([f, x]) => asBig(fields[f]!) === x);
      return { what: `${msr.label} ${want}`, ok, detail: `expected ${want}; read ${got}, ${read}` };
    }
  }
}
