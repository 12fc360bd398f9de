// Transcripts of the same run on two targets differ only in physical addresses (issue 5 item 6:
// "transcripts equal apart from physical addresses"): this rewrites one transcript's addresses
// into the other's, pairing the k-th allocation of each, so the rest can be compared exactly.
import { describeTopaEntry, topaEntryBase } from '../../driver/hw/topa.js';
import { hex } from '../../driver/base/hex.js';
import { type TranscriptLine } from '../../driver/target.js';

/** A transcript line without its timestamp (the only other field that differs between targets). */
export type TimelessLine = Omit<TranscriptLine, 't_us'>;

/** MSRs whose value is a physical address (docs/sdm/msrs.md §5: IA32_RTIT_OUTPUT_BASE). */
const ADDRESS_MSRS: ReadonlySet<string> = new Set([hex(0x560)]);
/** The same MSR by its name in an XSAVES/XRSTORS `area`. */
const ADDRESS_AREA_FIELDS: readonly string[] = ['IA32_RTIT_OUTPUT_BASE'];

interface Mapping { readonly from: bigint; readonly size: bigint; readonly to: bigint }

/**
 * `lines` with every physical address (alloc results, free values, OUTPUT_BASE values) moved
 * into the regions `reference` allocated, region by region in allocation order, and `t_us`
 * dropped. Addresses outside every live region are kept, so a stray one still shows.
 */
export function relocateTranscript(lines: readonly TranscriptLine[], reference: readonly TranscriptLine[]): TimelessLine[] {
  const refBases = reference.filter((l) => l.op === 'alloc' && l.result !== undefined).map((l) => l.result!);
  const live: Mapping[] = [];
  let k = 0;
  const move = (v: string | undefined): string | undefined => {
    if (v === undefined) return v;
    const a = BigInt(v);
    const m = live.find((x) => a >= x.from && a < x.from + x.size);
    return m === undefined ? v : hex(m.to + (a - m.from));
  };
  return lines.map(({ t_us: _t, ...l }) => {
    if (l.op === 'alloc' && l.result !== undefined) {
      const to = refBases[k++];
      const size = BigInt(l.value?.split('/')[0] ?? '0x1000');
      if (to !== undefined) live.unshift({ from: BigInt(l.result), size: size > 0n ? size : 1n, to: BigInt(to) });
      return { ...l, result: move(l.result)! };
    }
    if (l.op === 'free' && l.value !== undefined) {
      const v = move(l.value)!;
      const i = live.findIndex((x) => x.from === BigInt(l.value!));
      if (i >= 0) live.splice(i, 1);
      return { ...l, value: v };
    }
    if (l.op === 'topa' && l.value !== undefined) {
      // The entry's Base (bits 51:12) is an address; the rest of the entry stays.
      const e = BigInt(l.value), base = topaEntryBase(e);
      const moved = e - base + BigInt(move(hex(base))!);
      return { ...l, addr: move(l.addr)!, value: hex(moved), entry: describeTopaEntry(moved) };
    }
    if (l.op === 'write' && l.addr !== undefined) return { ...l, addr: move(l.addr)! };
    if (l.area !== undefined) {
      const area = { ...l.area };
      for (const k of ADDRESS_AREA_FIELDS) if (area[k] !== undefined) area[k] = move(area[k])!;
      return { ...l, area };
    }
    if ((l.op === 'wrmsr' || l.op === 'rdmsr') && l.msr !== undefined && ADDRESS_MSRS.has(l.msr)) {
      return l.op === 'wrmsr' ? { ...l, value: move(l.value)! } : { ...l, ...(l.result === undefined ? {} : { result: move(l.result)! }) };
    }
    return l;
  });
}
