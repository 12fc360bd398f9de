// `ptlab run SCENARIO…|--all [--target sim|qemu|ssh] [--cpu PROFILE|all] [--seed N] [--out DIR]
// [--knob NAME]…`, with `--pt model|hardware --accel auto|tcg|kvm` for qemu and `--host H
// [--port P] [--user U] [--key FILE] [--known-host FILE]` for ssh: one run directory per scenario
// and profile under --out (DIR/<scenario>/<profile>/, DESIGN.md "The run directory"), a
// progress line as each run finishes, a summary table, and DIR/junit.xml.
//
// Targets: `sim` (default) builds a fresh model per run. `qemu` boots ONE guest for the suite:
// `--pt model` makes the reference model its PT unit (reset per run; --cpu profiles as on the
// sim, truth.jsonl and written/dropped from the model); `--pt hardware` (the default) drives the
// guest CPU's PT and refuses, before any scenario, a guest without it (always under TCG). `ssh`
// drives a lab machine's PT. On real PT the profile is the CPU's own ("probed"), so --cpu is
// refused there. Model knobs are sim only: they rewire a SimTarget per run (knobs.ts), and the
// qemu+model target is shown equal to the sim byte for byte (test/runner/qemu-agreement.test.ts),
// so its negative controls are the sim's. Ctrl-C stops after the current run and always stops
// the VM.
//
// `--seeds A-B` sweeps every seed from A to B (the same scenarios and profiles for each): only the
// failed runs keep a directory, under DIR/seed-<S>/<scenario>/<profile>/ (`--keep all` keeps every
// one), progress shows the failures and one line per seed, and the summary is a scenario × profile
// table of failed runs with the failing seeds and the failures per 1,000 runs. `--fail-fast` stops
// at the first failed run.
//
// Without --cpu every model profile runs (a scenario that does not apply to a profile records a
// "skip" with its reason). Exit 0 when nothing failed, 1 when a verdict is "fail", 2 for bad input
// (then nothing is written), 3 when the target is unavailable or refuses (no QEMU, no image, no
// PT, SSH failed), 130 when interrupted.
import process from 'node:process';
import { PtError } from '../../../driver/errors.js';
import { driverFault, type DriverFault } from '../../../driver/faults.js';
import type { AccelRequest } from '../../qemu/accel.js';
import type { PtMode } from '../../qemu/qemu-target.js';
import { TargetUnavailableError } from '../../runner/suite-target.js';
import { checkProfile, checkTarget, type TargetReach } from '../../runner/targets.js';
import type { KeepRuns } from '../../runner/run-scenario.js';
import { runSuite, type SuitePlan } from '../../runner/suite.js';
import { knob, type KnobName } from '../../sim/knobs/knobs.js';
import { capsOf, getProfile, PROFILE_NAMES, type ProfileName } from '../../sim/profiles.js';
import { findScenario, SCENARIOS } from '../../scenarios/index.js';
import type { Scenario, TargetKind } from '../../scenarios/scenario.js';
import type { ResultJson } from '../../report/result.js';
import { progressLine, summaryTable, sweepTable } from '../../report/summary.js';
import { OutputClosedError } from '../fd-sink.js';
import type { CliIo } from '../main.js';

const USAGE = [
  'usage: ptlab run SCENARIO…|--all [--target sim|qemu|ssh] [--cpu PROFILE|all] [--seed N | --seeds A-B] [--out DIR]',
  '         [--keep all|failed] [--fail-fast] [--force] [--knob NAME]… [--driver-fault NAME]…',
  '         --out must be new or empty; --force replaces an earlier run\'s directories there (never other files)',
  '         qemu: [--pt hardware|model] [--accel auto|tcg|kvm]',
  '         ssh:  --host H [--port P] [--user U] [--key FILE] [--known-host FILE]',
].join('\n');

/** Exit status when the target cannot be used (launch/connect failed, no PT). */
export const EXIT_TARGET_UNAVAILABLE = 3;
/** Exit status after Ctrl-C (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130;

/** `./runs/<timestamp>` (UTC, file-name safe). */
export function defaultOut(now = new Date()): string {
  return `runs/${now.toISOString().replace(/[:.]/g, '-')}`;
}

/** Options that belong to one target kind only. */
const QEMU_OPTS = ['--pt', '--accel'], SSH_OPTS = ['--host', '--port', '--user', '--key', '--known-host'];

