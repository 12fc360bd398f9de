// `ptlab run SCENARIO…|--all [--target sim|qemu|ssh] [--cpu PROFILE|all] [--seed N] [--out DIR]
// [--knob NAME]…`, with `--pt model|hardware --accel auto|tcg|kvm` for qemu and `--host H
// [--port P] [--user U] [--key FILE] [--known-host FILE]` for ssh: one run directory per scenario
// and profile under --out (DIR/<scenario>/<profile>/, docs/design.md "The run directory"),
// progress on stderr, a summary table, DIR/junit.xml and DIR/results.jsonl.
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
// one), progress shows the failures and a seed's line when one is due, and the summary is a
// scenario × profile table of failed runs with the failing seeds and the failures per 1,000 runs.
// `--fail-fast` stops at the first failed run.
//
// `--shard i/n` runs shard i of n: cell k of the unsharded order goes to shard ((k mod n) + ⌊k/n⌋) mod n + 1, and
// DIR/shard.json says which shard of which matrix DIR holds; `ptlab merge` joins the shards
// (docs/sharding.md). Progress on a terminal is one live line (runs done, failures, time left);
// elsewhere a bounded number of plain lines (harness/cli/progress.ts).
//
// `--hosts FILE [--tags T1,T2]` runs the suite on every lab machine of an inventory in parallel,
// each under DIR/<host>/ (run-hosts.ts, docs/hosts.md); it replaces --target and the connection
// options.
//
// Without --cpu every model profile runs (a scenario that does not apply to a profile records a
// "skip" with its reason). Exit 0 when nothing failed, 1 when a verdict is "fail" or "corrupt", 2
// for bad input (then nothing is written), 3 when the target is unavailable or refuses (no QEMU, no
// image, no PT, SSH failed), 130 when interrupted.
import { PtError } from '../../../driver/base/errors.js';
import { driverFault, type DriverFault } from '../../../driver/faults.js';
import type { AccelRequest } from '../../qemu/accel.js';
import { TargetUnavailableError } from '../../runner/suite-target.js';
import { checkProfile, checkTarget, type PtMode, type TargetReach } from '../../runner/targets.js';
import type { KeepRuns } from '../../runner/run-scenario.js';
import { interruptedBeforeRuns, runSuite, type SuiteOutcome, type SuitePlan } from '../../runner/suite.js';
import { knob, type KnobName } from '../../sim/knobs/knobs.js';
import { capsOf, getProfile, PROFILE_NAMES, type ProfileName } from '../../sim/profiles.js';
import { findScenario, SCENARIOS } from '../../scenarios/index.js';
import type { Scenario, TargetKind } from '../../scenarios/kit/scenario.js';
import { isFailure } from '../../rundir/result.js';
import { summaryTable, sweepTable, verdictCounts } from '../../report/summary.js';
import { RESULTS_FILE } from '../../rundir/results-index.js';
import type { ShardSpec } from '../../runner/shard.js';
import { listValues, parseCommandLine, usageErrorText, UsageError, type OptionSpec } from '../args.js';
import { EXIT, EXIT_TABLE, STOP_SIGNALS, type StopSignal } from '../exit-codes.js';
import { OutputClosedError } from '../fd-sink.js';
import type { CliIo } from '../main.js';
import { suiteProgress } from '../progress.js';
import { writeReportAfter } from '../suite-report.js';
import { hostsRequestOf, runHostsCommand, type HostsRequest, type HostsRunRequest } from './run-hosts.js';
import { REALISM_MODES, type RealismMode } from '../../sim/realism.js';

