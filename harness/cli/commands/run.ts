// `ptlab run SCENARIO…|--all [--target sim] [--cpu PROFILE|all] [--seed N]
// [--out DIR] [--knob NAME]…`: one run directory per scenario and profile
// under --out (DIR/<scenario>/<profile>/, DESIGN.md "The run directory"), a
// progress line as each run finishes, a summary table, and DIR/junit.xml.
// Without --cpu every sim profile runs (a scenario that does not apply to a
// profile records a "skip" with its reason). Exit 0 when nothing failed, 1
// when a verdict is "fail", 2 for bad input (then nothing is written).
import { PtError } from '../../../driver/errors.js';
import { checkProfile, checkTarget } from '../../runner/targets.js';
import { runSuite, type SuitePlan } from '../../runner/suite.js';
import { knob, type KnobName } from '../../sim/knobs/knobs.js';
import { capsOf, getProfile, PROFILE_NAMES, type ProfileName } from '../../sim/profiles.js';
import { findScenario, SCENARIOS } from '../../scenarios/index.js';
import type { Scenario } from '../../scenarios/scenario.js';
import { progressLine, summaryTable } from '../../report/summary.js';
import type { CliIo } from '../main.js';

const USAGE = 'usage: ptlab run SCENARIO…|--all [--target sim] [--cpu PROFILE|all] [--seed N] [--out DIR] [--knob NAME]…';

/** `./runs/<timestamp>` (UTC, file-name safe). */
export function defaultOut(now = new Date()): string {
  return `runs/${now.toISOString().replace(/[:.]/g, '-')}`;
}

/** Parses and validates the command line into a plan; throws PtError('bad_config') with a clear message. */
export function parseRunArgs(argv: string[], now = new Date()): SuitePlan {
  const names: string[] = [];
  const knobs: KnobName[] = [];
  let all = false, target = 'sim', cpu: string | undefined, seed = 1, out: string | undefined;
  const value = (i: number, opt: string): string => {
    const v = argv[i];
    if (v === undefined || v.startsWith('--')) throw new PtError('bad_config', `${opt} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--all': all = true; break;
      case '--target': target = value(++i, a); break;
      case '--cpu': cpu = value(++i, a); break;
      case '--out': out = value(++i, a); break;
      case '--knob': knobs.push(knob(value(++i, a))); break;
      case '--seed': {
        const v = value(++i, a);
        if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) > 0xffff_ffff) throw new PtError('bad_config', `--seed must be an integer 0..4294967295, got '${v}'`);
        seed = Number(v);
        break;
      }
      default:
        if (a.startsWith('-')) throw new PtError('bad_config', `unknown option '${a}'`);
        names.push(a);
    }
  }
  if (all && names.length) throw new PtError('bad_config', 'give scenario names or --all, not both');
  if (!all && !names.length) throw new PtError('bad_config', 'no scenario given (name one or more, or --all; see ptlab list)');
  const kind = checkTarget(target);
  const scenarios: Scenario[] = all ? [...SCENARIOS] : names.map(findScenario);
  const profiles: ProfileName[] = cpu === undefined || cpu === 'all' ? [...PROFILE_NAMES] : [checkProfile(cpu)];
  // A named scenario on one named profile that it cannot run on is a usage error, not a silent skip.
  if (!all && cpu !== undefined && cpu !== 'all') {
    const p = getProfile(profiles[0]!);
    for (const s of scenarios) {
      const why = s.skip({ target: kind, profile: p, caps: capsOf(p), seed });
      if (why !== undefined) throw new PtError('bad_config', `scenario ${s.name} does not run on --cpu ${p.name}: ${why}`);
    }
  }
  return { scenarios, target: kind, profiles, seed, out: out ?? defaultOut(now), knobs };
}

/** `ptlab run`. */
export async function runCommand(argv: string[], io: CliIo): Promise<number> {
  let plan: SuitePlan;
  try {
    plan = parseRunArgs(argv);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(`ptlab run: ${e.message}\n${USAGE}`);
    return 2;
  }
  const n = plan.scenarios.length * plan.profiles.length;
  io.out(`ptlab run: ${plan.scenarios.length} scenario(s) × ${plan.profiles.length} profile(s) = ${n} runs on ${plan.target}, seed ${plan.seed}${plan.knobs?.length ? `, knobs ${plan.knobs.join(',')}` : ''} → ${plan.out}`);
  let results;
  try {
    results = await runSuite(plan, (r, i, total, ms) => io.out(progressLine(r, i, total, ms)));
  } catch (e) {
    if (!(e instanceof PtError) || e.code !== 'bad_config') throw e;
    io.err(`ptlab run: ${e.message}`);
    return 2;
  }
  io.out(`\n${summaryTable(results)}run directories: ${plan.out}/<scenario>/<profile>/, junit: ${plan.out}/junit.xml`);
  return results.some((r) => r.verdict === 'fail') ? 1 : 0;
}
