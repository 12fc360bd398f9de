// A PT unit with its output stage over sparse memory, for the output-engine tests.
import { SparsePhysMemory } from '../../harness/sim/phys-memory.js';
import { OutputUnit } from '../../harness/sim/output/output-unit.js';
import type { TopaOptions } from '../../harness/sim/output/topa.js';
import type { ProfileName } from '../../harness/sim/profiles.js';
import { msrFile } from './helpers.js';

/** ToPA entry bits, from docs/sdm/output.md §4.2 (written by hand, not from a codec). */
export const END = 0x1n, INT = 0x4n, STOP = 0x10n;
/** Size field for 8 KiB (encoding 1 in bits 9:6). */
export const SIZE_8K = 1n << 6n;
export const T = 0x10_0000n, T2 = 0x11_0000n;
export const R0 = 0x20_0000n, R1 = 0x20_1000n, R2 = 0x20_2000n;

/** n non-zero bytes: 1, 2, …, 251, 1, 2, … */
export function bytes(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i % 251) + 1);
}

export interface Rig {
  f: ReturnType<typeof msrFile>;
  mem: SparsePhysMemory;
  out: OutputUnit;
}

/** Writes `entries` ({address: value}), unmasks the LVT PMI, programs the output MSRs and sets TraceEn. */
export function rig(
  profile: ProfileName, o: { entries?: [bigint, bigint][]; base?: bigint; maskPtrs?: bigint; ctl?: bigint; topa?: TopaOptions } = {},
): Rig {
  const f = msrFile(profile);
  const mem = new SparsePhysMemory({ ramSize: 512 * 2 ** 20 });
  const out = new OutputUnit(f, mem, o.topa);
  for (const [a, v] of o.entries ?? []) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, v, true);
    mem.writeNow(a, b);
  }
  const must = (x: unknown) => { if (x) throw new Error(JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? v.toString(16) : v))); };
  must(f.write(0x834, 0xfen));
  must(f.write(0x560, o.base ?? T));
  must(f.write(0x561, o.maskPtrs ?? 0x7fn));
  must(f.write(0x570, o.ctl ?? 0x2105n));
  return { f, mem, out };
}

/** Clears TraceEn (keeping the rest of CTL) and returns [OUTPUT_BASE, OUTPUT_MASK_PTRS, STATUS]. */
export function stop(r: Rig): [bigint, bigint, bigint] {
  r.f.write(0x570, r.f.ctl & ~1n);
  return [r.f.peek(0x560), r.f.peek(0x561), r.f.peek(0x571)];
}