const USAGE = [
  'usage: ptlab run SCENARIO…|--all [--target sim|qemu|ssh] [--cpu PROFILE[,PROFILE…]|all]… [--seed N | --seeds A-B] [--out DIR]',
  '         [--keep all|failed] [--fail-fast] [--force] [--json] [--max-target-failures N] [--knob NAME]… [--driver-fault NAME]…',
  '         [--shard i/n]   run shard i of n (cells dealt in blocks of n, each block rotated: docs/sharding.md); join shards with ptlab merge',
  '         [--jobs N]      run N cells at once: worker threads on the sim, N VMs on qemu, N sessions on ssh; same run directories as --jobs 1',
  '         progress goes to stderr; --json prints one JSON document (counts, every run\'s verdict) on stdout',
  '         the suite stops after N runs ended in a target failure (default 3), or at once when the target dies',
  '         --out must be new or empty; --force replaces an earlier run\'s directories there (never other files)',
  '         qemu: [--pt hardware|model] [--accel auto|tcg|kvm]',
  '         ssh:  --host H [--port P] [--user U] [--key FILE] [--known-host FILE]',
  '               [--cpus 2,3]  the machine\'s CPUs the runs trace on, one per --jobs lane (default: every CPU but 0)',
  '         [--realism frozen|lab]  the model as a lab machine (lab): it runs on while a remote handler works,',
  '                         other code runs around the workload, perf may unmask LVTPC (docs/design.md "Realism")',
  '         [--reclaim]     on real PT (qemu --pt hardware, ssh): take the CPU back when someone else traces on it',
  '                         (their trace is lost; said on stderr and in each run); without it such a CPU is refused (exit 3)',
  '         --hosts FILE [--tags T1,T2]   every lab machine of an inventory (or those with any of the tags) in parallel, under DIR/<host>/',
].join('\n');


/** `./runs/<timestamp>` (UTC, file-name safe). */
export function defaultOut(now = new Date()): string {
  return `runs/${now.toISOString().replace(/[:.]/g, '-')}`;
}

/** Options that belong to one target kind only. */
const QEMU_OPTS = ['--pt', '--accel'], SSH_OPTS = ['--host', '--port', '--user', '--key', '--known-host', '--cpus'];

/** `ptlab run`'s options (parseArgs: `--opt value` and `--opt=value`). */
export const RUN_OPTIONS = {
  all: { type: 'boolean' }, target: { type: 'string' }, cpu: { type: 'string', multiple: true }, out: { type: 'string' },
  knob: { type: 'string', multiple: true }, 'driver-fault': { type: 'string', multiple: true },
  seed: { type: 'string' }, seeds: { type: 'string' }, keep: { type: 'string' },
  'fail-fast': { type: 'boolean' }, force: { type: 'boolean' }, json: { type: 'boolean' }, 'max-target-failures': { type: 'string' },
  pt: { type: 'string' }, accel: { type: 'string' },
  host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' }, key: { type: 'string' }, 'known-host': { type: 'string' }, cpus: { type: 'string' },
  hosts: { type: 'string' }, tags: { type: 'string' },
  shard: { type: 'string' }, jobs: { type: 'string' }, reclaim: { type: 'boolean' }, realism: { type: 'string' },
} as const satisfies Record<string, OptionSpec>;

/**
 * The most runs one suite makes: its cells, results and index are held in memory (a sweep's passing
 * run in about 200 bytes), so a range of a billion seeds is refused before anything is allocated.
 * 200 seeds of the whole catalogue on every profile is about 61,000.
 */
export const MAX_SUITE_RUNS = 2_000_000;

/** What `ptlab run` was asked for: the suite, and how to report it. */
export interface RunRequest extends SuitePlan {
  /** Print one JSON document on stdout (progress still goes to stderr). */
  readonly json?: boolean;
  /** `--hosts FILE [--tags …]`: the suite on every selected machine of the inventory (run-hosts.ts). */
  readonly hosts?: HostsRequest;
}

