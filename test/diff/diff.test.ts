// `ptlab diff` (harness/diff/): two runs of the same scenario, profile and seed are equal; two
// profiles differ where they should (CPUID) and nowhere else; addresses compare by buffer role;
// timing packets only count with --timing; a #GP's rule is named; suites compare run by run; the
// command's exit statuses. Runs are made with the real `ptlab run` on the sim.
import { execa } from 'execa';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { encodePackets } from '../../driver/decode/encode.js';
import type { Packet } from '../../driver/decode/packet.js';
import { streamPackets } from '../../harness/diff/packets.js';
import { diffRuns } from '../../harness/diff/run-diff.js';
import { diffSuites } from '../../harness/diff/suite-diff.js';
import { normalTranscript } from '../../harness/rundir/normalize-transcript.js';
import { tmpRoot } from '../scenarios/tmp.js';

const PTLAB = resolve(import.meta.dirname, '../../dist/harness/cli/ptlab.js');
const ptlab = (...args: string[]) => execa('node', [PTLAB, ...args], { reject: false });

let root = '';
beforeAll(async () => {
  root = await tmpRoot('ptlab-diff-');
  for (const [out, cpu] of [['s1', 'skylake'], ['s2', 'skylake'], ['ice', 'icelake']] as const) {
    const r = await ptlab('run', 'topa-grow', 'err-reserved-bit', '--cpu', cpu, '--out', join(root, out), '--force');
    expect(r.exitCode).toBe(0);
  }
}, 120_000);

const run = (suite: string, scenario = 'topa-grow', cpu = suite === 'ice' ? 'icelake' : 'skylake') => join(root, suite, scenario, cpu);

