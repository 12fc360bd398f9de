// ptgen (test/libipt/ptgen.c), the libipt-encoder half of the cross-check
// corpus: deterministic per seed, synchronisable, and periodically re-synced.
import { describe, expect, test } from 'vitest';
import { PSB } from '../crosscheck/spec-vectors.js';
import { libiptTools, ptgenStreams } from './tools.js';

const { tools, title } = libiptTools();

function psbOffsets(s: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + PSB.length <= s.length; i++) if (PSB.every((b, k) => s[i + k] === b)) out.push(i);
  return out;
}

describe.skipIf(tools === undefined)(title('ptgen'), () => {
  test('a seed gives the same bytes every time', async () => {
    const a = await ptgenStreams(tools!, 5, 6);
    const b = await ptgenStreams(tools!, 5, 6);
    expect(a.get(5)).toEqual(b.get(5));
    expect(a.get(6)).toEqual(b.get(6));
  });

  test('different seeds give different streams', async () => {
    const s = await ptgenStreams(tools!, 5, 6);
    expect(s.get(5)).not.toEqual(s.get(6));
  });

  test('a stream starts with a PSB and has another at least every 1 KiB of packets', async () => {
    const s = (await ptgenStreams(tools!, 9, 9, 8192)).get(9)!;
    const psbs = psbOffsets(s);
    expect(psbs[0]).toBe(0);
    // ptgen.c: the next PSB+ is due 256..1023 bytes after the last one (plus one packet, at most 16 bytes).
    const gaps = psbs.slice(1).map((p, i) => p - psbs[i]!);
    expect(Math.max(...gaps)).toBeLessThan(1024 + 16 + 64);
    expect(s.length).toBeGreaterThan(8192 - 64 - 16);
  });
});
