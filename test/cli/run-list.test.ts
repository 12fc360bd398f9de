// `ptlab list` and `ptlab run` through main() (harness/cli/main.ts), as the
// executable calls them: output, exit status, and nothing written on bad input.
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { SCENARIOS } from '../../harness/scenarios/index.js';
import { KNOB_NAMES } from '../../harness/sim/knobs/knobs.js';
import { DRIVER_FAULT_NAMES } from '../../driver/faults.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-cli-');

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('ptlab list', () => {
  test('--knobs lists every model knob and driver fault with what it breaks and the scenarios that catch it', async () => {
    const { code, out } = await ptlab('list', '--knobs', '--json');
    const rows = JSON.parse(out) as { kind: string; name: string; breaks: string; caughtBy: string[] }[];
    const caught = (name: string) => rows.find((r) => r.name === name)?.caughtBy ?? [];
    expect([code, rows.filter((r) => r.kind === 'knob').map((r) => r.name), rows.filter((r) => r.kind === 'driver-fault').map((r) => r.name),
      rows.every((r) => r.breaks.length > 0), caught('no-topa-pmi').includes('topa-grow'), caught('restore-ctl-before-refill').includes('topa-grow')])
      .toEqual([0, KNOB_NAMES, DRIVER_FAULT_NAMES, true, true, true]);
    const text = await ptlab('list', '--knobs');
    expect(text.out).toMatch(/^--knob no-topa-pmi +the CPU never delivers the ToPA PMI\n +caught by: topa-grow,/m);
  });

  test('names every scenario with what it checks', async () => {
    const { code, out } = await ptlab('list');
    expect([code, SCENARIOS.filter((s) => !out.includes(s.name) || !out.includes(s.checks)).map((s) => s.name)]).toEqual([0, []]);
  });

  test('--json gives name, checks, appliesTo, targets, negative, the driver faults it catches and per-profile applicability', async () => {
    const doc = JSON.parse((await ptlab('list', '--json')).out) as Record<string, unknown>[];
    expect([doc.length, Object.keys(doc[0]!)]).toEqual([SCENARIOS.length, ['name', 'checks', 'appliesTo', 'targets', 'negative', 'catches', 'sim']]);
  });

  test('an unknown argument is a usage error', async () => {
    expect((await ptlab('list', '--yaml')).code).toBe(2);
  });
});

