// `ptlab list [--json]`: every scenario, what it checks, where it applies
// (per sim profile: runs, or the skip reason) and its negative-control knob.
import { capsOf, PROFILE_NAMES, PROFILES } from '../../sim/profiles.js';
import { SCENARIOS } from '../../scenarios/index.js';
import type { Scenario } from '../../scenarios/scenario.js';
import type { CliIo } from '../main.js';

const USAGE = 'usage: ptlab list [--json]';

/** Where `s` runs on the sim target: profile → "runs" or the skip reason. */
export function simApplicability(s: Scenario, seed = 1): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of PROFILE_NAMES) {
    const profile = PROFILES[p];
    const why = s.targets.includes('sim') ? s.skip({ target: 'sim', profile, caps: capsOf(profile), seed }) : 'not on the sim target';
    out[p] = why ?? 'runs';
  }
  return out;
}

/** `ptlab list`. */
export async function listCommand(argv: string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { io.out(USAGE); return 0; }
  const bad = argv.find((a) => a !== '--json');
  if (bad !== undefined) {
    io.err(`ptlab list: unexpected argument '${bad}'\n${USAGE}`);
    return 2;
  }
  if (argv.includes('--json')) {
    const doc = SCENARIOS.map((s) => ({
      name: s.name, checks: s.checks, appliesTo: s.appliesTo, targets: s.targets, negative: s.negative, catches: s.catches ?? [], sim: simApplicability(s),
    }));
    io.out(`${JSON.stringify(doc, null, 2)}\n`);
    return 0;
  }
  const w = Math.max(...SCENARIOS.map((s) => s.name.length));
  const lines: string[] = [];
  for (const s of SCENARIOS) {
    const runs = Object.entries(simApplicability(s)).filter(([, v]) => v === 'runs').map(([k]) => k);
    lines.push(`${s.name.padEnd(w)}  ${s.checks}`);
    lines.push(`${''.padEnd(w)}  applies to: ${s.appliesTo} [sim: ${runs.join(', ') || 'none'}]; targets: ${s.targets.join(', ')}; negative control: --knob ${s.negative}${s.catches?.length ? `; catches --driver-fault ${s.catches.join(', ')}` : ''}`);
  }
  io.out(`${lines.join('\n')}\n\n${SCENARIOS.length} scenarios\n`);
  return 0;
}
