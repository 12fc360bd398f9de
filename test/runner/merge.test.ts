// Shards run locally and merged (docs/sharding.md): three shards of a small
// matrix (four scenarios, two profiles, two seeds) merged with `ptlab merge` give the suite an
// unsharded run of the same matrix gives — `ptlab diff --suite` finds them equal, and every run
// directory's verdict, trace.pt and truth.jsonl are the same bytes — and shards that do not belong
// together are refused (exit 2) by name, with nothing written.
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { diffSuites } from '../../harness/diff/suite-diff.js';
import { MergeError } from '../../harness/merge/errors.js';
import { mergeShards } from '../../harness/merge/merge.js';
import { RESULTS_FILE } from '../../harness/rundir/results-index.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { readShardJson, shardJsonText, shardOfCell, SHARD_FILE } from '../../harness/runner/shard.js';
import { runSuite, type SuitePlan } from '../../harness/runner/suite.js';
import type { ProfileName } from '../../harness/sim/profiles.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-merge-');
const SCENARIOS = ['branch-disable', 'pmi-at-final-stop', 'single-range-wrap', 'err-reserved-bit'];
const PROFILES: ProfileName[] = ['skylake', 'broadwell'];

/** The matrix: 4 scenarios × 2 profiles × seeds 1-2 = 16 cells, every run directory kept. */
const plan = (out: string, extra: Partial<SuitePlan> = {}): SuitePlan => ({
  scenarios: SCENARIOS.map(findScenario), target: 'sim', profiles: PROFILES, seed: 1, lastSeed: 2, keep: 'all', out, ...extra,
});

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every file under `dir`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

const full = join(root, 'full'), shard = (i: number) => join(root, `shard-${i}`), merged = join(root, 'merged');
let mergedRun: { code: number; out: string; err: string };

beforeAll(async () => {
  await runSuite(plan(full));
  for (const i of [1, 2, 3]) await runSuite(plan(shard(i), { shard: { index: i, count: 3 } }));
  mergedRun = await ptlab('merge', shard(3), shard(1), shard(2), '--out', merged);
});