/** Parses and validates the command line into a plan; throws PtError('bad_config') (a UsageError) with a clear message. */
export function parseRunArgs(argv: string[], now = new Date()): RunRequest {
  const { values: v, positionals } = parseCommandLine(argv, RUN_OPTIONS);
  // Scenarios, --cpu, --knob and --driver-fault take repeats and comma lists alike; none is dropped.
  const names = listValues(positionals), cpus = listValues(v.cpu);
  const all = v.all === true, target = v.target ?? 'sim', out = v.out;
  const cpu = cpus.length === 0 ? undefined : cpus.includes('all') ? 'all' : cpus;
  const knobs: KnobName[] = listValues(v.knob).map(knob);
  const driverFaults: DriverFault[] = listValues(v['driver-fault']).map(driverFault);
  const seed = v.seed === undefined ? undefined : seedOf(v.seed, '--seed');
  let seeds: { from: number; to: number } | undefined;
  if (v.seeds !== undefined) {
    const m = /^(\d+)-(\d+)$/.exec(v.seeds);
    if (!m) throw new PtError('bad_config', `--seeds takes a range A-B (e.g. 1-200), got '${v.seeds}'`);
    seeds = { from: seedOf(m[1]!, '--seeds'), to: seedOf(m[2]!, '--seeds') };
    if (seeds.to < seeds.from) throw new PtError('bad_config', `--seeds ${v.seeds}: the range ends before it starts`);
  }
  if (v.keep !== undefined && v.keep !== 'all' && v.keep !== 'failed') throw new PtError('bad_config', `--keep must be all or failed, got '${v.keep}'`);
  const keep = v.keep as KeepRuns | undefined, failFast = v['fail-fast'] === true, force = v.force === true;
  const maxText = v['max-target-failures'];
  if (maxText !== undefined && (!/^\d+$/.test(maxText) || Number(maxText) < 1)) throw new PtError('bad_config', `--max-target-failures must be a whole number ≥ 1, got '${maxText}'`);
  const shard = v.shard === undefined ? undefined : shardOf(v.shard);
  const jobs = v.jobs === undefined ? undefined : jobsOf(v.jobs);
  if (all && names.length) throw new PtError('bad_config', 'give scenario names or --all, not both');
  if (seed !== undefined && seeds !== undefined) throw new PtError('bad_config', 'give --seed N or --seeds A-B, not both');
  if (!all && !names.length) throw new PtError('bad_config', 'no scenario given (name one or more, or --all; see ptlab list)');
  const hosts = hostsRequestOf(v);
  // An inventory's machines are all ssh targets, each with its own reach (docs/hosts.md).
  const kind = hosts ? 'ssh' : checkTarget(target);
  const reach = withReclaim(hosts ? undefined : targetReachOf(kind, v), v.reclaim === true, kind);
  if (knobs.length && kind !== 'sim') {
    throw new PtError('bad_config', `--knob is a negative control of the sim target only (the qemu model equals the sim byte for byte); run it with --target sim`);
  }
  // With --hosts, --cpu chooses the profiles of the `pt: model` machines (docs/hosts.md).
  const modelCpu = kind === 'sim' || hosts !== undefined || (reach?.kind === 'qemu' && reach.pt === 'model');
  const realism = v.realism === undefined ? undefined : realismMode(v.realism);
  if (realism !== undefined && !modelCpu) throw new PtError('bad_config', `--realism sets how the model behaves; --target ${kind}${kind === 'qemu' ? ' --pt hardware' : ''} runs on real PT`);
  if (!modelCpu && cpu !== undefined) {
    throw new PtError('bad_config', `--cpu chooses a model profile; --target ${kind}${kind === 'qemu' ? ' --pt hardware' : ''} runs on the CPU's own PT (use --pt model for model profiles)`);
  }
  const scenarios: Scenario[] = all ? [...SCENARIOS] : names.map(findScenario);
  const profiles: ProfileName[] = cpu === undefined || cpu === 'all' ? [...PROFILE_NAMES] : cpu.map(checkProfile);
  const runs = ((seeds?.to ?? 0) - (seeds?.from ?? 0) + 1) * scenarios.length * profiles.length;
  if (runs > MAX_SUITE_RUNS) {
    throw new PtError('bad_config', `the suite would make ${runs.toLocaleString('en-US')} runs (seeds × scenarios × profiles); one suite makes at most ${MAX_SUITE_RUNS.toLocaleString('en-US')}: take a smaller --seeds range (run the rest as suites of their own)`);
  }
  // A named scenario on one named profile that it cannot run on is a usage error, not a silent skip.
  if (!all && cpu !== undefined && cpu !== 'all' && cpu.length === 1) {
    const p = getProfile(profiles[0]!);
    for (const s of scenarios) {
      // --cpu names a model profile (checked above): the model is the PT unit.
      const why = s.skip({ target: kind, ptUnit: 'model', profile: p, caps: capsOf(p), seed: seeds?.from ?? seed ?? 1 });
      if (why !== undefined) throw new PtError('bad_config', `scenario ${s.name} does not run on --cpu ${p.name}: ${why}`);
    }
  }
  return {
    scenarios, target: kind, profiles, seed: seeds?.from ?? seed ?? 1, ...(seeds ? { lastSeed: seeds.to } : {}),
    out: out ?? defaultOut(now), knobs, ...(keep ? { keep } : {}), ...(failFast ? { failFast } : {}), ...(force ? { force } : {}), ...(driverFaults.length ? { driverFaults } : {}), ...(reach ? { reach } : {}),
    ...(maxText !== undefined ? { maxTargetFailures: Number(maxText) } : {}), ...(v.json === true ? { json: true } : {}), ...(shard ? { shard } : {}), ...(hosts ? { hosts } : {}),
    ...(jobs !== undefined && jobs > 1 ? { jobs } : {}), ...(realism !== undefined && realism !== 'frozen' ? { realism } : {}) };
}

