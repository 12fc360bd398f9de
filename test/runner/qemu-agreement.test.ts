// `ptlab run --target qemu --pt model` against the sim: ONE TCG guest
// whose PT unit is the reference model, reset per run, runs the scenarios the sim runs, with the
// same seed and profile, and writes the same run directory — equal verdicts, byte-identical
// trace.pt, truth.jsonl and losses.json, transcripts equal apart from physical addresses (the
// buffers are the guest module's). And the CLI as a user runs it: `--pt hardware` under TCG is
// refused with the probe's reason, and Ctrl-C stops the suite and the VM.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TranscriptLine } from '../../harness/rundir/transcript-line.js';
import { diffRuns } from '../../harness/diff/run-diff.js';
import { normalTranscript } from '../../harness/rundir/normalize-transcript.js';
import { replayRunDir } from '../../harness/replay/replay-run.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { openSuiteTarget, type SuiteTarget } from '../../harness/runner/suite-target.js';
import { findScenario } from '../../harness/scenarios/index.js';
import type { ProfileName } from '../../harness/sim/profiles.js';
import { qemuTestEnv } from '../qemu/env.js';
import { tmpRoot } from '../scenarios/tmp.js';

/** A transcript by buffer role, without seq and t_us (the comparison ptlab diff and replay make). */
const byRole = (lines: readonly TranscriptLine[]): string[] => normalTranscript(lines.map((l) => JSON.stringify(l)).join('\n')).map((l) => l.text);

const env = await qemuTestEnv();
const root = await tmpRoot('ptlab-qemu-agree-');
const SEED = 7;

/** Scenario × profile: skylake, and pmi-preservation where it applies (CPUID.(14H,0):EBX[6]: not on skylake). */
const CASES: readonly { scenario: string; profile: ProfileName }[] = [
  { scenario: 'topa-grow', profile: 'skylake' },
  { scenario: 'topa-circular-fresh', profile: 'skylake' },
  { scenario: 'pmi-preservation', profile: 'sapphire-rapids' },
  { scenario: 'xsaves-roundtrip', profile: 'skylake' },
  { scenario: 'single-range-wrap', profile: 'skylake' },
  { scenario: 'err-reserved-bit', profile: 'skylake' },
  { scenario: 'topa-stop', profile: 'skylake' },
  { scenario: 'pmi-skid', profile: 'skylake' },
];

interface Pair { readonly sim: ResultJson; readonly qemu: ResultJson; readonly simDir: string; readonly qemuDir: string }

const file = (dir: string, name: string): Promise<Buffer> => readFile(join(dir, name));
const transcript = async (dir: string): Promise<TranscriptLine[]> =>
  (await file(dir, 'transcript.jsonl')).toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as TranscriptLine);

