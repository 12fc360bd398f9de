// `ptlab replay RUN_DIR [--target sim|qemu|ssh …] [--cpu PROFILE] [--knob NAME]… [--out DIR] [--json]`:
// issues a recorded run's target operations again on another target — MSRs, CPUID, allocations (by
// role), ToPA and other writes, XSAVES/XRSTORS, workload starts and their events — and reports the
// first operation whose result differs, with the operations around it (harness/replay/,
// docs/replay.md). Exit 0: no divergence; 1: a divergence; 2: bad usage or a run that cannot be
// replayed; 3: the target is unavailable; 129/130/143 stopped by a signal (the target disposed of).
import { PtError } from '../../../driver/base/errors.js';
import { NotReplayableError } from '../../replay/errors.js';
import { replayRunDir, type ReplayReport } from '../../replay/replay-run.js';
import { openSuiteTarget, TargetUnavailableError } from '../../runner/suite-target.js';
import { checkProfile, checkTarget } from '../../runner/targets.js';
import { knob } from '../../sim/knobs/knobs.js';
import { commandArgs, parseCommandLine, usageErrorText, UsageError } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { StopOnSignal } from '../stop-signals.js';
import type { CliIo } from '../main.js';
import { targetReachOf } from './run.js';
import { prepareOut, unprepareOut } from '../../report/out-dir.js';

export const REPLAY_USAGE = [
  'usage: ptlab replay RUN_DIR [--target sim|qemu|ssh] [--cpu PROFILE] [--past-cpuid] [--knob NAME]… [--out DIR] [--json]',
  '         qemu: [--pt model|hardware] [--accel auto|tcg|kvm]; ssh: --host H [--port P] [--user U] [--key FILE] [--known-host FILE]',
  '  issues RUN_DIR\'s transcript again on the target (buffers matched by role, so physical addresses may',
  '  differ) and stops at the first operation whose result differs: a value, a fault or an event.',
  '  --cpu: the model profile (default: the recorded run\'s); --knob: model knobs of the replay (sim only)',
  '  --past-cpuid: go on past CPUID results that differ (another profile\'s by design), each listed, to the first other difference',
  '  --out DIR: write the replay\'s transcript.jsonl and replay.json there (a new or empty directory on a disk)',
  '  exit 0: no divergence; 1: a divergence; 2: bad usage or not replayable; 3: target unavailable; 129/130/143: a signal',
  '',
].join('\n');

const OPTIONS = {
  target: { type: 'string' }, cpu: { type: 'string' }, 'past-cpuid': { type: 'boolean' }, knob: { type: 'string', multiple: true }, out: { type: 'string' }, json: { type: 'boolean' },
  pt: { type: 'string' }, accel: { type: 'string' },
  host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' }, key: { type: 'string' }, 'known-host': { type: 'string' },
} as const;

