// The workload really behaves as described: each generated image, run natively in ring 3 and
// single-stepped under ptrace, takes exactly the path of the model (filters off, no annotations).
import { beforeAll, describe, expect, test } from 'vitest';
import { generateWorkload } from '../../harness/sim/workload/generate.js';
import { truthLines } from '../../harness/sim/workload/truth.js';
import { NativeRunError, buildPathtrace, nativeAvailable, runNative } from './pathtrace.js';

/** First line where two paths differ (−1 when equal), for a readable failure. */
function firstDiff(a: readonly string[], b: readonly string[]): { at: number; native?: string; model?: string } {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return { at: i, ...(a[i] === undefined ? {} : { native: a[i] }), ...(b[i] === undefined ? {} : { model: b[i] }) };
  }
  return { at: -1 };
}

const SIZES = [200, 1000, 3000, 6000];
const CASES = Array.from({ length: 24 }, (_, i) => ({ seed: 1000 + i * 7919, branches: SIZES[i % SIZES.length]! }));

describe.skipIf(!nativeAvailable())('native single-stepped path (needs Linux x86-64, gcc, ptrace)', () => {
  beforeAll(async () => {
    await buildPathtrace();
  });

  test.for(CASES)('seed $seed with up to $branches branches runs the model path exactly', async ({ seed, branches }) => {
    const w = generateWorkload(seed, { branches });
    const native = await runNative(w);
    expect(firstDiff(native, truthLines(w.model))).toEqual({ at: -1 });
  });

  test('a workload at another base runs the model path exactly', async () => {
    const w = generateWorkload(77, { branches: 1500, base: 0x3000_0000n });
    expect(firstDiff(await runNative(w), truthLines(w.model))).toEqual({ at: -1 });
  });

  test('the comparison catches an image that disagrees with its model (one Jcc condition inverted)', async () => {
    const w = generateWorkload(31, { branches: 2000 });
    const site = w.model.sites().find((s) => s.kind === 'jcc' && s.target !== undefined && s.target !== s.ip + BigInt(s.length));
    const image = w.image.slice();
    const off = Number(site!.ip - w.base);
    // Jcc tttn: the low bit of the condition nibble negates it (SDM Vol. 2 Appendix B).
    if ((image[off]! & 0xf0) === 0x70) image[off] = image[off]! ^ 1;
    else image[off + 1] = image[off + 1]! ^ 1;
    const run = runNative({ ...w, image }, { maxSteps: 2_000_000 }).then(
      (lines) => firstDiff(lines, truthLines(w.model)).at,
      (e: unknown) => (e instanceof NativeRunError ? 'tool-failed' : e),
    );
    await expect(run).resolves.not.toBe(-1);
  });

  test('a jump into INT3 filler is reported as leaving the expected path (exit code 3)', async () => {
    const w = generateWorkload(32, { branches: 500 });
    const image = w.image.slice();
    image[Number(w.entry - w.base)] = 0xcc;
    await expect(runNative({ ...w, image })).rejects.toMatchObject({ name: 'NativeRunError', exitCode: 3 });
  });
});