describe('three shards merged', () => {
  test('each shard ran the cells the deal gives it (shardOfCell), in order, and says which shard of which matrix it is in shard.json', async () => {
    const unsharded = (await readFile(join(full, RESULTS_FILE), 'utf8')).trim().split('\n').map((l) => l.replace(/"ms":\d+/, ''));
    const per = await Promise.all([1, 2, 3].map(async (i) => (await readFile(join(shard(i), RESULTS_FILE), 'utf8')).trim().split('\n').map((l) => l.replace(/"ms":\d+/, ''))));
    const meta = await Promise.all([1, 2, 3].map((i) => readShardJson(shard(i))));
    expect({
      cells: per.map((p, i) => JSON.stringify(p) === JSON.stringify(unsharded.filter((_, k) => shardOfCell(k, 3) === i + 1))),
      sizes: per.map((p) => p.length),
      meta: meta.map((m) => [m!.shard, m!.of, m!.cells, m!.shardCells, m!.status, m!.runs]),
      oneFingerprint: new Set(meta.map((m) => m!.fingerprint)).size === 1 && /^sha256:[0-9a-f]{64}$/.test(meta[0]!.fingerprint),
    }).toEqual({ cells: [true, true, true], sizes: [5, 5, 6], meta: [[1, 3, 16, 5, 'done', 5], [2, 3, 16, 5, 'done', 5], [3, 3, 16, 6, 'done', 6]], oneFingerprint: true });
  });

  test('ptlab merge exits 0 and says how many shards, cells and runs it joined', () => {
    expect([mergedRun.code, /merged 3 shard\(s\) of 16 cells \(sha256:[0-9a-f]{12}…\): 16 runs; run files \d+ hard-linked, 0 copied/.test(mergedRun.out)]).toEqual([0, true]);
  });

  test('ptlab diff --suite finds the merged suite equal to the unsharded run', async () => {
    const d = await diffSuites(merged, full);
    expect([d.equal, d.cells.length, d.cells.filter((c) => c.status !== 'equal').map((c) => c.path)]).toEqual([true, 16, []]);
  });

  test('the same files, and the same verdict, trace.pt and truth.jsonl bytes in every run directory', async () => {
    const files = await filesUnder(full);
    const runDirs = files.filter((f) => f.endsWith('/result.json')).map((f) => f.slice(0, -'/result.json'.length));
    // Skipped runs (broadwell: no single range; BDM106) hold result.json only; the judged ones hold a trace and its truth.
    const judged = runDirs.filter((d) => files.includes(`${d}/trace.pt`));
    const verdict = async (s: string, d: string) => (JSON.parse(await readFile(join(s, d, 'result.json'), 'utf8')) as { verdict: string }).verdict;
    const differ: string[] = [];
    for (const d of runDirs) if (await verdict(full, d) !== await verdict(merged, d)) differ.push(`${d}: verdict`);
    for (const d of judged) {
      for (const f of ['trace.pt', 'truth.jsonl']) if (!(await readFile(join(full, d, f))).equals(await readFile(join(merged, d, f)))) differ.push(`${d}/${f}`);
    }
    // The merge writes report.html as ptlab run does (the unsharded suite here was made by runSuite, without the CLI's report).
    const mergedFiles = await filesUnder(merged);
    expect({ files: mergedFiles.filter((f) => f !== 'report.html'), report: mergedFiles.includes('report.html'), runDirs: runDirs.length, judged: judged.length >= 8, differ })
      .toEqual({ files: files.filter((f) => f !== 'report.html'), report: true, runDirs: 16, judged: true, differ: [] });
  });

  test('junit.xml and results.jsonl are the unsharded run\'s, times aside', async () => {
    const untimed = async (dir: string, f: string) => (await readFile(join(dir, f), 'utf8')).replace(/ time="[\d.]+"/g, '').replace(/"ms":\d+/g, '');
    expect([await untimed(merged, 'junit.xml') === await untimed(full, 'junit.xml'), await untimed(merged, RESULTS_FILE) === await untimed(full, RESULTS_FILE)])
      .toEqual([true, true]);
  });

  test('run files are hard-linked to the shard\'s (one inode), or copied with --copy', async () => {
    const copied = join(root, 'copied');
    const r = await ptlab('merge', shard(1), shard(2), shard(3), '--out', copied, '--copy');
    const f = join('seed-1', 'branch-disable', 'skylake', 'trace.pt');
    const [s1, m, c] = await Promise.all([stat(join(shard(1), f)), stat(join(merged, f)), stat(join(copied, f))]);
    expect([r.code, m.ino === s1.ino, c.ino === s1.ino, c.nlink, / 0 hard-linked, \d+ copied/.test(r.out)]).toEqual([0, true, false, 1, true]);
  });

  test('the merged suite is no shard: it has no shard.json', () => {
    expect(existsSync(join(merged, SHARD_FILE))).toBe(false);
  });
});

/** A copy of shard i at `name`, for a test to spoil. */
async function copyOf(i: number, name: string): Promise<string> {
  const dir = join(root, name);
  await cp(shard(i), dir, { recursive: true });
  return dir;
}