/** `--jobs N`: cells run at once, 1..64 (docs/parallel.md). */
export function jobsOf(text: string): number {
  const n = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_JOBS)) throw new UsageError(`--jobs takes a whole number 1..${MAX_JOBS}, got '${text}'`);
  return n;
}

/** More lanes than this is a typo, not a lab: each qemu lane is a VM. */
const MAX_JOBS = 64;

/** `--shard i/n`: whole numbers with 1 ≤ i ≤ n. */
export function shardOf(text: string): ShardSpec {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(text);
  const index = Number(m?.[1]), count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count) throw new UsageError(`--shard takes i/n with 1 ≤ i ≤ n (e.g. 2/8), got '${text}'`);
  return { index, count };
}

/** A seed from the command line: an integer 0..2^32−1. */
function seedOf(v: string, opt: string): number {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) > 0xffff_ffff) throw new PtError('bad_config', `${opt} must be an integer 0..4294967295, got '${v}'`);
  return Number(v);
}

/** The qemu/ssh connection options of `kind` from parsed options `v` (run, replay); options of another target are refused. */
export function targetReachOf(kind: TargetKind, v: Readonly<Record<string, unknown>>): TargetReach | undefined {
  const given = new Map<string, string>();
  for (const o of [...QEMU_OPTS, ...SSH_OPTS]) {
    const x = v[o.slice(2)];
    if (typeof x === 'string') given.set(o, x);
  }
  return reachOf(kind, given);
}

/**
 * `reach` with `--reclaim` (harness/runner/claim.ts): only where the CPU's own PT is driven — a
 * model's CPUs are fresh for every run, and never anyone else's.
 */
function withReclaim(reach: TargetReach | undefined, reclaim: boolean, kind: TargetKind): TargetReach | undefined {
  if (!reclaim) return reach;
  if (reach === undefined || reach.pt === 'model') {
    throw new PtError('bad_config', `--reclaim takes a real CPU back from another tracer (--target qemu --pt hardware, or --target ssh); --target ${kind}${reach?.pt === 'model' ? ' --pt model' : ''} runs on the model, whose CPUs are fresh for every run`);
  }
  return { ...reach, reclaim: true };
}

/** `--realism`: one of REALISM_MODES. */
function realismMode(v: string): RealismMode {
  if ((REALISM_MODES as readonly string[]).includes(v)) return v as RealismMode;
  throw new PtError('bad_config', `--realism must be ${REALISM_MODES.join(' or ')}, got '${v}'`);
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
    if (host.trim() === '' || /\s/.test(host)) throw new PtError('bad_config', `--host must name a machine (a host name or an address), got '${host}'`);
    const portText = given.get('--port');
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && (!/^\d+$/.test(portText!) || port < 1 || port > 65535)) throw new PtError('bad_config', `--port must be 1..65535, got '${portText}'`);
    const user = given.get('--user'), key = given.get('--key'), knownHost = given.get('--known-host');
    const cpusText = given.get('--cpus');
    const cpus = cpusText === undefined ? undefined : cpusText.split(',').map((c) => {
      if (!/^\d{1,4}$/.test(c)) throw new PtError('bad_config', `--cpus takes CPU numbers separated by commas (e.g. 2,3), got '${cpusText}'`);
      return Number(c);
    });
    return {
      kind: 'ssh', host, ...(port === undefined ? {} : { port }), ...(user === undefined ? {} : { user }),
      ...(key === undefined ? {} : { key }), ...(knownHost === undefined ? {} : { knownHost }), ...(cpus === undefined ? {} : { cpus }),
    };
  }
  return undefined;
}

