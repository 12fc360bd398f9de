// The run directory contract (docs/design.md "The run directory"): every file,
// every key, as other tools read them.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const dir = join(root, 'topa-grow');
const skipDir = join(root, 'skipped');
let result: ResultJson;
const text = (f: string, d = dir) => readFile(join(d, f), 'utf8');
const json = async (f: string, d = dir) => JSON.parse(await text(f, d)) as Record<string, unknown>;

beforeAll(async () => {
  result = await runScenario({ scenario: findScenario('topa-grow'), target: 'sim', profile: 'skylake', seed: 3 }, dir);
  await runScenario({ scenario: findScenario('kvm-guest-limits'), target: 'sim', profile: 'skylake', seed: 3 }, skipDir);
});

describe('a run directory of a sim run', () => {
  test('holds exactly the files of the contract', async () => {
    expect((await readdir(dir)).sort()).toEqual(
      ['image.bin', 'image.json', 'losses.json', 'result.json', 'trace.pt', 'transcript.jsonl', 'truth.jsonl']);
  });

  test('result.json has the documented keys in order', async () => {
    expect(Object.keys(await json('result.json'))).toEqual(['scenario', 'target', 'profile', 'seed', 'verdict', 'expectations', 'figures', 'libipt']);
  });

  test('result.json names the run and its verdict', async () => {
    const r = await json('result.json');
    expect([r.scenario, r.target, r.profile, r.seed, r.verdict]).toEqual(['topa-grow', 'sim', 'skylake', 3, 'pass']);
  });

  test('every expectation is {name, ok, detail}', async () => {
    const ex = (await json('result.json')).expectations as Record<string, unknown>[];
    expect(ex.every((e) => JSON.stringify(Object.keys(e)) === '["name","ok","detail"]' && typeof e.ok === 'boolean')).toBe(true);
  });

  test('figures give bytes, packets-side counts, PMIs, round trips per PMI, trace-off windows and lost bytes', async () => {
    const f = (await json('result.json')).figures as Record<string, unknown>;
    expect(['bytes', 'pmis', 'roundTripsPerPmi', 'traceOffWindows', 'lostBytes', 'roundTrips'].filter((k) => typeof f[k] !== 'number')).toEqual([]);
  });

  test('trace.pt holds `collected` bytes', async () => {
    const l = await json('losses.json');
    expect((await readFile(join(dir, 'trace.pt'))).length).toBe(l.collected);
  });

  test('losses.json has written, collected, dropped and lost', async () => {
    expect(Object.keys(await json('losses.json'))).toEqual(['written', 'collected', 'dropped', 'lost']);
  });

  test('image.json has base, entry, bytes, cpuid14, profile, cpu, timing, errata and probeWarnings; bytes is the size of image.bin', async () => {
    const im = await json('image.json');
    const bin = await readFile(join(dir, 'image.bin'));
    expect([Object.keys(im), im.bytes, im.base, im.profile]).toEqual([['base', 'entry', 'bytes', 'cpuid14', 'profile', 'cpu', 'timing', 'errata', 'probeWarnings'], bin.length, '0x10000000', 'skylake']);
  });

  test('image.json names the CPU as CPUID does (Skylake client 6/0x5e/3) and the timing libipt needs', async () => {
    // The model's clock: TSC/ART = 2/1 (CPUID.15H EBX/EAX), maximum non-turbo ratio 32; topa-grow's trace has MTC at MTCFreq 0.
    const im = await json('image.json');
    expect([im.cpu, im.timing]).toEqual([
      { vendor: 'GenuineIntel', family: 6, model: 0x5e, stepping: 3 },
      { mtcFreq: 0, nomFreq: 32, cpuid15: { eax: 1, ebx: 2 } },
    ]);
  });

  test('image.json lists the errata of that CPU by the table (Skylake client) and no probe warning', async () => {
    const im = await json('image.json');
    expect([im.errata, im.probeWarnings]).toEqual([['BDM70', 'SKD007', 'SKD010', 'SKD022', 'SKL014', 'SKL168'], []]);
  });

  test('result.json gives the libipt command lines that decode the run as ptlab did', async () => {
    expect((await json('result.json')).libipt).toEqual({
      ptdump: 'ptdump --cpu 6/94/3 --mtc-freq 0 --nom-freq 32 --cpuid-0x15.eax 1 --cpuid-0x15.ebx 2 trace.pt',
      ptxed: 'ptxed --cpu 6/94/3 --mtc-freq 0 --nom-freq 32 --cpuid-0x15.eax 1 --cpuid-0x15.ebx 2 --pt trace.pt --raw image.bin:0x10000000',
    });
  });

  test("image.json cpuid14 has the profile's leaf 14H sub-leaves 0 and 1", async () => {
    // Skylake leaf 14H: 1 / 0xF / 0x7, sub-leaf 1 0x02490002 / 0x003F3FFF (docs/sdm/cpuid.md §6).
    expect((await json('image.json')).cpuid14).toEqual([
      { subleaf: 0, eax: '0x1', ebx: '0xf', ecx: '0x7', edx: '0x0' },
      { subleaf: 1, eax: '0x2490002', ebx: '0x3f3fff', ecx: '0x0', edx: '0x0' },
    ]);
  });

  test('transcript.jsonl: one JSON object per line, seq 0, 1, 2, …, known ops and keys', async () => {
    const lines = (await text('transcript.jsonl')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const ops = new Set(['cpuid', 'rdmsr', 'wrmsr', 'pmi', 'xsaves', 'xrstors', 'alloc', 'free', 'pmi-enable', 'start', 'placed', 'go', 'slice', 'exit', 'fault', 'end', 'topa', 'write', 'note']);
    const keys = new Set(['seq', 't_us', 'cpu', 'op', 'msr', 'value', 'result', 'fault', 'addr', 'index', 'entry', 'area', 'data', 'exec', 'workload', 'sliceBranches', 'thread', 'held']);
    expect([
      lines.every((l, i) => l.seq === i),
      lines.every((l) => ops.has(l.op as string)),
      lines.every((l) => Object.keys(l).every((k) => keys.has(k))),
    ]).toEqual([true, true, true]);
  });

  test('transcript.jsonl has the ToPA entry writes, each with its table, index and decoded entry', async () => {
    const lines = (await text('transcript.jsonl')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const topa = lines.filter((l) => l.op === 'topa');
    expect(topa.length).toBeGreaterThan(0);
    expect(topa.every((l) => typeof l.addr === 'string' && typeof l.index === 'number' && /^(output 0x[0-9a-f]+ \d+[KM]( INT)?( STOP)?|END → 0x[0-9a-f]+)$/.test(l.entry as string))).toBe(true);
  });

  test('truth.jsonl is flow JSON Lines starting with enable at the entry', async () => {
    const first = (await text('truth.jsonl')).split('\n')[0];
    expect(first).toBe('{"kind":"enable","ip":"0x10000000"}');
  });

});

describe('a run directory of a skipped scenario', () => {
  test('holds result.json only (the suite\'s junit.xml, at the root of --out, has the run)', async () => {
    expect(await readdir(skipDir)).toEqual(['result.json']);
  });

  test('result.json says skip with the reason', async () => {
    const r = await json('result.json', skipDir);
    expect([r.verdict, r.reason, r.expectations]).toEqual(['skip', 'only a KVM guest has these limits (use --cpu kvm-guest)', []]);
  });
});

test('no staging directory is left behind', async () => {
  expect((await readdir(root)).filter((n) => n.includes('partial'))).toEqual([]);
});
