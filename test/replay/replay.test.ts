// `ptlab replay` (harness/replay/): every scenario's recorded run, issued again on a fresh sim,
// shows no divergence; a model knob that breaks one rule diverges at that rule's operation, named
// with its fields or #GP rule; buffers are matched by role when the replay's allocator places them
// elsewhere; runs that cannot be replayed are refused with the line; the command's exit statuses.
import { execa } from 'execa';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { parseTranscriptLine } from '../../harness/rundir/parse-transcript.js';
import { NotReplayableError } from '../../harness/replay/errors.js';
import { replayTranscript } from '../../harness/replay/replay.js';
import { replayRunDir } from '../../harness/replay/replay-run.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { SimSuiteTarget } from '../../harness/runner/suite-target.js';
import { createSim } from '../../harness/runner/targets.js';
import { findScenario, SCENARIOS } from '../../harness/scenarios/index.js';
import { PROFILE_NAMES, type ProfileName } from '../../harness/sim/profiles.js';
import type { KnobName } from '../../harness/sim/knobs/knobs.js';
import { tmpRoot } from '../scenarios/tmp.js';

const PTLAB = resolve(import.meta.dirname, '../../dist/harness/cli/ptlab.js');
const ptlab = (...args: string[]) => execa('node', [PTLAB, ...args], { reject: false });
const root = await tmpRoot('ptlab-replay-');
const sim = new SimSuiteTarget();

/** Runs `scenario` on the sim into its own directory; the directory, or undefined when it skips there. */
async function recorded(scenario: string, profile: ProfileName, seed = 1): Promise<string | undefined> {
  const dir = join(root, `${scenario}-${profile}-${seed}`);
  const r = await runScenario({ scenario: findScenario(scenario), target: 'sim', profile, seed }, dir, sim);
  return r.verdict === 'skip' ? undefined : dir;
}

const transcriptOf = async (dir: string) => (await readFile(join(dir, 'transcript.jsonl'), 'utf8')).split('\n').filter((l) => l).map(parseTranscriptLine);

describe('replay of every scenario on the sim', () => {
  test('no divergence: each run, on the first profile it applies to, replays line for line', async () => {
    const diverged: string[] = [];
    let replayed = 0;
    for (const s of SCENARIOS) {
      for (const profile of ['skylake', 'broadwell', ...PROFILE_NAMES] as const) {
        const dir = await recorded(s.name, profile, 3);
        if (dir === undefined) continue;
        const r = await replayRunDir(dir, sim);
        replayed++;
        if (!r.equal || r.equalLines !== r.lines || r.lines === 0) diverged.push(`${s.name}/${profile}: ${JSON.stringify(r.divergence)}`);
        break;
      }
    }
    expect(diverged).toEqual([]);
    expect(replayed).toBe(SCENARIOS.length);
  }, 300_000);
});