/** One run in `ptlab run --json`: its identity, verdict and reason; the details are in its result.json. */
interface JsonRun {
  readonly scenario: string;
  readonly target: string;
  readonly profile: string;
  readonly seed: number;
  readonly verdict: string;
  readonly reason?: string;
}

/** The exit status of a finished suite: a signal's, "incomplete", "a verdict failed", or success. */
function exitOf(outcome: SuiteOutcome, signal: StopSignal | undefined): number {
  if (signal !== undefined) return STOP_SIGNALS[signal];
  // Someone else traces on the CPU: the target could not be used (harness/runner/claim.ts).
  if (outcome.incomplete?.cause === 'cpu-busy') return EXIT.unavailable;
  if (outcome.incomplete || outcome.junitError || outcome.indexError) return EXIT.incomplete;
  return outcome.results.some((r) => isFailure(r.verdict)) ? EXIT.failed : EXIT.ok;
}

/** Catches the stop signals for the length of a suite: the first stops after the current run, the next stops the target at once. */
class SignalStop {
  readonly soft = new AbortController();
  readonly hard = new AbortController();
  first: StopSignal | undefined;
  private readonly handlers = new Map<StopSignal, () => void>();

  constructor(private readonly io: CliIo) {
    // Our own listeners stay on for the whole suite: without them, execa's signal-exit hook would
    // re-raise the signal and end the process before the VM is disposed.
    for (const sig of Object.keys(STOP_SIGNALS) as StopSignal[]) {
      const h = (): void => this.on(sig);
      this.handlers.set(sig, h);
      process.on(sig, h);
    }
  }

  private on(sig: StopSignal): void {
    if (this.hard.signal.aborted) {
      this.io.err(`ptlab run: ${sig} again while stopping; exiting now`);
      process.exit(STOP_SIGNALS[this.first ?? sig]);
    }
    if (this.soft.signal.aborted) {
      this.io.err(`ptlab run: ${sig}: stopping the target now; the summary and junit.xml follow`);
      this.hard.abort(new Error(sig));
      return;
    }
    this.first = sig;
    this.io.err(`ptlab run: ${sig}: stopping after the current run (again to stop the target at once)`);
    this.soft.abort(new Error(sig));
  }

  [Symbol.dispose](): void {
    for (const [sig, h] of this.handlers) process.removeListener(sig, h);
  }
}

