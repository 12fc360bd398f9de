// The benchmark's trace shapes (harness/bench/shapes.ts): each has the packet mix it claims, and
// the fuzzer-shaped flow trace follows the same path as the trace it was made from. Never asserts
// on time.
import { describe, expect, test } from 'vitest';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { ImageSet } from '../../driver/decode/flow/image.js';
import { packetName } from '../../driver/decode/record.js';
import { simTrace } from '../../harness/bench/model-sections.js';
import { fuzzerStream, padded, perfStream } from '../../harness/bench/shapes.js';
import { flow } from '../flow/helpers.js';

/** Percent of the packets of `bytes` per kind, and the number of error records. */
function mix(bytes: Uint8Array): { share: Record<string, number>; errors: number } {
  const dec = new PacketDecoder(bytes), counts = new Map<string, number>();
  let n = 0, errors = 0;
  while (dec.next()) {
    if (dec.record.kind === 0) { errors++; continue; }
    const k = packetName(dec.record.kind);
    counts.set(k, (counts.get(k) ?? 0) + 1);
    n++;
  }
  return { share: Object.fromEntries([...counts].map(([k, v]) => [k, (100 * v) / n])), errors };
}

describe('trace shapes', () => {
  test('fuzzer: by packet count 56% PAD, 27% TNT-8, 8% TIP, 4% TIP.PGE/PGD, 1% PIP, 0.8% PSB, no timing but CBR', () => {
    const { share, errors } = mix(fuzzerStream(2 << 20, 3));
    const near = (v: number | undefined, want: number, within: number): boolean => v !== undefined && Math.abs(v - want) <= within;
    expect([errors, near(share.pad, 56, 3), near(share['tnt.8'], 27, 2), near(share.tip, 8, 1), near((share['tip.pge'] ?? 0) + (share['tip.pgd'] ?? 0), 4, 0.8),
      near(share.pip, 1, 0.3), near(share.psb, 0.8, 0.2), share['mode.tsx'] === share.psb, share.vmcs === share.psb]).toEqual([0, true, true, true, true, true, true, true, true]);
    expect(Object.keys(share).filter((k) => ['tsc', 'tma', 'mtc', 'cyc'].includes(k))).toEqual([]);
  });

  test('fuzzer: PAD comes in runs: most zero bytes lie in runs longer than 16', () => {
    const s = fuzzerStream(1 << 20, 5);
    let inLong = 0, zeros = 0;
    for (let i = 0; i < s.length;) {
      if (s[i] !== 0) { i++; continue; }
      let j = i;
      while (j < s.length && s[j] === 0) j++;
      zeros += j - i;
      if (j - i > 16) inLong += j - i;
      i = j;
    }
    expect(inLong / zeros).toBeGreaterThan(0.7); // zero bytes inside packets (IP payloads, VMCS) count too
  });

  test('countPackets counts a PAD-heavy stream as next() does: PAD runs across the hot loop\'s end and across chunks', () => {
    const s = fuzzerStream(1 << 20, 9);
    const byNext = new Float64Array(64), whole = new Float64Array(64), chunked = new Float64Array(64);
    const one = new PacketDecoder(s);
    while (one.next()) byNext[one.record.kind]!++;
    new PacketDecoder(s).countPackets(whole, () => undefined);
    // Chunks that end inside PAD runs: the carry-over of chunked decoding keeps the counts.
    let dec: PacketDecoder | undefined, pending = new Uint8Array(0);
    for (let at = 0; at < s.length; at += 4099) {
      const part = s.subarray(at, Math.min(s.length, at + 4099));
      const buf = new Uint8Array(pending.length + part.length);
      buf.set(pending, 0);
      buf.set(part, pending.length);
      if (dec === undefined) dec = new PacketDecoder(buf, { final: false }); else dec.resume(buf, { final: false });
      dec.countPackets(chunked, () => undefined);
      pending = buf.slice(dec.consumed);
    }
    dec!.resume(pending, { final: true });
    dec!.countPackets(chunked, () => undefined);
    expect([[...whole], [...chunked], byNext[1]! > 200_000]).toEqual([[...byNext], [...byNext], true]);
  });

  test('perf: CYC before most packets, MTC about every tenth, TSC and TMA at every PSB+', () => {
    const { share, errors } = mix(perfStream(2 << 20, 3));
    expect([errors, share.cyc! > 35, share.mtc! > 7 && share.mtc! < 13, share.tsc === share.tma, share.tsc! >= share.psb!]).toEqual([0, true, true, true, true]);
  });

  test('padded: about half PAD, and flow follows the same path as in the trace it came from', async () => {
    const { trace, w } = await simTrace(20_000, 11);
    const reshaped = padded(trace);
    const { share, errors } = mix(reshaped);
    const set = new ImageSet([{ bytes: w.image, base: w.base }]);
    const [a, b] = [flow(set, trace), flow(set, reshaped)];
    expect([errors, share.pad! > 45 && share.pad! < 65, share.vmcs! > 0, a.length > 1000, b]).toEqual([0, true, true, true, a]);
  });
});