describe('replay of sequence-file runs (ptlab seq)', () => {
  test('every sequence of the sequences/ library replays on the sim with no divergence', async () => {
    const out = join(root, 'seq');
    const files = (await readdir('sequences')).filter((f) => f.endsWith('.yaml')).map((f) => join('sequences', f));
    const r = await ptlab('seq', ...files, '--out', out);
    expect(r.exitCode, r.stderr).toBe(0);
    const dirs = (await readdir(out, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(out, d.name));
    expect(dirs.length).toBe(files.length);
    const diverged: string[] = [];
    for (const d of dirs) {
      const rep = await replayRunDir(d, sim);
      if (!rep.equal) diverged.push(`${d}: ${JSON.stringify(rep.divergence)}`);
    }
    expect(diverged).toEqual([]);
  }, 120_000);
});

describe('a model knob that breaks one rule diverges at that rule\'s operation', () => {
  const cases: [string, ProfileName, KnobName, { op: string; kind: string; field?: string; rule?: string }][] = [
    ['err-reserved-bit', 'skylake', 'swallow-gp', { op: 'wrmsr', kind: 'fault', rule: 'CTL.2' }],
    ['topa-stop', 'skylake', 'no-topa-stop-status', { op: 'rdmsr', kind: 'value', field: 'IA32_RTIT_STATUS: TriggerEn 0 → 1, Stopped 1 → 0' }],
    ['pmi-preservation', 'sapphire-rapids', 'no-pmi-preservation', { op: 'pmi', kind: 'event', field: 'IA32_RTIT_STATUS: PendTopaPMI 1 → 0' }],
    ['xsaves-roundtrip', 'sapphire-rapids', 'xrstors-drops-traceen', { op: 'rdmsr', kind: 'value', field: 'IA32_RTIT_CTL: TraceEn 1 → 0' }],
    ['pmi-skid', 'skylake', 'no-topa-pmi', { op: 'pmi', kind: 'event' }],
  ];
  test.each(cases)('%s (%s) with %s', async (scenario, profile, knob, want) => {
    const dir = (await recorded(scenario, profile))!;
    const clean = await replayRunDir(dir, sim);
    expect(clean.equal).toBe(true);
    const r = await replayRunDir(dir, sim, { knobs: [knob] });
    const d = r.divergence!;
    expect([r.equal, d.op, d.kind]).toEqual([false, want.op, want.kind]);
    expect(r.equalLines).toBe(d.line - 1);
    if (want.rule) expect(d.rule).toBe(want.rule);
    if (want.field) expect(d.fields.some((f) => f.startsWith(want.field!))).toBe(true);
    // The divergence is the first line that differs: the recorded transcript up to it is what the replay made.
    const lines = await transcriptOf(dir);
    expect(lines[d.line - 1]!.op).toBe(want.op);
  }, 60_000);
});

describe('buffers move by role', () => {
  test('a replay whose allocator hands out other addresses is still equal, and its addresses did move', async () => {
    const dir = (await recorded('topa-chain', 'skylake'))!;
    const lines = await transcriptOf(dir);
    const { sim: cpu } = await createSim('skylake', 1, [], findScenario('topa-chain').sim ?? {});
    try {
      await cpu.phys.alloc(0x40000, 0x1000); // every later allocation lands elsewhere
      const out = await replayTranscript(lines, cpu);
      expect(out.divergence).toBeUndefined();
      const allocs = (t: Record<string, unknown>[]) => t.filter((l) => l.op === 'alloc').map((l) => l.result);
      const mine = out.transcript.split('\n').filter((l) => l).map(parseTranscriptLine);
      expect(allocs(mine).length).toBe(allocs(lines).length);
      expect(allocs(mine).every((a, i) => a !== allocs(lines)[i])).toBe(true);
    } finally {
      await cpu[Symbol.asyncDispose]();
    }
  }, 60_000);
});

describe('XRSTORS areas', () => {
  test('an area XSAVES wrote is recorded by its MSRs alone; a changed one with its bytes, and both replay equal', async () => {
    const { sim: cpu, target: rec } = await createSim('skylake', 1);
    try {
      const area = await rec.xsaves(0, 0x100n);
      await rec.xrstors(0, area, 0x100n);
      const bad = area.slice();
      bad[576 + 0x48] = 1; // a reserved byte of component 8: #GP (docs/sdm/xsave.md §1.1)
      await expect(rec.xrstors(0, bad, 0x100n)).rejects.toThrow(/#GP/);
      const [, good, faulted] = rec.lines.map((l) => l as unknown as Record<string, unknown>);
      expect([good!.data, typeof faulted!.data, typeof faulted!.fault]).toEqual([undefined, 'string', 'string']);
      const { sim: other } = await createSim('skylake', 1);
      try {
        const out = await replayTranscript(rec.lines.map((l) => JSON.parse(JSON.stringify(l)) as Record<string, unknown>), other);
        expect([out.divergence, out.equalLines]).toEqual([undefined, 3]);
      } finally {
        await other[Symbol.asyncDispose]();
      }
    } finally {
      await cpu[Symbol.asyncDispose]();
    }
  });
});

describe('runs that cannot be replayed', () => {
  test('a transcript from before recipes: refused at its start line, naming the workload', async () => {
    const dir = (await recorded('topa-grow', 'skylake'))!;
    const old = join(root, 'old-format');
    await cp(dir, old, { recursive: true });
    const lines = await transcriptOf(old);
    const at = lines.findIndex((l) => l.op === 'start');
    delete lines[at]!.workload;
    await writeFile(join(old, 'transcript.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const e = await replayRunDir(old, sim).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NotReplayableError);
    expect([(e as NotReplayableError).line, (e as Error).message]).toEqual([at + 1, expect.stringMatching(/gen-\d+-\d+ has no recipe/)]);
  });

  test('a directory with no transcript, or a skipped run: refused', async () => {
    await expect(replayRunDir(root, sim)).rejects.toThrow(/no result\.json/);
    const skipped = join(root, 'skipped');
    await runScenario({ scenario: findScenario('single-entry-topa'), target: 'sim', profile: 'skylake', seed: 1 }, skipped, sim);
    await expect(replayRunDir(skipped, sim)).rejects.toBeInstanceOf(NotReplayableError);
  });
});

describe('ptlab replay', () => {
  test('exit 0 with no divergence; --out keeps the replay\'s transcript and replay.json', async () => {
    const dir = (await recorded('err-reserved-bit', 'icelake'))!;
    const out = join(root, 'replay-out');
    const r = await ptlab('replay', dir, '--out', out);
    expect([r.exitCode, r.stdout]).toEqual([0, expect.stringMatching(/no divergence \(\d+ transcript lines replayed\)$/)]);
    const report = JSON.parse(await readFile(join(out, 'replay.json'), 'utf8')) as { equal: boolean; target: string };
    expect([report.equal, report.target]).toEqual([true, 'sim:icelake']);
    expect((await readFile(join(out, 'transcript.jsonl'), 'utf8')).split('\n').length).toBe((await transcriptOf(dir)).length + 1);
  }, 60_000);

  test('exit 1 at a divergence, printed with the lines before it and the rule; --json; --cpu replays on another profile', async () => {
    const dir = (await recorded('err-reserved-bit', 'skylake'))!;
    const r = await ptlab('replay', dir, '--knob', 'swallow-gp');
    expect([r.exitCode, r.stdout]).toEqual([1, expect.stringContaining('DIVERGES at transcript line 2 (wrmsr, fault, rule CTL.2)')]);
    expect(r.stdout).toMatch(/recorded .*#GP on WRMSR IA32_RTIT_CTL/);
    const j = await ptlab('replay', dir, '--cpu', 'broadwell', '--json');
    // Broadwell's MAXPHYADDR is wider than Skylake's model: the probe of bit 39 in OUTPUT_BASE faults only on Skylake.
    const report = JSON.parse(j.stdout) as { equal: boolean; profile: string; divergence: { op: string; rule: string } };
    expect([j.exitCode, report.equal, report.profile, report.divergence.op, report.divergence.rule]).toEqual([1, false, 'broadwell', 'wrmsr', 'OUTPUT_BASE.MAXPHYADDR']);
  }, 60_000);

  test('on another --cpu the CPUID read diverges, named field by field with a hint; --past-cpuid goes on past each to the rest', async () => {
    const dir = (await recorded('topa-grow', 'skylake'))!;
    const r = await ptlab('replay', dir, '--cpu', 'icelake');
    expect([r.exitCode, r.stdout.split('\n').filter((l) => l.startsWith('  fields') || l.startsWith('  ('))]).toEqual([1, [
      '  fields   CPUID.00H:EAX (the highest basic leaf): 0x16 → 0x1b',
      '  (icelake is not the recorded skylake: its CPUID differs by design; --past-cpuid goes on to the first other difference)',
    ]]);
    const p = await ptlab('replay', dir, '--cpu', 'icelake', '--past-cpuid', '--json');
    const report = JSON.parse(p.stdout) as { equal: boolean; cpuid: { line: number; fields: string[] }[] };
    expect([p.exitCode, report.equal, report.cpuid.flatMap((c) => c.fields)]).toEqual([0, true, expect.arrayContaining([
      'CPUID.(EAX=14H,ECX=1):EBX[15:0] (the supported cycle threshold encodings): 0x3fff → 0x1fff',
      'CPUID.80000008H:EAX[7:0] (MAXPHYADDR): 0x27 → 0x2e',
    ])]);
    // Past CPUID, a difference elsewhere still stops the replay.
    const k = await ptlab('replay', (await recorded('err-reserved-bit', 'skylake'))!, '--past-cpuid', '--knob', 'swallow-gp');
    expect([k.exitCode, k.stdout]).toEqual([1, expect.stringContaining('DIVERGES at transcript line 2 (wrmsr, fault, rule CTL.2)')]);
  }, 60_000);

  test('a SIGINT stops the replay between two operations: exit 130, the target disposed of', async () => {
    const dir = (await recorded('manual-pmi-other-context', 'skylake'))!; // tens of thousands of lines: seconds to replay
    const before = process.listenerCount('SIGINT');
    const out: string[] = [], err: string[] = [];
    const running = main(['replay', dir], { out: (x) => out.push(x), err: (x) => err.push(x) });
    while (process.listenerCount('SIGINT') === before) await new Promise((r) => setTimeout(r, 1));
    process.emit('SIGINT'); // the command's own handler, in this process
    const code = await running;
    expect([code, err.join('\n'), out]).toEqual([130, expect.stringMatching(/SIGINT[\s\S]*interrupted: replay interrupted at transcript line \d+ of \d+/), []]);
    expect(process.listenerCount('SIGINT')).toBe(before);
  }, 60_000);

  test('exit 2: no directory, an unknown knob, --knob off the sim', async () => {
    expect((await ptlab('replay')).exitCode).toBe(2);
    expect((await ptlab('replay', join(root, 'nothing-here'))).exitCode).toBe(2);
    const k = await ptlab('replay', root, '--knob', 'no-such-knob');
    expect([k.exitCode, k.stderr]).toEqual([2, expect.stringContaining("unknown model knob 'no-such-knob'")]);
    expect((await ptlab('replay', root, '--target', 'ssh', '--host', 'h', '--knob', 'swallow-gp')).exitCode).toBe(2);
  }, 60_000);
});