describe('shards that do not belong together: exit 2, the shard named, nothing written', () => {
  test.for([
    { what: 'a missing shard', problem: 'missing-shard', dirs: async () => [shard(1), shard(3)], msg: /shard 2\/3 is missing/ },
    { what: 'two missing shards', problem: 'missing-shard', dirs: async () => [shard(2)], msg: /shards 1\/3, 3\/3 are missing \(given: shard 2\/3 \(.*shard-2\)\)/ },
    { what: 'a shard given twice', problem: 'duplicate-shard', dirs: async () => [shard(1), shard(2), shard(2), shard(3)], msg: /shard 2\/3 is given twice: .*shard-2 and .*shard-2/ },
    { what: 'a directory that is no shard', problem: 'not-a-shard', dirs: async () => [shard(1), full, shard(3)], msg: /full has no shard\.json/ },
    {
      what: 'a shard of another matrix', problem: 'different-matrix', msg: /shard 2\/3 \(.*other-2\) was cut from another matrix than shard 1\/3 .*: scenarios/,
      dirs: async () => {
        const other = join(root, 'other-2');
        if (!existsSync(other)) await runSuite({ ...plan(other, { shard: { index: 2, count: 3 } }), scenarios: [findScenario('err-reserved-bit')] });
        return [shard(1), other, shard(3)];
      },
    },
    {
      what: 'two shards holding the same cell', problem: 'duplicate-cell', msg: /shard 1\/3 \(.*shard-1\) and shard 2\/3 \(.*twin-2\) both hold the cell 1\/branch-disable\/skylake/,
      dirs: async () => {
        const twin = await copyOf(2, 'twin-2');
        await cp(join(shard(1), 'seed-1', 'branch-disable', 'skylake'), join(twin, 'seed-1', 'branch-disable', 'skylake'), { recursive: true });
        return [shard(1), twin, shard(3)];
      },
    },
    {
      what: 'a shard holding a cell of another shard', problem: 'foreign-cell', msg: /shard 2\/3 \(.*moved-2\) holds the cell 1\/branch-disable\/skylake, which belongs to shard 1\/3/,
      dirs: async () => {
        // Cell 0 moved from shard 1 (its run directory and its line in results.jsonl) to shard 2.
        const from = await copyOf(1, 'moved-1'), to = await copyOf(2, 'moved-2');
        const cell = join('seed-1', 'branch-disable', 'skylake');
        await cp(join(from, cell), join(to, cell), { recursive: true });
        await rm(join(from, cell), { recursive: true });
        const lines = (await readFile(join(from, RESULTS_FILE), 'utf8')).split('\n');
        await writeFile(join(from, RESULTS_FILE), lines.filter((l) => !l.startsWith('{"scenario":"branch-disable","target":"sim","profile":"skylake","seed":1,')).join('\n'));
        return [from, to, shard(3)];
      },
    },
    {
      what: 'a shard whose run directory was deleted', problem: 'missing-run', msg: /shard 2\/3 \(.*gap-2\) lists the \w+ run of \d+\/[a-z-]+\/[a-z]+ in its results\.jsonl, but its run directory is not there/,
      dirs: async () => {
        const gap = await copyOf(2, 'gap-2');
        const seed = (await readdir(gap)).find((d) => d.startsWith('seed-'))!;
        const scenario = (await readdir(join(gap, seed)))[0]!;
        const profile = (await readdir(join(gap, seed, scenario)))[0]!;
        await rm(join(gap, seed, scenario, profile), { recursive: true });
        return [shard(1), gap, shard(3)];
      },
    },
    {
      what: 'a shard that did not finish', problem: 'unfinished-shard', msg: /shard 3\/3 \(.*killed-3\) did not finish/,
      dirs: async () => {
        const killed = await copyOf(3, 'killed-3');
        await writeFile(join(killed, SHARD_FILE), shardJsonText({ ...(await readShardJson(killed))!, status: 'running' }));
        await rm(join(killed, RESULTS_FILE));
        return [shard(1), shard(2), killed];
      },
    },
    {
      what: 'a shard.json whose matrix was changed', problem: 'bad-shard', msg: /shard 1\/3 \(.*edited-1\): shard\.json's fingerprint does not match/,
      dirs: async () => {
        const edited = await copyOf(1, 'edited-1');
        const s = (await readShardJson(edited))!;
        await writeFile(join(edited, SHARD_FILE), shardJsonText({ ...s, matrix: { ...s.matrix, seeds: { from: 1, to: 1 } } }));
        return [edited, shard(2), shard(3)];
      },
    },
  ])('$what ($problem)', async ({ dirs, problem, msg }) => {
    const out = join(root, `refused-${Math.random().toString(36).slice(2)}`);
    const given = await dirs();
    const thrown = await mergeShards({ shards: given, out }).then(() => undefined, (e: unknown) => e);
    const r = await ptlab('merge', ...given, '--out', out);
    expect([thrown instanceof MergeError && thrown.problem, r.code, msg.test(r.err), existsSync(out)]).toEqual([problem, 2, true, false]);
  });

  test('--out inside a shard is refused', async () => {
    const r = await ptlab('merge', shard(1), shard(2), shard(3), '--out', join(shard(2), 'merged'));
    expect([r.code, /overlap/.test(r.err), existsSync(join(shard(2), 'merged'))]).toEqual([2, true, false]);
  });

  test('a command line without --out or without shards is a usage error', async () => {
    expect([(await ptlab('merge', shard(1))).code, (await ptlab('merge', '--out', join(root, 'x'))).code]).toEqual([2, 2]);
  });
});