describe.skipIf(env.skip)(`qemu --pt model agrees with the sim on the scenario suite${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let host: SuiteTarget | undefined;
  const pairs = new Map<string, Pair>();

  beforeAll(async () => {
    host = await openSuiteTarget('qemu', { kind: 'qemu', pt: 'model', accel: 'tcg' });
    for (const c of CASES) {
      const s = findScenario(c.scenario);
      const simDir = join(root, 'sim', c.scenario), qemuDir = join(root, 'qemu', c.scenario);
      const sim = await runScenario({ scenario: s, target: 'sim', profile: c.profile, seed: SEED }, simDir);
      const qemu = await runScenario({ scenario: s, target: 'qemu', profile: c.profile, seed: SEED }, qemuDir, host);
      pairs.set(c.scenario, { sim, qemu, simDir, qemuDir });
    }
  });

  afterAll(async () => {
    await host?.[Symbol.asyncDispose]();
  });

  test('the suite runs on one guest whose PT unit is the model (qemu:tcg+model)', () => {
    expect(host?.description).toBe('qemu:tcg+model');
  });

  test.for(CASES)('$scenario ($profile): the verdict is the sim\'s, and a pass (not a skip on both)', ({ scenario }) => {
    const p = pairs.get(scenario)!;
    expect([p.qemu.verdict, p.qemu.reason]).toEqual([p.sim.verdict, p.sim.reason]);
    expect(p.sim.verdict).toBe('pass');
  });

  test.for(CASES)('$scenario ($profile): trace.pt, truth.jsonl and losses.json are byte-identical', async ({ scenario }) => {
    const p = pairs.get(scenario)!;
    for (const f of ['trace.pt', 'truth.jsonl', 'losses.json']) {
      expect((await file(p.qemuDir, f)).equals(await file(p.simDir, f)), f).toBe(true);
    }
  });

  test.for(CASES)('$scenario ($profile): the transcripts are equal apart from physical addresses', async ({ scenario }) => {
    const p = pairs.get(scenario)!;
    const sim = await transcript(p.simDir), qemu = await transcript(p.qemuDir);
    expect(sim.length).toBeGreaterThan(0);
    expect(byRole(qemu)).toEqual(byRole(sim));
  });

  test.for(CASES)('$scenario ($profile): ptlab diff of the sim run and its qemu twin: equal in every section', async ({ scenario }) => {
    const p = pairs.get(scenario)!;
    const d = await diffRuns(p.simDir, p.qemuDir);
    expect(d.sections.filter((x) => x.status !== 'equal')).toEqual([]);
  });

  test.for(CASES)('$scenario ($profile): the sim run replayed on the guest (ptlab replay): no divergence', async ({ scenario }) => {
    const p = pairs.get(scenario)!;
    const r = await replayRunDir(p.simDir, host!);
    expect([r.target, r.divergence, r.equalLines]).toEqual(['qemu:tcg+model:' + r.profile, undefined, r.lines]);
  });

  test('the runs did trace: topa-grow wrote kilobytes and took PMIs on both targets', async () => {
    const p = pairs.get('topa-grow')!;
    expect([(await file(p.qemuDir, 'trace.pt')).length > 4096, Number(p.qemu.figures['pmis']) > 0]).toEqual([true, true]);
  });

  test('the physical addresses do differ: the qemu run\'s buffers are the guest module\'s', async () => {
    const p = pairs.get('topa-grow')!;
    const allocs = async (d: string) => (await transcript(d)).filter((l) => l.op === 'alloc').map((l) => l.result);
    expect(await allocs(p.qemuDir)).not.toEqual(await allocs(p.simDir));
  });

  test('result.json names the qemu target and, in figures, the guest with its model', () => {
    const p = pairs.get('topa-grow')!;
    expect([p.qemu.target, p.qemu.figures['targetDescription']]).toEqual(['qemu', 'qemu:tcg+model:skylake']);
  });
});

// The CLI spawned as a user runs it (`npm test` builds dist/ first).
const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI) && existsSync(join(process.cwd(), 'dist', 'harness', 'runner', 'qemu-suite.js'));

describe.skipIf(env.skip || !built)(`ptlab run --target qemu spawned from dist/${env.skip ? ` (skipped: ${env.reason})` : built ? '' : ' (skipped: run `npm run build` first)'}`, () => {
  test('--pt hardware under TCG is refused: exit 3, the probe\'s reason, a pointer to --pt model and ptlab doctor, nothing written', async () => {
    const out = join(root, 'refused');
    const r = await execa('node', [CLI, 'run', 'topa-grow', '--target', 'qemu', '--pt', 'hardware', '--accel', 'tcg', '--out', out], { reject: false, timeout: 90_000 });
    expect({
      code: r.exitCode,
      reason: /does not enumerate Intel PT: the CPU vendor is "AuthenticAMD"/.test(r.stderr),
      model: r.stderr.includes('--pt model'),
      doctor: r.stderr.includes('ptlab doctor'),
      written: existsSync(out),
    }).toEqual({ code: 3, reason: true, model: true, doctor: true, written: false });
  }, 90_000);

  test('Ctrl-C (SIGINT) stops the suite after the current run, exits 130 and stops the VM', async () => {
    const out = join(root, 'interrupted');
    const child = execa('node', [CLI, 'run', '--all', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--out', out], { reject: false, timeout: 90_000 });
    let qemuPids: number[] = [];
    // After the first progress line ("[  1/174] …", on stderr) the VM is up: note QEMU's pid (a child of ptlab), then interrupt.
    await new Promise<void>((resolve) => {
      void child.finally(resolve); // never wait past the child's end
      child.stderr!.on('data', (d: Buffer) => {
        if (qemuPids.length > 0 || !/\[\s*1\//.test(d.toString())) return;
        void execa('ps', ['-o', 'pid=,comm=', '--ppid', String(child.pid)], { reject: false }).then((p) => {
          qemuPids = p.stdout.split('\n').filter((l) => l.includes('qemu')).map((l) => Number.parseInt(l.trim(), 10));
          child.kill('SIGINT');
          resolve();
        });
      });
    });
    const r = await child;
    const alive = qemuPids.filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } });
    expect({ qemuSeen: qemuPids.length, code: r.exitCode, said: r.stderr.includes('interrupted'), alive, junit: existsSync(join(out, 'junit.xml')) })
      .toEqual({ qemuSeen: 1, code: 130, said: true, alive: [], junit: true });
  }, 90_000);

  test('Ctrl-C at a terminal (SIGINT to ptlab\'s whole process group) interrupts the suite: QEMU is not in that group', async () => {
    const out = join(root, 'terminal');
    // ptlab as a shell starts it: the leader of a process group of its own, which the terminal signals.
    const child = execa('node', [CLI, 'run', '--all', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--out', out], { reject: false, timeout: 90_000, detached: true });
    await new Promise<void>((resolve) => {
      void child.finally(resolve);
      child.stderr!.on('data', (d: Buffer) => { if (/\[\s*1\//.test(d.toString())) { process.kill(-child.pid!, 'SIGINT'); resolve(); } });
    });
    const r = await child;
    const junit = await readFile(join(out, 'junit.xml'), 'utf8').catch(() => '');
    expect({ code: r.exitCode, interrupted: r.stderr.includes('interrupted'), died: /the target died/.test(r.stderr + junit) })
      .toEqual({ code: 130, interrupted: true, died: false });
  }, 90_000);
});