function replayArgs(argv: string[]) {
  const { values: v, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help' as const;
  if (positionals.length !== 1) throw new UsageError(`one run directory to replay, got ${positionals.length}`);
  const kind = checkTarget(v.target ?? 'sim');
  const reach = targetReachOf(kind, v);
  const knobs = (v.knob ?? []).map(knob);
  if (knobs.length && kind !== 'sim') throw new UsageError('--knob is a model knob of the sim target only');
  const modelCpu = kind === 'sim' || (reach?.kind === 'qemu' && reach.pt === 'model');
  if (v.cpu !== undefined && !modelCpu) throw new UsageError(`--cpu chooses a model profile; --target ${kind} replays on the CPU's own PT`);
  return {
    dir: positionals[0]!, kind, reach, knobs, json: v.json === true, pastCpuid: v['past-cpuid'] === true,
    ...(v.cpu === undefined ? {} : { profile: checkProfile(v.cpu) }), ...(v.out === undefined ? {} : { out: v.out }),
  };
}

/** The report as text: the verdict, and at a divergence the step on both sides with the lines before it. */
export function replayText(r: ReplayReport): string {
  const head = `ptlab replay ${r.run} (${r.scenario}, ${r.profile}, seed ${r.seed}) on ${r.target}${r.knobs.length ? ` with knobs ${r.knobs.join(',')}` : ''}`;
  const d = r.divergence;
  // CPUID results gone past (--past-cpuid): what differs at each, after the verdict on the rest.
  const cpuid = (r.cpuid ?? []).flatMap((c) => [`  CPUID gone past at line ${c.line}:`, ...c.fields.map((f) => `           ${f}`)]);
  const past = r.cpuid?.length ? `, past ${r.cpuid.length} CPUID results that differ` : '';
  if (!d) return [`${head}: no divergence (${r.lines} transcript lines replayed${past})`, ...cpuid].join('\n');
  // A replay on another profile meets that profile's CPUID first: say how to look past it.
  const hint = d.op === 'cpuid' && r.profile !== r.recordedProfile
    ? [`  (${r.profile} is not the recorded ${r.recordedProfile}: its CPUID differs by design; --past-cpuid goes on to the first other difference)`] : [];
  return [
    `${head}: DIVERGES at transcript line ${d.line} (${d.op}, ${d.kind}${d.rule ? `, rule ${d.rule}` : ''}) after ${r.equalLines} equal lines of ${r.lines}${past}`,
    ...d.before.map((l) => `           ${l}`),
    ...d.recorded.map((l, i) => `  ${i === 0 ? 'recorded' : '        '} ${l}`),
    ...(d.replayed.length ? d.replayed.map((l, i) => `  ${i === 0 ? 'replayed' : '        '} ${l}`) : ['  replayed (nothing: the operation made no line, or the execution ended)']),
    ...d.fields.map((f) => `  fields   ${f}`),
    ...d.after.map((l) => `   (next)  ${l}`),
    ...hint,
    ...cpuid,
  ].join('\n');
}

export async function replayCommand(argv: string[], io: CliIo): Promise<number> {
  let args;
  try {
    args = commandArgs('replay', REPLAY_USAGE, io, () => replayArgs(argv));
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(usageErrorText('replay', e.message));
    return EXIT.usage;
  }
  if (typeof args === 'number') return args;
  // --out before anything else: new or empty, on a disk (never the recording itself, nor a device).
  let created: string | undefined;
  try {
    if (args.out !== undefined) created = await prepareOut(args.out);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(`ptlab replay: ${e.message}`);
    return EXIT.usage;
  }
  using stop = new StopOnSignal(io, 'replay', 'stopping and disposing of the target');
  const signal = stop.signal;
  let on;
  try {
    on = await openSuiteTarget(args.kind, args.reach, signal);
  } catch (e) {
    if (args.out !== undefined) await unprepareOut(args.out, created);
    if (stop.status !== undefined) return stop.status;
    io.err(`ptlab replay: ${(e as Error).message}${e instanceof TargetUnavailableError && e.hint ? `\n${e.hint}` : ''}`);
    return e instanceof TargetUnavailableError ? EXIT.unavailable : EXIT.usage;
  }
  let wrote = false;
  try {
    const r = await replayRunDir(args.dir, on, { knobs: args.knobs, signal, pastCpuid: args.pastCpuid, ...(args.profile ? { profile: args.profile } : {}), ...(args.out ? { out: args.out } : {}) });
    wrote = true;
    io.out(args.json ? JSON.stringify(r) : replayText(r));
    return r.equal ? EXIT.ok : EXIT.failed;
  } catch (e) {
    if (stop.status !== undefined) {
      io.err(`ptlab replay: interrupted: ${(e as Error).message}`);
      return stop.status;
    }
    if (e instanceof NotReplayableError || (e instanceof PtError && e.code === 'bad_config') || (e as NodeJS.ErrnoException).code === 'ENOENT') {
      io.err(`ptlab replay: ${(e as Error).message}`);
      return EXIT.usage;
    }
    throw e;
  } finally {
    await on[Symbol.asyncDispose]();
    if (!wrote && args.out !== undefined) await unprepareOut(args.out, created);
  }
}
