// The `corrupt` verdict (docs/design.md "The memory oracle"): a run in which PT reached memory the
// driver does not own is `corrupt` whatever its expectations say — no scenario check can mask it —
// with the events in result.json and a `corrupt` line in the transcript where it happened.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { topaEntry } from '../../driver/hw/topa.js';
import type { TranscriptLine } from '../../harness/rundir/transcript-line.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import type { Scenario } from '../../harness/scenarios/kit/scenario.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const CTL = IA32_RTIT_CTL.address, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561;

/** A scenario that enables ToPA into its own table, then frees its region with TraceEn=1 (or, `safe`, after clearing it). */
function freer(safe: boolean): Scenario {
  return {
    name: safe ? 'frees-after-stop' : 'frees-while-tracing', checks: 'test only', appliesTo: 'test only', targets: ['sim'],
    skip: () => undefined, negative: 'swallow-gp',
    async run(ctx) {
      const t = ctx.target;
      const table = await t.phys.alloc(4096, 4096), region = await t.phys.alloc(4096, 4096);
      const e = new Uint8Array(16), dv = new DataView(e.buffer);
      dv.setBigUint64(0, topaEntry({ base: region.base, size: 4096 }), true);
      dv.setBigUint64(8, topaEntry({ base: table.base, end: true }), true);
      await t.phys.write(table.base, e, { content: 'topa-table' });
      const ctl = IA32_RTIT_CTL.encode({ User: true, BranchEn: true, ToPA: true });
      await t.msrBatch(0, [{ op: 'wrmsr', msr: OUTPUT_BASE, value: table.base }, { op: 'wrmsr', msr: MASK_PTRS, value: 0x7fn }, { op: 'wrmsr', msr: CTL, value: ctl | 1n }]);
      if (safe) await t.wrmsr(0, CTL, ctl);
      await t.phys.free(region);
      if (!safe) await t.wrmsr(0, CTL, ctl);
      await t.phys.free(table);
      ctx.expect('every check of this scenario holds', true, 'it checks nothing the oracle sees');
    },
  };
}

async function run(safe: boolean): Promise<{ r: ResultJson; onDisk: ResultJson; lines: TranscriptLine[] }> {
  const dir = join(root, safe ? 'safe' : 'unsafe');
  const r = await runScenario({ scenario: freer(safe), target: 'sim', profile: 'skylake', seed: 1 }, dir);
  const onDisk = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as ResultJson;
  const lines = (await readFile(join(dir, 'transcript.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as TranscriptLine);
  return { r, onDisk, lines };
}

describe('a run whose driver frees a region PT may still write', () => {
  test('is corrupt although every expectation held, and says what and where', async () => {
    const { r, onDisk } = await run(false);
    expect(r.expectations.every((e) => e.ok)).toBe(true);
    expect(r.verdict).toBe('corrupt');
    expect(onDisk.verdict).toBe('corrupt');
    expect(onDisk.reason).toMatch(/^PT reached memory the driver does not own \(free-while-tracing\): 0x[0-9a-f]+\+4096 was freed while CPU 0 had TraceEn=1.* \(\+1 more\)$/);
    // Then the flush at TraceEn 1→0 (the PSB+ the enable owed) lands in the freed page, as on silicon.
    expect(onDisk.corrupt).toEqual([
      expect.objectContaining({ kind: 'free-while-tracing', cpu: 0, length: 4096 }),
      expect.objectContaining({ kind: 'trace-write', cpu: 0, addr: onDisk.corrupt![0]!.addr }),
    ]);
    expect(Object.keys(onDisk)).toEqual(['scenario', 'target', 'profile', 'seed', 'verdict', 'reason', 'expectations', 'figures', 'corrupt', 'libipt']);
  });

  test('has a corrupt line in its transcript right after the free that caused it', async () => {
    const { onDisk, lines } = await run(false);
    const i = lines.findIndex((l) => l.op === 'corrupt');
    expect(i).toBeGreaterThan(0);
    expect(lines[i - 1]).toMatchObject({ op: 'free', value: onDisk.corrupt![0]!.addr });
    expect(lines[i]).toMatchObject({ cpu: 0, value: 'free-while-tracing', addr: onDisk.corrupt![0]!.addr, length: 4096 });
  });
});

describe('the same run with TraceEn cleared before the free', () => {
  test('passes, with no corrupt key and no corrupt line', async () => {
    const { r, onDisk, lines } = await run(true);
    expect(r.verdict).toBe('pass');
    expect(onDisk.corrupt).toBeUndefined();
    expect(lines.some((l) => l.op === 'corrupt')).toBe(false);
  });
});