/** Parses and validates the command line into a plan; throws PtError('bad_config') with a clear message. */
export function parseRunArgs(argv: string[], now = new Date()): SuitePlan {
  const names: string[] = [];
  const knobs: KnobName[] = [];
  const driverFaults: DriverFault[] = [];
  const given = new Map<string, string>();
  let all = false, target = 'sim', cpu: string | undefined, seed: number | undefined, out: string | undefined;
  let seeds: { from: number; to: number } | undefined, keep: KeepRuns | undefined, failFast = false, force = false;
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
      case '--driver-fault': driverFaults.push(driverFault(value(++i, a))); break;
      case '--seed': seed = seedOf(value(++i, a), a); break;
      case '--seeds': {
        const v = value(++i, a);
        const m = /^(\d+)-(\d+)$/.exec(v);
        if (!m) throw new PtError('bad_config', `--seeds takes a range A-B (e.g. 1-200), got '${v}'`);
        seeds = { from: seedOf(m[1]!, a), to: seedOf(m[2]!, a) };
        if (seeds.to < seeds.from) throw new PtError('bad_config', `--seeds ${v}: the range ends before it starts`);
        break;
      }
      case '--keep': {
        const v = value(++i, a);
        if (v !== 'all' && v !== 'failed') throw new PtError('bad_config', `--keep must be all or failed, got '${v}'`);
        keep = v;
        break;
      }
      case '--fail-fast': failFast = true; break;
      case '--force': force = true; break;
      default:
        if ([...QEMU_OPTS, ...SSH_OPTS].includes(a)) { given.set(a, value(++i, a)); break; }
        if (a.startsWith('-')) throw new PtError('bad_config', `unknown option '${a}'`);
        names.push(a);
    }
  }
  if (all && names.length) throw new PtError('bad_config', 'give scenario names or --all, not both');
  if (seed !== undefined && seeds !== undefined) throw new PtError('bad_config', 'give --seed N or --seeds A-B, not both');
  if (!all && !names.length) throw new PtError('bad_config', 'no scenario given (name one or more, or --all; see ptlab list)');
  const kind = checkTarget(target);
  const reach = reachOf(kind, given);
  if (knobs.length && kind !== 'sim') {
    throw new PtError('bad_config', `--knob is a negative control of the sim target only (the qemu model equals the sim byte for byte); run it with --target sim`);
  }
  const modelCpu = kind === 'sim' || (reach?.kind === 'qemu' && reach.pt === 'model');
  if (!modelCpu && cpu !== undefined) {
    throw new PtError('bad_config', `--cpu chooses a model profile; --target ${kind}${kind === 'qemu' ? ' --pt hardware' : ''} runs on the CPU's own PT (use --pt model for model profiles)`);
  }
  const scenarios: Scenario[] = all ? [...SCENARIOS] : names.map(findScenario);
  const profiles: ProfileName[] = cpu === undefined || cpu === 'all' ? [...PROFILE_NAMES] : [checkProfile(cpu)];
  // A named scenario on one named profile that it cannot run on is a usage error, not a silent skip.
  if (!all && cpu !== undefined && cpu !== 'all') {
    const p = getProfile(profiles[0]!);
    for (const s of scenarios) {
      const why = s.skip({ target: kind, profile: p, caps: capsOf(p), seed: seeds?.from ?? seed ?? 1 });
      if (why !== undefined) throw new PtError('bad_config', `scenario ${s.name} does not run on --cpu ${p.name}: ${why}`);
    }
  }
  return {
    scenarios, target: kind, profiles, seed: seeds?.from ?? seed ?? 1, ...(seeds ? { lastSeed: seeds.to } : {}),
    out: out ?? defaultOut(now), knobs, ...(keep ? { keep } : {}), ...(failFast ? { failFast } : {}), ...(force ? { force } : {}), ...(driverFaults.length ? { driverFaults } : {}), ...(reach ? { reach } : {}) };
}

/** Progress of a sweep: every failed run as it happens, and one line as each seed is done. */
function sweepProgress(io: CliIo, plan: SuitePlan): (r: ResultJson, i: number, n: number, ms: number) => void {
  let failed = 0, seedRuns = 0, seedFailed = 0, seedMs = 0;
  const perSeed = plan.scenarios.length * plan.profiles.length;
  return (r, i, n, ms) => {
    seedRuns++; seedMs += ms;
    if (r.verdict === 'fail') { failed++; seedFailed++; io.out(progressLine(r, i, n, ms, true)); }
    if (seedRuns < perSeed && i < n) return;
    io.out(`seed ${r.seed}: ${seedRuns} runs, ${seedFailed} failed, ${(seedMs / 1000).toFixed(1)} s (${i}/${n} runs made, ${failed} failed so far)`);
    seedRuns = 0; seedFailed = 0; seedMs = 0;
  };
}

/** A seed from the command line: an integer 0..2^32−1. */
function seedOf(v: string, opt: string): number {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) > 0xffff_ffff) throw new PtError('bad_config', `${opt} must be an integer 0..4294967295, got '${v}'`);
  return Number(v);
}