describe('--out and --force', () => {
  test('a non-empty --out is refused without --force; with it, an earlier suite\'s run directories are replaced and a file ptlab did not write stays', async () => {
    const out = join(root, 'again');
    expect((await ptlab('merge', shard(1), shard(2), shard(3), '--out', out)).code).toBe(0);
    const dir = join(out, 'seed-2', 'pmi-at-final-stop', 'skylake');
    await writeFile(join(dir, 'notes.txt'), 'mine');
    await writeFile(join(out, 'README'), 'mine too');
    const refused = await ptlab('merge', shard(1), shard(2), shard(3), '--out', out);
    const forced = await ptlab('merge', shard(1), shard(2), shard(3), '--out', out, '--force');
    expect([refused.code, /is not empty/.test(refused.err), forced.code, await readFile(join(dir, 'notes.txt'), 'utf8'), await readFile(join(out, 'README'), 'utf8'),
      existsSync(join(dir, 'trace.pt'))]).toEqual([2, true, 0, 'mine', 'mine too', true]);
  });
});

describe('the exit status follows ptlab run', () => {
  test('a failed verdict in a shard: exit 1, the failure in junit.xml', async () => {
    const bad = (i: number) => join(root, `knob-${i}`);
    for (const i of [1, 2]) {
      await runSuite({ ...plan(bad(i), { shard: { index: i, count: 2 } }), scenarios: [findScenario('err-reserved-bit')], profiles: ['skylake'], knobs: ['swallow-gp'] });
    }
    const out = join(root, 'knob-merged');
    const r = await ptlab('merge', bad(1), bad(2), '--out', out);
    expect([r.code, (await readFile(join(out, 'junit.xml'), 'utf8')).match(/<failure /g)?.length]).toEqual([1, 2]);
  });

  test('a shard that stopped early: exit 4, junit.xml marked incomplete with that shard\'s reason', async () => {
    const cut = await copyOf(2, 'cut-2');
    await writeFile(join(cut, SHARD_FILE), shardJsonText({ ...(await readShardJson(cut))!, status: 'incomplete', incomplete: 'interrupted after 3 of 5 runs' }));
    const out = join(root, 'cut-merged');
    const r = await ptlab('merge', shard(1), cut, shard(3), '--out', out);
    expect([r.code, /INCOMPLETE: shard 2\/3 \(.*cut-2\): interrupted after 3 of 5 runs/.test(r.err),
      /<testsuite name="ptlab.incomplete"[^]*shard 2\/3 \([^)]*cut-2\): interrupted after 3 of 5 runs/.test(await readFile(join(out, 'junit.xml'), 'utf8'))]).toEqual([4, true, true]);
  });
});

test('an unsharded run over an earlier shard (--force) leaves no shard.json behind', async () => {
  const out = join(root, 'reuse');
  await mkdir(out);
  await runSuite(plan(out, { shard: { index: 1, count: 2 }, scenarios: [findScenario('err-reserved-bit')], profiles: ['skylake'] }));
  const before = existsSync(join(out, SHARD_FILE));
  await runSuite(plan(out, { force: true, scenarios: [findScenario('err-reserved-bit')], profiles: ['skylake'] }));
  expect([before, existsSync(join(out, SHARD_FILE))]).toEqual([true, false]);
});

describe('a merge stopped by a signal', () => {
  test('stops between run directories: no half-placed run, no junit.xml or results.jsonl, and says how to finish', async () => {
    const out = join(root, 'interrupted');
    const stop = new AbortController();
    stop.abort(new Error('SIGINT'));
    const e = await mergeShards({ shards: [shard(1), shard(2), shard(3)], out, signal: stop.signal }).catch((x: unknown) => x);
    expect([(e as { code?: string }).code, (e as Error).message]).toEqual(['aborted', expect.stringContaining('merge again with --force')]);
    const left = await readdir(out);
    expect(left.filter((f) => f.includes('.partial') || f === 'junit.xml' || f === RESULTS_FILE)).toEqual([]);
  });

  test('ptlab merge on SIGTERM: exit 143 (the handler aborts the merge; a second signal would exit at once)', async () => {
    const out = join(root, 'sigterm');
    const before = process.listenerCount('SIGTERM');
    const running = ptlab('merge', shard(1), shard(2), shard(3), '--out', out);
    while (process.listenerCount('SIGTERM') === before) await new Promise((r) => setTimeout(r, 1));
    process.emit('SIGTERM'); // the command's own handler, in this process: the merge sees its signal aborted
    const r = await running;
    expect([r.code, r.err]).toEqual([143, expect.stringContaining('SIGTERM')]);
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
