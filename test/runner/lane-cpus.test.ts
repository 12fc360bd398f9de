// `--jobs N` against one lab machine (docs/parallel.md "CPUs of one machine"): each lane traces on a
// CPU of its own — never CPU 0 where another is online, never more lanes than CPUs — and a lane's
// runs, written for "the run's CPU 0", land on its CPU (CpuMapTarget). Two lanes on one CPU, as
// before, each claimed and programmed the other's PT.
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseRunArgs } from '../../harness/cli/commands/run.js';
import { CpuClaimedError } from '../../harness/runner/claim.js';
import { CpuMapTarget, laneCpus } from '../../harness/runner/cpu-map.js';
import { HelperPtSuite } from '../../harness/runner/helper-suite.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { getProfile } from '../../harness/sim/profiles.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot();

describe('laneCpus', () => {
  test.for([
    { online: 4, lanes: 1, want: [1] },
    { online: 4, lanes: 3, want: [1, 2, 3] },
    { online: 1, lanes: 1, want: [0] },
  ])('$online CPUs online, $lanes lane(s): CPUs $want (CPU 0 left to the system where another is online)', ({ online, lanes, want }) => {
    expect(laneCpus('ssh:lab1', online, lanes)).toEqual(want);
  });

  test('more lanes than CPUs other than 0 is refused, saying how many there are', () => {
    expect(() => laneCpus('ssh:lab1', 4, 4)).toThrow(/--jobs 4 on ssh:lab1 needs 4 CPUs of its own, one per lane; it has 4 online and CPU 0 is left to the system/);
  });

  test('--cpus is taken as given, in order, and checked', () => {
    expect(laneCpus('ssh:lab1', 8, 2, [5, 0])).toEqual([5, 0]);
    expect(() => laneCpus('ssh:lab1', 8, 3, [5, 0])).toThrow(/--cpus gives 2/);
    expect(() => laneCpus('ssh:lab1', 4, 1, [4])).toThrow(/CPU 4 is not online on ssh:lab1 \(CPUs 0-3\)/);
    expect(() => laneCpus('ssh:lab1', 4, 1, [2, 2])).toThrow(/names a CPU twice/);
  });

  test('ptlab run --cpus goes to the ssh reach; a bad list is refused', () => {
    expect(parseRunArgs(['topa-grow', '--target', 'ssh', '--host', 'lab1', '--cpus', '2,3']).reach).toMatchObject({ cpus: [2, 3] });
    expect(() => parseRunArgs(['topa-grow', '--target', 'ssh', '--host', 'lab1', '--cpus', '2,x'])).toThrow(/--cpus takes CPU numbers/);
    expect(() => parseRunArgs(['topa-grow', '--cpus', '1'])).toThrow(/--cpus does not apply to --target sim/);
  });
});

describe('lanes on one machine (a three-CPU model standing in for it)', () => {
  const lane = (sim: SimTarget, cpu: number) => new HelperPtSuite('ssh', Object.assign(sim, { lost: undefined }), getProfile('skylake'), { cpu });
  const run = (suite: HelperPtSuite, name: string) => runScenario({ scenario: findScenario('topa-grow'), target: 'ssh', profile: getProfile('skylake'), seed: 1 }, join(root, name), suite);

  test('a lane\'s runs trace on its CPU of the machine, and its description names it', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake', cpus: 3, memory: { ramSize: 64 * 2 ** 20 } });
    const r = await run(lane(sim, 2), 'one');
    expect([r.verdict, r.figures.targetDescription]).toEqual(['pass', 'sim:skylake CPU 2']);
    expect([sim.written(0), sim.written(1), sim.written(2) > 0]).toEqual([0, 0, true]);
  });

  test('two lanes at once on CPUs 1 and 2 both pass; on one CPU the second is refused', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake', cpus: 3, memory: { ramSize: 64 * 2 ** 20 } });
    const [a, b] = await Promise.all([run(lane(sim, 1), 'a'), run(lane(sim, 2), 'b')]);
    expect([a.verdict, b.verdict, sim.oracle.events]).toEqual(['pass', 'pass', []]);
    await using shared = await SimTarget.create({ profile: 'skylake', cpus: 3, memory: { ramSize: 64 * 2 ** 20 } });
    const first = lane(shared, 1);
    // The first lane's run is still tracing on CPU 1 when the second lane claims the same CPU.
    const cpu = await first.prepare();
    await new CpuMapTarget(shared, 1).msrBatch(0, [{ op: 'wrmsr', msr: 0x570, value: 0x2109n }]).catch(() => undefined);
    await expect(run(lane(shared, 1), 'c')).rejects.toBeInstanceOf(CpuClaimedError);
    await cpu.release();
  });
});
