// Checks on the decoded stream of a `collect`: packet counts by the names `ptlab dump --stats`
// prints (psb, tip.pge, tnt.8, ovf…), each exact or within {min, max}; `error` counts decode errors.
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { packetName } from '../../driver/decode/record.js';

/** Packet kinds by name (the decoder's kind numbers). */
const KINDS: ReadonlyMap<string, number> = new Map(
  Array.from({ length: 64 }, (_, k) => [packetName(k), k] as const).filter(([n, k]) => k > 0 && n !== 'error'),
);

/** Every name a packet expectation may use. */
export const PACKET_NAMES: readonly string[] = [...KINDS.keys(), 'error'];

/** A count: exactly, or within inclusive bounds. */
export interface CountRange {
  readonly min: number;
  readonly max: number;
}

/** How many packets of each kind `bytes` holds, and decode errors under 'error'. */
export function countPackets(bytes: Uint8Array): Map<string, number> {
  const counts = new Float64Array(64);
  let errors = 0;
  if (bytes.length > 0) new PacketDecoder(bytes, { final: true }).countPackets(counts, () => { errors++; });
  const out = new Map<string, number>([['error', errors]]);
  for (const [name, k] of KINDS) out.set(name, counts[k]!);
  return out;
}

/** "psb 1 (≥ 1), ovf 0 (= 0)": what was counted against what was asked; `ok` when every count is in range. */
export function judgePackets(counts: ReadonlyMap<string, number>, want: ReadonlyMap<string, CountRange>): { ok: boolean; detail: string } {
  let ok = true;
  const parts = [...want].map(([name, r]) => {
    const n = counts.get(name) ?? 0;
    if (n < r.min || n > r.max) ok = false;
    const range = r.min === r.max ? `= ${r.min}` : r.max === Infinity ? `≥ ${r.min}` : `${r.min}…${r.max}`;
    return `${name} ${n} (${range})`;
  });
  return { ok, detail: parts.join(', ') };
}
