// The ledger balance and the transcript content of real scenario runs, read
// back from their run directories as another tool would.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import type { ProfileName } from '../../harness/sim/profiles.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const RUNS: [string, ProfileName][] = [
  ['topa-grow', 'skylake'], ['topa-circular-fresh', 'icelake'], ['topa-protect-unread', 'full'], ['topa-stop', 'skylake'],
  ['single-range-wrap', 'skylake'], ['single-entry-topa', 'broadwell'], ['ovf-drain', 'full'], ['xsaves-roundtrip', 'skylake'],
];
interface Ledger { written: number; collected: number; dropped: number; lost: { at: number; bytes: number | null; reason: string }[] }
const ledger = async (name: string) => JSON.parse(await readFile(join(root, name, 'losses.json'), 'utf8')) as Ledger;
const transcript = async (name: string) => (await readFile(join(root, name, 'transcript.jsonl'), 'utf8')).trimEnd().split('\n')
  .map((l) => JSON.parse(l) as { op: string; msr?: string; value?: string; result?: string });

beforeAll(async () => {
  for (const [s, p] of RUNS) await runScenario({ scenario: findScenario(s), target: 'sim', profile: p, seed: 1 }, join(root, s));
});

describe('the loss ledger', () => {
  test.for(RUNS.map(([s]) => s))('%s: written = collected + Σ lost.bytes', async (name) => {
    const l = await ledger(name);
    expect(l.written).toBe(l.collected + l.lost.reduce((a, x) => a + (x.bytes ?? 0), 0));
  });

  test('a wrapped single range counts the overwritten bytes', async () => {
    const l = await ledger('single-range-wrap');
    expect(l.lost).toEqual([{ at: 0, bytes: l.written - 4096, reason: 'wrap' }]);
  });

  test('OVF losses have bytes null and the model reports dropped bytes; the run ending at a full STOP region lists its stop last', async () => {
    const l = await ledger('ovf-drain');
    const ovfs = l.lost.slice(0, -1), last = l.lost[l.lost.length - 1];
    expect([ovfs.length > 0, ovfs.every((x) => x.reason === 'ovf' && x.bytes === null), last, l.dropped > 0])
      .toEqual([true, true, { at: 3 * 4096, bytes: null, reason: 'stop' }, true]);
  });

  test('a lossless run has an empty lost list', async () => {
    expect((await ledger('topa-grow')).lost).toEqual([]);
  });
});

describe('the transcript', () => {
  test('the first MSR access is the fail-safe read of IA32_RTIT_CTL, after the CPUID probe', async () => {
    const t = await transcript('topa-grow');
    const first = t.findIndex((l) => l.op !== 'cpuid');
    expect([t.slice(0, first).every((l) => l.op === 'cpuid'), t[first]]).toMatchObject([true, { op: 'rdmsr', msr: '0x570' }]);
  });

  test('the enable sequence writes CTL (TraceEn=0), STATUS, OUTPUT_BASE, OUTPUT_MASK_PTRS, the filter confining the trace to the workload, then CTL with TraceEn=1', async () => {
    const w = (await transcript('topa-grow')).filter((l) => l.op === 'wrmsr').slice(0, 7);
    expect(w.map((l) => [l.msr, l.msr === '0x570' ? Number(BigInt(l.value!) & 1n) : undefined]))
      .toEqual([['0x570', 0], ['0x571', undefined], ['0x560', undefined], ['0x561', undefined], ['0x580', undefined], ['0x581', undefined], ['0x570', 1]]);
  });

  test('every PMI of the run is in the transcript, between start and exit', async () => {
    const t = await transcript('topa-grow');
    const r = JSON.parse(await readFile(join(root, 'topa-grow', 'result.json'), 'utf8')) as { figures: { pmis: number } };
    const start = t.findIndex((l) => l.op === 'start'), exit = t.findIndex((l) => l.op === 'exit');
    const pmis = t.flatMap((l, i) => (l.op === 'pmi' ? [i] : []));
    expect([pmis.length, pmis.every((i) => i > start && i < exit)]).toEqual([r.figures.pmis, true]);
  });

  test('the run ends with the disable sequence (TraceEn=0, CTL read back, STATUS and both output pointers read), then GLOBAL_STATUS read for a pending PMI', async () => {
    const t = (await transcript('topa-grow')).filter((l) => l.op !== 'free');
    expect(t.slice(-6).map((l) => `${l.op} ${l.msr}`)).toEqual(['wrmsr 0x570', 'rdmsr 0x570', 'rdmsr 0x571', 'rdmsr 0x560', 'rdmsr 0x561', 'rdmsr 0x38e']);
  });

  test('a context-switching run has its XSAVES and XRSTORS in the transcript', async () => {
    const t = await transcript('xsaves-roundtrip');
    expect([t.some((l) => l.op === 'xsaves'), t.some((l) => l.op === 'xrstors'), t.some((l) => l.op === 'slice')]).toEqual([true, true, true]);
  });
});