/** `ptlab run`. */
export async function runCommand(argv: string[], cli: CliIo): Promise<number> {
  // A reader of stdout that goes away (`ptlab run --all | head`) does not stop the suite: its run
  // directories, junit.xml and exit status still say what happened.
  const io: CliIo = { err: (s) => cli.err(s), out: (s) => { try { cli.out(s); } catch (e) { if (!(e instanceof OutputClosedError)) throw e; } } };
  let plan: RunRequest;
  try {
    if (argv.includes('--help') || argv.includes('-h')) { io.out(`${USAGE}\n${EXIT_TABLE}`); return EXIT.ok; }
    plan = parseRunArgs(argv);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(usageErrorText('run', e.message));
    return EXIT.usage;
  }
  if (plan.hosts) {
    using hostsStop = new SignalStop(io);
    return await runHostsCommand(plan as HostsRunRequest, io, hostsStop);
  }
  const where = plan.reach?.kind === 'qemu' ? `qemu (--pt ${plan.reach.pt}, --accel ${plan.reach.accel})` : plan.reach?.kind === 'ssh' ? `ssh:${plan.reach.host}` : plan.target;
  const profiles = plan.reach && !(plan.reach.kind === 'qemu' && plan.reach.pt === 'model') ? 'the CPU\'s own profile' : `${plan.profiles.length} profile(s)`;
  const sweep = plan.lastSeed !== undefined;
  const seedsText = sweep ? `seeds ${plan.seed}-${plan.lastSeed}` : `seed ${plan.seed}`;
  // Progress and diagnostics go to stderr; stdout has the summary (or the --json document) only.
  const shardText = plan.shard ? `, shard ${plan.shard.index}/${plan.shard.count}` : '';
  io.err(`ptlab run: ${plan.scenarios.length} scenario(s) × ${profiles} on ${where}, ${seedsText}${shardText}${plan.knobs?.length ? `, knobs ${plan.knobs.join(',')}` : ''} → ${plan.out}`);
  const live = cli.status;
  const progress = suiteProgress({ line: (l) => io.err(l), ...(live ? { status: live } : {}) }, { sweep });
  using stop = new SignalStop(io);
  let outcome: SuiteOutcome;
  try {
    outcome = await runSuite(plan, {
      progress,
      opened: (t) => { if (t.kind !== 'sim') io.err(`ptlab run: ${t.description} is ready`); },
      signal: stop.soft.signal,
      now: stop.hard.signal,
    });
  } catch (e) {
    live?.('');
    if (e instanceof TargetUnavailableError) {
      io.err(`ptlab run: cannot use the target: ${e.message}${e.hint ? `\nptlab run: ${e.hint}` : ''}`);
      return EXIT.unavailable;
    }
    if (e instanceof PtError && e.code === 'aborted' && stop.first !== undefined) {
      // Stopped while the target opened: the suite's files and the summary say so, like any stop.
      outcome = await interruptedBeforeRuns(plan, e);
    } else {
      if (!(e instanceof PtError) || e.code !== 'bad_config') throw e;
      io.err(`ptlab run: ${e.message}`);
      return EXIT.usage;
    }
  }
  live?.('');
  const code = exitOf(outcome, stop.first);
  if (outcome.disposeError) io.err(`ptlab run: stopping the target: ${outcome.disposeError}`);
  if (outcome.junitError) io.err(`ptlab run: cannot write ${plan.out}/junit.xml: ${outcome.junitError}`);
  if (outcome.indexError) io.err(`ptlab run: cannot write ${plan.out}/${RESULTS_FILE}${plan.shard ? ' or shard.json' : ''}: ${outcome.indexError}`);
  if (outcome.incomplete) io.err(`ptlab run: INCOMPLETE: ${outcome.incomplete.reason}`);
  const results = outcome.results;
  const report = await writeReportAfter(plan.out, io, 'run', outcome.sections);
  if (plan.json) {
    const runs: JsonRun[] = results.map((r) => ({ scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, verdict: r.verdict, ...(r.reason === undefined ? {} : { reason: r.reason }) }));
    io.out(JSON.stringify({
      out: plan.out, target: where, seeds: { from: plan.seed, to: plan.lastSeed ?? plan.seed }, ...(plan.shard ? { shard: plan.shard } : {}),
      counts: verdictCounts(results),
      ...(outcome.incomplete ? { incomplete: outcome.incomplete } : {}), exitCode: code, junit: `${plan.out}/junit.xml`, ...(report ? { report } : {}), runs,
    }));
    return code;
  }
  const kept = sweep ? `${plan.out}/seed-<S>/<scenario>/<profile>/${(plan.keep ?? 'failed') === 'failed' ? ' (failed runs only)' : ''}` : `${plan.out}/<scenario>/<profile>/`;
  io.out(`${sweep ? sweepTable(results) : summaryTable(results)}${outcome.incomplete ? `INCOMPLETE: ${outcome.incomplete.reason}\n` : ''}run directories: ${kept}, junit: ${plan.out}/junit.xml` +
    (report ? `\nreport: ${report}` : '') +
    (plan.shard ? `\nshard ${plan.shard.index}/${plan.shard.count} of the matrix (${plan.out}/shard.json): join all ${plan.shard.count} with ptlab merge` : ''));
  return code;
}
