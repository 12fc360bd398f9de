// `ptlab list [--json]`: every scenario, what it checks, where it applies
// (per sim profile: runs, or the skip reason) and its negative-control knob.
import { capsOf, PROFILE_NAMES, PROFILES } from '../../sim/profiles.js';
import { SCENARIOS } from '../../scenarios/index.js';
import type { Scenario } from '../../scenarios/kit/scenario.js';
import type { CliIo } from '../main.js';
import { KNOB_NAMES, KNOBS } from '../../sim/knobs/knobs.js';
import { DRIVER_FAULT_NAMES, DRIVER_FAULTS } from '../../../driver/faults.js';

const USAGE = 'usage: ptlab list [--knobs] [--json]\n' +
  '  the scenarios; --knobs: the model knobs and driver faults, what each breaks and the scenarios that catch it';

/** Every model knob and driver fault: what it breaks, and the scenarios whose verdict it turns to FAIL. */
export function knobTable(): { kind: 'knob' | 'driver-fault'; name: string; breaks: string; caughtBy: string[] }[] {
  return [
    ...KNOB_NAMES.map((k) => ({ kind: 'knob' as const, name: k, breaks: KNOBS[k].summary, caughtBy: SCENARIOS.filter((s) => s.negative === k).map((s) => s.name) })),
    ...DRIVER_FAULT_NAMES.map((f) => ({ kind: 'driver-fault' as const, name: f, breaks: DRIVER_FAULTS[f], caughtBy: SCENARIOS.filter((s) => s.catches?.includes(f)).map((s) => s.name) })),
  ];
}

/** Where `s` runs on the sim target: profile → "runs" or the skip reason. */
export function simApplicability(s: Scenario, seed = 1): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of PROFILE_NAMES) {
    const profile = PROFILES[p];
    const why = s.targets.includes('sim') ? s.skip({ target: 'sim', ptUnit: 'model', profile, caps: capsOf(profile), seed }) : 'not on the sim target';
    out[p] = why ?? 'runs';
  }
  return out;
}

/** `ptlab list`. */
export async function listCommand(argv: string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { io.out(USAGE); return 0; }
  const bad = argv.find((a) => a !== '--json' && a !== '--knobs');
  if (bad !== undefined) {
    io.err(`ptlab list: unexpected argument '${bad}'\n${USAGE}`);
    return 2;
  }
  if (argv.includes('--knobs')) {
    const rows = knobTable();
    if (argv.includes('--json')) { io.out(`${JSON.stringify(rows, null, 2)}\n`); return 0; }
    const w = Math.max(...rows.map((r) => r.name.length + (r.kind === 'knob' ? 7 : 15)));
    const lines = rows.map((r) => `${`${r.kind === 'knob' ? '--knob' : '--driver-fault'} ${r.name}`.padEnd(w)}  ${r.breaks}\n${''.padEnd(w)}  caught by: ${r.caughtBy.join(', ') || '(no scenario names it as its control)'}`);
    io.out(`${lines.join('\n')}\n\n${KNOB_NAMES.length} model knobs (a model kinder or crueller than the SDM: the scenario must FAIL), ${DRIVER_FAULT_NAMES.length} driver faults (a wrong driver: the scenario must FAIL)\n`);
    return 0;
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
