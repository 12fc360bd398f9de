// `collect`: the bytes the output pointers say were written, read from the output regions
// (docs/sdm/output.md §8): single range — [0, OutputOffset) of OUTPUT_BASE; ToPA — every region
// from the first table's first entry, following END links, up to the current entry and offset.
import { decodeSingleRange, decodeTopaPointers } from '../../driver/hw/output-pointers.js';
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from '../../driver/hw/msrs.js';
import { TOPA_ENTRY_BYTES, TOPA_ENTRY, topaEntryBase, topaEntrySize } from '../../driver/hw/topa.js';
import type { Target } from '../../driver/target.js';

/** A ToPA table the sequence built: its base and its entries as written. */
export interface BuiltTable {
  readonly base: bigint;
  readonly entries: readonly bigint[];
}

/** What `collect` read, and how. */
export interface Collected {
  readonly bytes: Uint8Array;
  readonly how: string;
}

/** Reads the output written so far on `cpu`; `tables` in the order the sequence built them. */
export async function collectOutput(t: Target, cpu: number, tables: readonly BuiltTable[]): Promise<Collected> {
  const ctl = IA32_RTIT_CTL.decode(await t.rdmsr(cpu, IA32_RTIT_CTL.address));
  const base = await t.rdmsr(cpu, IA32_RTIT_OUTPUT_BASE.address);
  const ptrs = await t.rdmsr(cpu, IA32_RTIT_OUTPUT_MASK_PTRS.address);
  const live = ctl.TraceEn ? ' (TraceEn=1: the pointers may be behind the CPU)' : '';
  if (!ctl.ToPA) {
    const r = decodeSingleRange(ptrs);
    const n = Number(r.outputOffset);
    return { bytes: n ? await t.phys.read(base, n) : new Uint8Array(0), how: `single range at 0x${base.toString(16)}: ${n} bytes${live}` };
  }
  const { entryIndex, outputOffset } = decodeTopaPointers(ptrs);
  const byBase = new Map(tables.map((tb) => [tb.base, tb] as const));
  // From the first table built, else (it does not lead to the current entry) from the current table.
  const route = [tables[0], byBase.get(base)].map((start) => start && routeTo(start, byBase, base, entryIndex)).find((r) => r !== undefined);
  const parts: Uint8Array[] = [];
  let regions = 0;
  for (const e of route ?? []) {
    parts.push(await t.phys.read(topaEntryBase(e), Number(topaEntrySize(e))));
    regions++;
  }
  // The current region, up to OutputOffset (read from memory: a table the sequence did not build works too).
  const cur = await t.phys.read(base + BigInt(entryIndex * TOPA_ENTRY_BYTES), TOPA_ENTRY_BYTES);
  const e = new DataView(cur.buffer, cur.byteOffset, 8).getBigUint64(0, true);
  if (outputOffset && !TOPA_ENTRY.decode(e).END) parts.push(await t.phys.read(topaEntryBase(e), outputOffset));
  const total = parts.reduce((s, p) => s + p.length, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { bytes.set(p, at); at += p.length; }
  return { bytes, how: `ToPA: ${regions} full region(s)${route === undefined ? ' (the current entry is not reached from the tables built: current region only)' : ''}, then ${outputOffset} bytes of entry ${entryIndex} of the table at 0x${base.toString(16)}: ${total} bytes${live}` };
}

/**
 * The output entries from entry 0 of `start`, following END links, before entry `index` of the
 * table at `base`; undefined when the walk comes back to an entry it passed without reaching it.
 */
function routeTo(start: BuiltTable, byBase: ReadonlyMap<bigint, BuiltTable>, base: bigint, index: number): bigint[] | undefined {
  const out: bigint[] = [];
  const seen = new Set<string>();
  let table: BuiltTable | undefined = start, i = 0;
  while (table !== undefined) {
    if (table.base === base && i === index) return out;
    const key = `${table.base}:${i}`;
    const e = table.entries[i];
    if (seen.has(key) || e === undefined) return undefined;
    seen.add(key);
    if (TOPA_ENTRY.decode(e).END) {
      table = byBase.get(topaEntryBase(e));
      i = 0;
    } else {
      out.push(e);
      i++;
    }
  }
  return undefined;
}