/** The qemu/ssh connection options of `kind` from `given`; options of another target are refused. */
function reachOf(kind: TargetKind, given: ReadonlyMap<string, string>): TargetReach | undefined {
  const foreign = [...given.keys()].filter((o) => !(kind === 'qemu' ? QEMU_OPTS : kind === 'ssh' ? SSH_OPTS : []).includes(o));
  if (foreign.length) throw new PtError('bad_config', `${foreign.join(', ')} ${foreign.length > 1 ? 'do' : 'does'} not apply to --target ${kind}`);
  if (kind === 'qemu') {
    const pt = given.get('--pt') ?? 'hardware', accel = given.get('--accel') ?? 'auto';
    if (pt !== 'hardware' && pt !== 'model') throw new PtError('bad_config', `--pt must be hardware or model, got '${pt}'`);
    if (accel !== 'auto' && accel !== 'tcg' && accel !== 'kvm') throw new PtError('bad_config', `--accel must be auto, tcg or kvm, got '${accel}'`);
    return { kind: 'qemu', pt: pt as PtMode, accel: accel as AccelRequest };
  }
  if (kind === 'ssh') {
    const host = given.get('--host');
    if (host === undefined) throw new PtError('bad_config', '--target ssh needs --host H');
    const portText = given.get('--port');
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && (!/^\d+$/.test(portText!) || port < 1 || port > 65535)) throw new PtError('bad_config', `--port must be 1..65535, got '${portText}'`);
    const user = given.get('--user'), key = given.get('--key'), knownHost = given.get('--known-host');
    return {
      kind: 'ssh', host, ...(port === undefined ? {} : { port }), ...(user === undefined ? {} : { user }),
      ...(key === undefined ? {} : { key }), ...(knownHost === undefined ? {} : { knownHost }),
    };
  }
  return undefined;
}

/** `ptlab run`. */
export async function runCommand(argv: string[], cli: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { cli.out(USAGE); return 0; }
  // A reader of stdout that goes away (`ptlab run --all | head`) does not stop the suite: its run
  // directories, junit.xml and exit status still say what happened.
  const io: CliIo = { err: (s) => cli.err(s), out: (s) => { try { cli.out(s); } catch (e) { if (!(e instanceof OutputClosedError)) throw e; } } };
  let plan: SuitePlan;
  try {
    plan = parseRunArgs(argv);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(`ptlab run: ${e.message}\n${USAGE}`);
    return 2;
  }
  const where = plan.reach?.kind === 'qemu' ? `qemu (--pt ${plan.reach.pt}, --accel ${plan.reach.accel})` : plan.reach?.kind === 'ssh' ? `ssh:${plan.reach.host}` : plan.target;
  const profiles = plan.reach && !(plan.reach.kind === 'qemu' && plan.reach.pt === 'model') ? 'the CPU\'s own profile' : `${plan.profiles.length} profile(s)`;
  const sweep = plan.lastSeed !== undefined;
  const seedsText = sweep ? `seeds ${plan.seed}-${plan.lastSeed}` : `seed ${plan.seed}`;
  io.out(`ptlab run: ${plan.scenarios.length} scenario(s) × ${profiles} on ${where}, ${seedsText}${plan.knobs?.length ? `, knobs ${plan.knobs.join(',')}` : ''} → ${plan.out}`);
  // Ctrl-C: stop after the current run; the suite disposes the target (stops the VM) on its way out.
  // A second Ctrl-C exits at once (execa's exit hook still kills QEMU). The listener stays on for the
  // whole suite: with no listener of ours, execa's signal-exit hook would re-raise SIGINT and kill
  // the process before the VM is disposed.
  const stop = new AbortController();
  const onSigint = (): void => {
    if (stop.signal.aborted) {
      io.err('ptlab run: interrupted again; exiting now');
      process.exit(EXIT_INTERRUPTED);
    }
    io.err('ptlab run: interrupted; stopping after the current run (Ctrl-C again to exit at once)');
    stop.abort(new Error('SIGINT'));
  };
  process.on('SIGINT', onSigint);
  let results;
  try {
    results = await runSuite(plan, {
      progress: sweep ? sweepProgress(io, plan) : (r, i, total, ms) => io.out(progressLine(r, i, total, ms)),
      opened: (t) => { if (t.kind !== 'sim') io.out(`ptlab run: ${t.description} is ready`); },
      signal: stop.signal,
    });
  } catch (e) {
    if (e instanceof TargetUnavailableError) {
      io.err(`ptlab run: cannot use the target: ${e.message}${e.hint ? `\nptlab run: ${e.hint}` : ''}`);
      return EXIT_TARGET_UNAVAILABLE;
    }
    if (e instanceof PtError && e.code === 'aborted' && stop.signal.aborted) {
      io.err(`ptlab run: ${e.message}; run directories so far and junit.xml are in ${plan.out}`);
      return EXIT_INTERRUPTED;
    }
    if (!(e instanceof PtError) || e.code !== 'bad_config') throw e;
    io.err(`ptlab run: ${e.message}`);
    return 2;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
  const kept = sweep ? `${plan.out}/seed-<S>/<scenario>/<profile>/${(plan.keep ?? 'failed') === 'failed' ? ' (failed runs only)' : ''}` : `${plan.out}/<scenario>/<profile>/`;
  io.out(`\n${sweep ? sweepTable(results) : summaryTable(results)}run directories: ${kept}, junit: ${plan.out}/junit.xml`);
  return results.some((r) => r.verdict === 'fail') ? 1 : 0;
}