describe('ptlab diff of two runs', () => {
  test('the same scenario, profile and seed twice: every section equal, exit 0', async () => {
    const d = await diffRuns(run('s1'), run('s2'));
    expect([d.equal, d.sections.map((s) => [s.section, s.status])]).toEqual([true, [
      ['verdict', 'equal'], ['expectations', 'equal'], ['memory', 'equal'], ['transcript', 'equal'], ['packets', 'equal'], ['flow', 'equal'], ['losses', 'equal'],
    ]]);
    expect((await ptlab('diff', run('s1'), run('s2'))).exitCode).toBe(0);
  });

  test('two profiles: the transcripts differ from the first CPUID on; packets without timing, flow and losses are equal; exit 1', async () => {
    const d = await diffRuns(run('s1'), run('ice'));
    const by = Object.fromEntries(d.sections.map((s) => [s.section, s]));
    expect([d.equal, by.transcript!.status, by.transcript!.first?.index, by.packets!.status, by.flow!.status, by.losses!.status]).toEqual([false, 'differ', 1, 'equal', 'equal', 'equal']);
    const r = await ptlab('diff', run('s1'), run('ice'));
    expect([r.exitCode, r.stdout]).toEqual([1, expect.stringContaining('DIFFER transcript: line 1 differs')]);
  });

  test('a changed verdict and a failed expectation are found, with the expectation named', async () => {
    const copy = join(root, 'changed');
    await cp(run('s1'), copy, { recursive: true });
    const result = JSON.parse(await readFile(join(copy, 'result.json'), 'utf8')) as { verdict: string; reason?: string; expectations: { ok: boolean; name: string; detail: string }[] };
    result.verdict = 'fail';
    result.expectations[3]!.ok = false;
    // A failed result names its first failed expectation (docs/schemas/result.schema.json).
    result.reason = `${result.expectations[3]!.name}: ${result.expectations[3]!.detail}`;
    await writeFile(join(copy, 'result.json'), JSON.stringify(result));
    const d = await diffRuns(run('s1'), copy);
    const exp = d.sections.find((s) => s.section === 'expectations')!;
    expect([d.sections[0]!.status, exp.status, exp.first?.index, exp.first?.b.includes(`FAILED: ${result.expectations[3]!.name}`)]).toEqual(['differ', 'differ', 4, true]);
  });

  test('expectations pair up by name: one check more on one side is named, not every check after it', async () => {
    const copy = join(root, 'one-more');
    await cp(run('s1'), copy, { recursive: true });
    const result = JSON.parse(await readFile(join(copy, 'result.json'), 'utf8')) as { expectations: { ok: boolean; name: string; detail: string }[] };
    result.expectations.unshift({ name: 'a check only B makes', ok: true, detail: 'x' });
    await writeFile(join(copy, 'result.json'), JSON.stringify(result));
    const exp = (await diffRuns(run('s1'), copy)).sections.find((s) => s.section === 'expectations')!;
    expect([exp.status, exp.detail]).toEqual(['differ', `1 expectation differs by name: 'a check only B makes' only in B (ok) (${result.expectations.length - 1} vs ${result.expectations.length})`]);
  });

  test('a corrupt verdict with its events and a leaked buffer: verdict and memory differ, the event named', async () => {
    const copy = join(root, 'corrupt');
    await cp(run('s1'), copy, { recursive: true });
    const result = JSON.parse(await readFile(join(copy, 'result.json'), 'utf8')) as Record<string, unknown>;
    const corrupt = [{ kind: 'trace-write', cpu: 0, addr: '0x7000', length: 64, detail: 'output region 0x7000+64 was freed' }];
    await writeFile(join(copy, 'result.json'), JSON.stringify({ ...result, verdict: 'corrupt', reason: 'PT reached memory the driver does not own (trace-write): x', corrupt, leaked: [{ base: '0x9000', size: 4096, role: 'ToPA table' }] }));
    const d = await diffRuns(run('s1'), copy);
    const memory = d.sections.find((s) => s.section === 'memory')!;
    expect([d.sections[0]!.status, memory.status, memory.first?.b]).toEqual(['differ', 'differ', ['corrupt trace-write on cpu 0: 64 bytes', 'leaked ToPA table: 4096 bytes']]);
  });

  test('a #GP that differs names its rule', async () => {
    const a = join(root, 'gp-a'), b = join(root, 'gp-b');
    await cp(run('s1', 'err-reserved-bit'), a, { recursive: true });
    await cp(run('s1', 'err-reserved-bit'), b, { recursive: true });
    const text = await readFile(join(b, 'transcript.jsonl'), 'utf8');
    const faulted = text.split('\n').findIndex((l) => l.includes('"fault"'));
    expect(faulted).toBeGreaterThan(0);
    const lines = text.split('\n');
    lines[faulted] = JSON.stringify({ ...JSON.parse(lines[faulted]!), fault: '#GP on WRMSR IA32_RTIT_CTL value 0x1: CTL.3: changed for the test' });
    await writeFile(join(b, 'transcript.jsonl'), lines.join('\n'));
    const t = (await diffRuns(a, b)).sections.find((s) => s.section === 'transcript')!;
    expect([t.status, t.first?.index, t.rule]).toEqual(['differ', faulted + 1, expect.stringMatching(/^CTL\./)]);
  });

  test('not a run directory: exit 2 with the reason; bad usage: exit 2', async () => {
    const r = await ptlab('diff', root, run('s1'));
    expect([r.exitCode, r.stderr]).toEqual([2, expect.stringContaining('not a run directory')]);
    expect((await ptlab('diff', run('s1'))).exitCode).toBe(2);
  });

  test('two suites given as runs: exit 2, and the hint to compare them with --suite', async () => {
    const [a, b] = [join(root, 's1'), join(root, 's2')];
    const r = await ptlab('diff', a, b);
    expect([r.exitCode, r.stderr]).toEqual([2, `ptlab diff: not a run directory (no result.json): ${a}\n(both hold results.jsonl: they are suites; compare them with ptlab diff --suite ${a} ${b})`]);
  });

  test('--json gives the sections as data', async () => {
    const r = await ptlab('diff', run('s1'), run('ice'), '--json');
    const d = JSON.parse(r.stdout) as { equal: boolean; sections: { section: string; status: string }[] };
    expect([r.exitCode, d.equal, d.sections.length]).toEqual([1, false, 7]);
  });
});

