// The benchmark's correctness half (harness/bench/decode-bench.ts), on small
// streams: libipt (ptbench) and our decoder agree on packet count, error
// count and checksum. Never asserts on time (common rules: benchmarks are not
// tests).
import { describe, expect, test } from 'vitest';
import { compareDecoders, decodeBench } from '../../harness/bench/decode-bench.js';
import { benchStream } from '../../harness/bench/stream.js';
import { libiptTools } from '../libipt/tools.js';
import { ourDump } from './compare.js';
import { LIBIPT_KNOWN_TYPES, randomStream } from './random-stream.js';
import { PSB } from './spec-vectors.js';

const { tools, title } = libiptTools();

describe.skipIf(tools === undefined)(title('decode benchmark correctness'), () => {
  test('the benchmark stream decodes to the same packets and checksum in libipt and ptlab', async () => {
    const c = await decodeBench(tools!.ptbench, 256 << 10, 1);
    expect(c.mismatches).toEqual([]);
    expect(c.ptlab.packets).toBeGreaterThan(50_000);
    expect(c.ptlab.errors).toBe(0);
  });

  test('the benchmark stream has a PSB about every 4 KiB', () => {
    const s = benchStream(64 << 10, 7);
    let psbs = 0;
    for (let i = 0; i + PSB.length <= s.length; i++) if (PSB.every((b, k) => s[i + k] === b)) psbs++;
    expect(psbs).toBe(16);
  });

  test('a stream with every libipt-known packet type checksums the same', async () => {
    const s = randomStream(42, 16 << 10);
    const packets = ourDump(s).map((l) => JSON.parse(l) as { off: number; type: string });
    expect(new Set(packets.map((p) => p.type))).toEqual(new Set(LIBIPT_KNOWN_TYPES));
    // PWRE HW is read from different bits (docs/sdm/packets.md §3.17): make bits 7 and 3 agree,
    // so both decoders see the same HW and every checksum field must match.
    for (const p of packets) if (p.type === 'pwre') s[p.off + 2] = (s[p.off + 2]! & 0x80) !== 0 ? 0x88 : 0x00;
    const c = await compareDecoders(tools!.ptbench, s, 1);
    expect(c.mismatches).toEqual([]);
  });

  test('error records checksum the same (kind 0, size 0) after truncation and bad opcodes', async () => {
    const s = benchStream(16 << 10, 3);
    const broken = Uint8Array.from([...s.subarray(0, 5000), 0x05, ...s.subarray(5000, s.length - 3)]);
    const c = await compareDecoders(tools!.ptbench, broken, 1);
    expect(c.mismatches).toEqual([]);
    expect(c.ptlab.errors).toBeGreaterThanOrEqual(1);
  });

  test('a stream without a PSB is one error in both decoders', async () => {
    const c = await compareDecoders(tools!.ptbench, Uint8Array.from([0x00, 0x04, 0x06]), 1);
    expect(c.mismatches).toEqual([]);
    expect(c.ptlab).toMatchObject({ packets: 0, errors: 1 });
  });
});