describe('ptlab run', () => {
  test('runs one scenario on one profile: exit 0, a progress line on stderr, the summary on stdout, the run directory', async () => {
    const out = join(root, 'one');
    const r = await ptlab('run', 'ret-compression', '--cpu', 'icelake', '--out', out);
    expect([r.code, /\[1\/1, 0 failed\] PASS ret-compression \(sim:icelake\)/.test(r.err), r.out.includes('1 runs: 1 passed, 0 failed, 0 skipped'),
      existsSync(join(out, 'ret-compression', 'icelake', 'result.json')), existsSync(join(out, 'junit.xml'))]).toEqual([0, true, true, true, true]);
  });

  test('without --cpu every profile runs, and profiles a scenario does not apply to are skips', async () => {
    const out = join(root, 'all-profiles');
    const r = await ptlab('run', 'single-range-wrap', '--out', out);
    expect([r.code, (await readdir(join(out, 'single-range-wrap'))).sort()]).toEqual([0, ['broadwell', 'full', 'icelake', 'kvm-guest', 'sapphire-rapids', 'skylake']]);
  });

  test('a failing verdict (a negative-control knob) exits 1', async () => {
    const r = await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--knob', 'no-topa-pmi', '--out', join(root, 'knob'));
    expect([r.code, r.err.includes('FAIL topa-grow'), r.out.includes('FAIL')]).toEqual([1, true, true]);
  });

  test('--seed is recorded in result.json', async () => {
    const out = join(root, 'seed');
    await ptlab('run', 'err-reserved-bit', '--cpu', 'full', '--seed', '42', '--out', out);
    expect((JSON.parse(await readFile(join(out, 'err-reserved-bit', 'full', 'result.json'), 'utf8')) as { seed: number }).seed).toBe(42);
  });

  test.for([
    ['an unknown scenario', ['no-such-scenario'], /unknown scenario 'no-such-scenario'/],
    ['an unknown target', ['topa-grow', '--target', 'vmware'], /unknown target 'vmware'/],
    ['a qemu option on the sim target', ['topa-grow', '--pt', 'model'], /--pt does not apply to --target sim/],
    ['an unknown profile', ['topa-grow', '--cpu', 'pentium'], /unknown CPU profile 'pentium'/],
    ['a scenario on a profile it does not apply to', ['single-range-wrap', '--cpu', 'broadwell'], /does not run on --cpu broadwell: .*single-range/],
    ['a bad seed', ['topa-grow', '--seed', 'x'], /--seed must be an integer/],
    ['an unknown knob', ['topa-grow', '--knob', 'nope'], /unknown model knob 'nope'/],
    ['no scenario', [], /no scenario given/],
    ['names and --all together', ['topa-grow', '--all'], /not both/],
    ['an unknown option', ['--all', '--fast'], /unknown option '--fast'/i],
    ['--seed and --seeds together', ['topa-grow', '--seed', '3', '--seeds', '1-4'], /--seed N or --seeds A-B, not both/],
    ['a --seeds that is not a range', ['topa-grow', '--seeds', '7'], /--seeds takes a range A-B/],
    ['a --seeds range that ends before it starts', ['topa-grow', '--seeds', '9-3'], /ends before it starts/],
    ['a --seeds bound out of range', ['topa-grow', '--seeds', '1-4294967296'], /--seeds must be an integer 0..4294967295/],
    ['a --seeds range of a billion runs', ['topa-grow', '--cpu', 'skylake', '--seeds', '1-1000000000'], /would make 1,000,000,000 runs .* at most 2,000,000/],
    ['an unknown --keep', ['topa-grow', '--keep', 'some'], /--keep must be all or failed/],
    ['a --shard beyond n', ['topa-grow', '--shard', '4/3'], /--shard takes i\/n with 1 ≤ i ≤ n/],
    ['a --shard 0', ['topa-grow', '--shard', '0/3'], /--shard takes i\/n with 1 ≤ i ≤ n/],
    ['a --shard that is no fraction', ['topa-grow', '--shard', 'x/y'], /--shard takes i\/n with 1 ≤ i ≤ n/],
  ] as const)('%s: a clear error, exit 2, nothing written', async ([, args, msg]) => {
    const out = join(root, `bad-${args.join('_').replace(/[^a-z0-9]/gi, '')}`);
    const r = await ptlab('run', ...args, '--out', out);
    expect([r.code, msg.test(r.err), existsSync(out)]).toEqual([2, true, false]);
  });

  test('an --out that cannot be written: a clear error, exit 2, nothing written', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    const r = await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', join(file, 'runs'));
    expect([r.code, /cannot write run directories under --out/.test(r.err)]).toEqual([2, true]);
  });

  test('an --out that is a file: named as a file, in words (prepareOut: run, replay and seq alike); the file is kept', async () => {
    const file = join(root, 'out-is-a-file');
    await writeFile(file, 'keep');
    const run = await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', file);
    const cannot = join(file, 'runs');
    const under = await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', cannot);
    expect([run.code, run.err.split('\n')[1], under.err.split('\n')[1], await readFile(file, 'utf8')]).toEqual([
      2, `ptlab run: --out ${file} is a file, not a directory: give a new or empty directory`,
      `ptlab run: cannot write run directories under --out ${cannot}: Not a directory`, 'keep',
    ]);
  });

  test.skipIf(process.getuid?.() === 0)('an --out in a read-only directory: exit 2 (root ignores modes: skipped as root)', async () => {
    const ro = join(root, 'ro');
    await mkdir(ro);
    await chmod(ro, 0o500);
    expect((await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', join(ro, 'runs'))).code).toBe(2);
  });
});

describe('ptlab run --seeds (a seed sweep)', () => {
  test('sweeps every seed of the range: a line per seed, the failure table, no directory for a passing run', async () => {
    const out = join(root, 'sweep-pass');
    const r = await ptlab('run', 'ret-compression', 'topa-grow', '--cpu', 'skylake', '--seeds', '3-5', '--out', out);
    expect([r.code, (r.err.match(/^seed [345]: 2 runs, 0 failed/gm) ?? []).length, /^ret-compression +0\/3$/m.test(r.out),
      r.out.includes('6 runs over seeds 3-5: 6 passed, 0 failed, 0 skipped; 0 failures per 1,000 runs'), (await readdir(out)).sort()]).toEqual([0, 3, true, true, ['junit.xml', 'report.html', 'results.jsonl']]);
  });

  test('a failing sweep: exit 1, each failure with its seed, the failing seeds listed, the failed runs kept', async () => {
    const out = join(root, 'sweep-fail');
    const r = await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--seeds', '7-8', '--knob', 'swallow-gp', '--out', out);
    const kept = await readdir(out);
    expect([r.code, /\[1\/2\] FAIL err-reserved-bit \(sim:skylake\) seed 7/.test(r.err), r.out.includes('err-reserved-bit sim:skylake: 7, 8'),
      r.out.includes('1000 failures per 1,000 runs'), kept.sort(), existsSync(join(out, 'seed-8', 'err-reserved-bit', 'skylake', 'result.json'))])
      .toEqual([1, true, true, true, ['junit.xml', 'report.html', 'results.jsonl', 'seed-7', 'seed-8'], true]);
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    expect([(junit.match(/<testcase /g) ?? []).length, (junit.match(/<failure /g) ?? []).length, junit.includes('name="seed 8"')]).toEqual([2, 2, true]);
  });

  test('--keep all keeps a passing sweep run\'s directory under seed-<S>/', async () => {
    const out = join(root, 'sweep-keep');
    const r = await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--seeds', '2-2', '--keep', 'all', '--out', out);
    expect([r.code, existsSync(join(out, 'seed-2', 'err-reserved-bit', 'skylake', 'trace.pt'))]).toEqual([0, true]);
  });

  test('--fail-fast stops at the first failed run', async () => {
    const out = join(root, 'fail-fast');
    const r = await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--seeds', '1-50', '--knob', 'swallow-gp', '--fail-fast', '--out', out);
    expect([r.code, r.out.includes('1 runs over seeds 1-1: 0 passed, 1 failed'), (await readdir(out)).sort()]).toEqual([1, true, ['junit.xml', 'report.html', 'results.jsonl', 'seed-1']]);
  });

  test('--keep failed on one seed leaves only the failed runs\' directories', async () => {
    const out = join(root, 'keep-failed');
    const r = await ptlab('run', 'err-reserved-bit', 'ret-compression', '--cpu', 'skylake', '--keep', 'failed', '--knob', 'swallow-gp', '--out', out);
    expect([r.code, (await readdir(out)).sort()]).toEqual([1, ['err-reserved-bit', 'junit.xml', 'report.html', 'results.jsonl']]);
  });
});
