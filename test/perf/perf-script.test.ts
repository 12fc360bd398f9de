// The export read back by Linux perf itself: every run of `ptlab run --all --cpu full` (and two on
// skylake) exported with `ptlab export perf`, decoded by Debian's perf 6.1 with
// `perf script --itrace=b -F hw:ip,addr`, and perf's taken-branch list compared with the run's
// truth.jsonl (harness/perf/truth-branches.ts says how the truth maps to perf's samples).
//
// Runs left out, each counted in its test's name:
// - runs with no trace (skipped, or never set TraceEn): nothing to export;
// - runs whose trace does not hold the whole truth: a loss in losses.json, or an empty trace.pt;
// - DIVERGENT: runs where perf's decode differs from the truth for a reason named below.
import { execa } from 'execa';
import { access, constants, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { enablingCtl } from '../../harness/perf/read-run.js';
import { firstDifference, parsePerfScriptBranches, truthAsPerfBranches, type PerfBranch } from '../../harness/perf/truth-branches.js';
import { tmpRoot } from '../scenarios/tmp.js';

const PERF = '/usr/bin/perf';
const havePerf = await access(PERF, constants.X_OK).then(() => true, () => false);

/**
 * Runs whose perf decode differs from truth.jsonl, with the reason. Each is checked to differ
 * exactly so (a test below), so a perf or model change that ends the divergence is noticed.
 */
const DIVERGENT = {
  // tools/perf/util/intel-pt.c intel_pt_alloc_queue(): "Cannot walk code without TNT, so force
  // 'quick' mode" (`intel_pt_disabled_tnt()`, config bit 55 `notnt`). Quick mode does not walk the
  // code, so no branch but the first TIP.PGE is reported. ptlab's flow cannot follow it either.
  'dis-tnt': 'perf decodes a DisTNT trace in quick mode (intel-pt.c intel_pt_alloc_queue)',
  // Not perf's rule: the trace has a TIP.PGD with its IP suppressed and no FUP after a direct
  // call, which a decoder binds to the next instruction that needs a TIP, the RET
  // (intel-pt-decoder.c intel_pt_walk_tip(); libipt and ptlab's flow do the same), while the
  // model disabled on arrival at the call's target. perf equals ptlab's flow there.
  'cr3-filter': 'the trace does not say where packet generation stopped (TIP.PGD, IP suppressed, no FUP): perf and ptlab flow agree, the truth differs',
} as const satisfies Record<string, string>;

interface Run {
  readonly name: string;
  readonly dir: string;
}

const root = await tmpRoot('ptlab-perf-script-');
const silent = { out: () => undefined, err: () => undefined };
const runs: Run[] = [];
if (havePerf) {
  await main(['run', '--all', '--cpu', 'full', '--out', join(root, 'full')], silent);
  await main(['run', 'topa-grow', 'mtc-tsc-timing', '--cpu', 'skylake', '--out', join(root, 'skylake')], silent);
  for (const profile of ['full', 'skylake']) {
    for (const scenario of (await readdir(join(root, profile), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
      runs.push({ name: `${scenario}/${profile}`, dir: join(root, profile, scenario, profile) });
    }
  }
}

const exists = (p: string): Promise<boolean> => stat(p).then(() => true, () => false);
const lossCount = async (r: Run): Promise<number> => (JSON.parse(await readFile(join(r.dir, 'losses.json'), 'utf8')) as { lost: unknown[] }).lost.length;

/** Exports `r` and returns perf's branch list and stderr. */
async function perfBranches(r: Run): Promise<{ branches: PerfBranch[]; stderr: string }> {
  const file = join(root, `${r.name.replace('/', '-')}.data`);
  const exported = await main(['export', 'perf', r.dir, '-o', file], silent);
  expect(exported).toBe(0);
  const p = await execa(PERF, ['script', '-i', file, '--itrace=b', '-F', 'hw:ip,addr'], { reject: false, maxBuffer: 1 << 28 });
  expect({ exit: p.exitCode, stderr: p.stderr }).toEqual({ exit: 0, stderr: '' });
  return { branches: parsePerfScriptBranches(p.stdout), stderr: p.stderr };
}

/** The runs by what the comparison does with them. */
const groups = { untraced: [] as Run[], partial: [] as Run[], divergent: [] as Run[], compared: [] as Run[] };
for (const r of runs) {
  const traced = (await exists(join(r.dir, 'trace.pt'))) && enablingCtl(await readFile(join(r.dir, 'transcript.jsonl'), 'utf8')) !== undefined;
  if (!traced) groups.untraced.push(r);
  else if ((await lossCount(r)) > 0 || (await stat(join(r.dir, 'trace.pt'))).size === 0) groups.partial.push(r);
  else if (r.name.split('/')[0]! in DIVERGENT) groups.divergent.push(r);
  else groups.compared.push(r);
}

describe.skipIf(!havePerf)(havePerf ? 'perf script --itrace=b reads the export' : `perf script reads the export (skipped: ${PERF} is not installed)`, () => {
  test('topa-grow and mtc-tsc-timing on full and skylake are among the compared runs', () => {
    expect(groups.compared.map((r) => r.name)).toEqual(expect.arrayContaining(['topa-grow/full', 'mtc-tsc-timing/full', 'topa-grow/skylake', 'mtc-tsc-timing/skylake']));
  });

  test.for(groups.compared.map((r) => [r.name, r] as const))('%s: perf\'s taken branches are the truth\'s', async ([, r]) => {
    const truth = truthAsPerfBranches(await readFile(join(r.dir, 'truth.jsonl'), 'utf8'));
    const { branches } = await perfBranches(r);
    expect({ branches: branches.length, firstDifference: firstDifference(truth, branches) }).toEqual({ branches: truth.length, firstDifference: -1 });
  });

  test('dis-tnt/full: perf reports the first TIP.PGE only, then walks no code (quick mode)', async () => {
    const r = groups.divergent.find((x) => x.name === 'dis-tnt/full');
    expect(r).toBeDefined();
    const { branches } = await perfBranches(r!);
    expect(branches).toEqual([{ from: 0n, to: 0x10000000n }]);
  });

  test('cr3-filter/full: perf\'s branches are ptlab flow\'s, which end one branch later than the truth', async () => {
    const r = groups.divergent.find((x) => x.name === 'cr3-filter/full');
    expect(r).toBeDefined();
    const out: string[] = [];
    expect(await main(['flow', r!.dir, '--json'], { out: (s) => out.push(s), err: () => undefined })).toBe(0);
    const flow = truthAsPerfBranches(out.join(''));
    const truth = truthAsPerfBranches(await readFile(join(r!.dir, 'truth.jsonl'), 'utf8'));
    const { branches } = await perfBranches(r!);
    expect({ flow: firstDifference(flow, branches), truth: firstDifference(truth, branches), extra: branches.length - truth.length }).toEqual({ flow: -1, truth: truth.length - 1, extra: 1 });
  });

  test(`left out, counted: ${groups.untraced.length} runs without a trace, ${groups.partial.length} whose trace lost part of the truth, ${groups.divergent.length} divergent (${Object.keys(DIVERGENT).join(', ')})`, () => {
    expect(groups.divergent.map((r) => r.name.split('/')[0]).sort()).toEqual(Object.keys(DIVERGENT).sort());
    expect(groups.compared.length).toBeGreaterThan(groups.untraced.length + groups.partial.length + groups.divergent.length);
  });
});
