// Ownership instead of scrubbing (docs/design.md "Ownership"): a run on a real target claims its CPU.
// When someone else already traces there — here the model's foreign-owner setting, another agent
// with its own table and ring — the claim refuses, naming the CPU and what to do, and writes
// nothing; `--reclaim` takes it back, says so in the run, and gives the other tracer's output and
// filter MSRs back after the run. The suite used to scrub CTL before every run, so the driver's own
// fail-safe could never fire and another agent's trace was killed silently.
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE } from '../../driver/hw/msrs.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { claimCpu, CpuClaimedError } from '../../harness/runner/claim.js';
import { HelperPtSuite } from '../../harness/runner/helper-suite.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { FOREIGN_CTL, FOREIGN_TABLE } from '../../harness/sim/foreign-owner.js';
import { getProfile } from '../../harness/sim/profiles.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();
const CTL = IA32_RTIT_CTL.address, BASE = IA32_RTIT_OUTPUT_BASE.address;

/** A model CPU another agent already traces on, standing in for a lab machine's. */
async function traced(): Promise<SimTarget> {
  return SimTarget.create({ profile: 'skylake', memory: { ramSize: 64 * 2 ** 20 }, foreignOwner: [0] });
}

describe('claimCpu', () => {
  test('a CPU someone else traces on is refused, naming it and --reclaim, after one read and no write', async () => {
    await using sim = await traced();
    const rec = new RecordingTarget(sim, () => 0);
    const e = await claimCpu(rec, 0).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CpuClaimedError);
    expect([(e as CpuClaimedError).code, (e as CpuClaimedError).cpu, (e as CpuClaimedError).ctl]).toEqual(['pt_busy', 0, FOREIGN_CTL]);
    expect((e as Error).message).toMatch(/^CPU 0 of sim:skylake is traced by someone else/);
    expect((e as CpuClaimedError).hint).toMatch(/--reclaim/);
    expect(rec.lines.map((l) => `${l.op} ${l.msr}`)).toEqual([`rdmsr 0x${CTL.toString(16)}`]);
    expect(sim.foreignTracing()).toEqual([0]);
  });

  test('an idle CPU is claimed with nothing written', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake' });
    const rec = new RecordingTarget(sim, () => 0);
    expect(await claimCpu(rec, 0)).toBeUndefined();
    expect(rec.lines.every((l) => l.op === 'rdmsr')).toBe(true);
  });

  test('--reclaim takes the CPU back (TraceEn=0), says so, and restores the other tracer\'s output MSRs after', async () => {
    await using sim = await traced();
    const taken = await claimCpu(sim, 0, { reclaim: true });
    expect(taken?.note).toMatch(/^--reclaim: CPU 0 of sim:skylake was traced by someone else \(IA32_RTIT_CTL=0x2109\); took it back/);
    expect(sim.foreignTracing()).toEqual([]);
    expect((await sim.rdmsr(0, CTL)) & 1n).toBe(0n);
    await sim.wrmsr(0, BASE, 0x20_0000n); // the run programs its own table
    await taken!.restore();
    expect([await sim.rdmsr(0, BASE), (await sim.rdmsr(0, CTL)) & 1n]).toEqual([FOREIGN_TABLE, 0n]);
  });
});

describe('a real-PT suite (HelperPtSuite) over a CPU someone else traces on', () => {
  const suite = (sim: SimTarget, reclaim: boolean) => new HelperPtSuite('ssh', Object.assign(sim, { lost: undefined }), getProfile('skylake'), { reclaim });

  test('refuses the run before it starts, instead of scrubbing the other agent\'s trace away', async () => {
    await using sim = await traced();
    const e = await runScenario({ scenario: findScenario('topa-grow'), target: 'ssh', profile: getProfile('skylake'), seed: 1 }, join(root, 'refused'), suite(sim, false)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CpuClaimedError);
    expect(sim.foreignTracing()).toEqual([0]);
  });

  test('with --reclaim the run takes the CPU, notes it in its transcript and figures, and passes', async () => {
    await using sim = await traced();
    const r = await runScenario({ scenario: findScenario('topa-grow'), target: 'ssh', profile: getProfile('skylake'), seed: 1 }, join(root, 'reclaimed'), suite(sim, true));
    expect(r.verdict).toBe('pass');
    expect(r.figures.reclaimed).toMatch(/^--reclaim: CPU 0/);
    expect([await sim.rdmsr(0, BASE), sim.oracle.events]).toEqual([FOREIGN_TABLE, []]);
  });
});