describe('normalised transcripts and packet streams', () => {
  test('physical addresses compare by buffer role: the same run at other addresses is equal, a different offset is not', () => {
    const t = (base: number, off: number) => [
      { seq: 0, t_us: 5, cpu: -1, op: 'alloc', value: '0x1000/0x1000', result: `0x${base.toString(16)}` },
      { seq: 1, t_us: 9, cpu: 0, op: 'wrmsr', msr: '0x560', value: `0x${(base + off).toString(16)}` },
    ].map((l) => JSON.stringify(l)).join('\n');
    const texts = (s: string) => normalTranscript(s).map((l) => l.text);
    expect(texts(t(0x100000, 0))).toEqual(texts(t(0x7f000000, 0)));
    expect(texts(t(0x100000, 0x80))[1]).toBe('{"cpu":0,"op":"wrmsr","msr":"0x560","value":"@buf0+0x80"}');
    expect(texts(t(0x100000, 0x80))).not.toEqual(texts(t(0x100000, 0x40)));
  });

  test('an allocation\'s size is never taken for an address, even when it equals a buffer\'s base', () => {
    // On the sim the first buffer sits at 0x100000, and a 1 MiB buffer's size is 0x100000 too.
    const t = (base: number) => [
      { seq: 0, t_us: 1, cpu: -1, op: 'alloc', value: '0x1000/0x1000', result: `0x${base.toString(16)}` },
      { seq: 1, t_us: 2, cpu: -1, op: 'alloc', value: '0x100000/0x100000', result: `0x${(base + 0x200000).toString(16)}` },
    ].map((l) => JSON.stringify(l)).join('\n');
    const texts = (s: string) => normalTranscript(s).map((l) => l.text);
    expect(texts(t(0x100000))).toEqual(texts(t(0x6b00000)));
    expect(texts(t(0x100000))[1]).toBe('{"cpu":-1,"op":"alloc","value":"0x100000/0x100000","result":"@buf1"}');
  });

  test('timing packets count only with timing; other packets always', () => {
    const base: Packet[] = [{ type: 'psb' }, { type: 'psbend' }, { type: 'tnt.8', n: 3, bits: 5n }];
    const withTsc = encodePackets([...base.slice(0, 1), { type: 'tsc', tsc: 12345n }, ...base.slice(1)]);
    const plain = encodePackets(base), other = encodePackets([...base.slice(0, 2), { type: 'tnt.8', n: 3, bits: 4n }]);
    const texts = (b: Uint8Array, timing = false) => streamPackets(b, { timing }).map((p) => p.text);
    expect(texts(withTsc)).toEqual(texts(plain));
    expect(texts(withTsc, true)).not.toEqual(texts(plain, true));
    expect(texts(other)).not.toEqual(texts(plain));
  });
});

describe('ptlab diff --suite', () => {
  test('two suites run by run: equal cells, a cut trace, and a run only one side has; exit 1', async () => {
    const b = join(root, 's2-edited');
    await cp(join(root, 's2'), b, { recursive: true });
    await rm(join(b, 'err-reserved-bit'), { recursive: true });
    const trace = await readFile(join(b, 'topa-grow', 'skylake', 'trace.pt'));
    await writeFile(join(b, 'topa-grow', 'skylake', 'trace.pt'), trace.subarray(0, trace.length >> 1));
    const d = await diffSuites(join(root, 's1'), b);
    expect(d.cells.map((c) => [c.path, c.status])).toEqual([['err-reserved-bit/skylake', 'only-a'], ['topa-grow/skylake', 'differ']]);
    const r = await ptlab('diff', '--suite', join(root, 's1'), b);
    expect([r.exitCode, r.stdout]).toEqual([1, expect.stringMatching(/err-reserved-bit\s+only-a[\s\S]*topa-grow\s+differ/)]);
    await mkdir(join(root, 'empty'), { recursive: true });
    expect((await ptlab('diff', '--suite', join(root, 'empty'), join(root, 'empty'))).exitCode).toBe(2);
    expect((await ptlab('diff', '--suite', join(root, 's1'), join(root, 's2'))).exitCode).toBe(0);
  });
});
