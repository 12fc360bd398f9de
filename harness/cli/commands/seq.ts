// `ptlab seq FILE… [--target sim|qemu|ssh] [--cpu PROFILE] [--seed N] [--out DIR] [--force]`, with
// `--pt model|hardware --accel auto|tcg|kvm` for qemu, `--host H [--port P] [--user U] [--key FILE]
// [--known-host FILE]` for ssh (the options and suite targets of `ptlab run`), and `--allow-msr`:
// runs sequence files (docs/formats/seq.md) and writes one run directory per file under --out
// (DIR/<sequence>/), with DIR/junit.xml. Every file is read and checked for the target before
// anything runs: a bad file, a `flow: truth` the target cannot check, or a WRMSR that would reach a
// real MSR outside the PT/perfmon allowlist without --allow-msr is refused with file:line:col
// (exit 2). Exit 0 when every expectation held, 1 when one failed, 3 when the target is
// unavailable, 4 when it went away during the run.
import { rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PtError } from '../../../driver/base/errors.js';
import { junitXml } from '../../report/junit.js';
import { RESULTS_FILE, resultsIndexText, type TimedResult } from '../../rundir/results-index.js';
import { openSuiteTarget, TargetUnavailableError, type SuiteTarget } from '../../runner/suite-target.js';
import { checkProfile, checkTarget, type TargetReach } from '../../runner/targets.js';
import { prepareOut } from '../../report/out-dir.js';
import { SeqFileError, SeqFileErrors } from '../../seq/errors.js';
import type { Sequence } from '../../seq/model.js';
import { loadSequences, runSequenceToDir } from '../../seq/run-seq.js';
import { targetRules } from '../../seq/target-rules.js';
import type { ProfileName } from '../../sim/profiles.js';
import type { TargetKind } from '../../scenarios/kit/scenario.js';
import { parseCommandLine, usageErrorText, UsageError, type OptionSpec } from '../args.js';
import { EXIT, EXIT_TABLE } from '../exit-codes.js';
import type { CliIo } from '../main.js';
import { defaultOut, targetReachOf } from './run.js';
import { replaceFile } from '../../report/owned-files.js';

const USAGE = [
  'usage: ptlab seq FILE… [--target sim|qemu|ssh] [--cpu PROFILE] [--seed N] [--out DIR] [--force] [--allow-msr]',
  '         runs sequence files (docs/formats/seq.md): one run directory per file under --out, and --out/junit.xml',
  '         every file is checked for the target before anything runs; a bad file is refused with file:line:col (exit 2)',
  '         --cpu and --seed override the file\'s cpu: and seed: (default profile skylake, seed 1); --cpu needs the model as PT unit',
  '         --out must be new or empty; --force replaces an earlier run\'s directories there (never other files)',
  '         qemu: [--pt model|hardware] [--accel auto|tcg|kvm]   (default --pt model: the reference model is the guest\'s PT unit)',
  '         ssh:  --host H [--port P] [--user U] [--key FILE] [--known-host FILE]',
  '         --allow-msr: on qemu and ssh, allow WRMSR to real MSRs outside IA32_RTIT_* and IA32_PERF_GLOBAL_STATUS(_RESET/_SET)',
].join('\n');

const OPTIONS = {
  target: { type: 'string' }, cpu: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean' },
  'allow-msr': { type: 'boolean' },
  pt: { type: 'string' }, accel: { type: 'string' },
  host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' }, key: { type: 'string' }, 'known-host': { type: 'string' },
} as const satisfies Record<string, OptionSpec>;

interface SeqRequest {
  readonly files: readonly string[];
  readonly target: TargetKind;
  readonly reach: TargetReach | undefined;
  readonly allowMsr: boolean;
  readonly cpu: ProfileName | undefined;
  readonly seed: number | undefined;
  readonly out: string;
  readonly force: boolean;
}

function parseSeqArgs(argv: string[]): SeqRequest | 'help' {
  const { values: v, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  const target = checkTarget(v.target ?? 'sim');
  // `ptlab run`'s connection options, but qemu defaults to --pt model: a sequence drives the PT unit by hand.
  const allowMsr = v['allow-msr'] === true;
  const asked = targetReachOf(target, { ...v, ...(target === 'qemu' && v.pt === undefined ? { pt: 'model' } : {}) });
  if (allowMsr && asked === undefined) throw new UsageError('--allow-msr does not apply to --target sim: every MSR there is the model\'s');
  // The target itself refuses the writes the allowlist leaves out, unless told (harness/link/msr-allowlist.ts).
  const reach = asked === undefined || !allowMsr ? asked : { ...asked, allowMsr };
  const model = reach === undefined || (reach.kind === 'qemu' && reach.pt === 'model');
  if (v.cpu !== undefined && !model) throw new UsageError(`--cpu chooses a model profile; --target ${target}${target === 'qemu' ? ' --pt hardware' : ''} runs on the CPU's own PT (use --pt model for model profiles)`);
  if (positionals.length === 0) throw new UsageError('no sequence file given');
  if (v.seed !== undefined && (!/^\d+$/.test(v.seed) || Number(v.seed) > 0xffff_ffff)) throw new UsageError(`--seed must be an integer 0..4294967295, got '${v.seed}'`);
  return {
    files: positionals, target, reach, allowMsr, cpu: v.cpu === undefined ? undefined : checkProfile(v.cpu),
    seed: v.seed === undefined ? undefined : Number(v.seed), out: v.out ?? defaultOut(), force: v.force === true,
  };
}

/** `ptlab seq`. */
export async function seqCommand(argv: string[], io: CliIo): Promise<number> {
  let req: SeqRequest;
  try {
    const r = parseSeqArgs(argv);
    if (r === 'help') { io.out(`${USAGE}\n${EXIT_TABLE}`); return EXIT.ok; }
    req = r;
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(usageErrorText('seq', e.message));
    return EXIT.usage;
  }
  let seqs: Sequence[];
  let created: string | undefined;
  try {
    seqs = await loadSequences(req.files, targetRules(req.reach, req.allowMsr));
    const dup = seqs.find((s, i) => seqs.findIndex((x) => x.name === s.name) !== i);
    if (dup) throw new UsageError(`two sequences are named '${dup.name}' (their run directories would collide): give one a name:`);
    created = await prepareOut(req.out, req.force);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(e instanceof SeqFileError || e instanceof SeqFileErrors ? e.message : `ptlab seq: ${e.message}`);
    return EXIT.usage;
  }
  let suite: SuiteTarget;
  try {
    suite = await openSuiteTarget(req.target, req.reach);
  } catch (e) {
    await removeCreated(req.out, created); // no target, no run: leave nothing behind
    if (e instanceof TargetUnavailableError) {
      io.err(`ptlab seq: cannot use the target: ${e.message}${e.hint ? `\nptlab seq: ${e.hint}` : ''}`);
      return EXIT.unavailable;
    }
    if (!(e instanceof PtError) || e.code !== 'bad_config') throw e;
    io.err(`ptlab seq: ${e.message}`);
    return EXIT.usage;
  }
  if (suite.kind !== 'sim') io.err(`ptlab seq: ${suite.description} is ready`);
  try {
    return await runAll(seqs, req, suite, io);
  } finally {
    await suite[Symbol.asyncDispose]();
  }
}

/** Removes `out` and its parents up to `created` (the first directory prepareOut made), while they are empty. */
async function removeCreated(out: string, created: string | undefined): Promise<void> {
  if (created === undefined) return;
  const top = resolve(created);
  for (let d = resolve(out); ; d = dirname(d)) {
    if (!(await rmdir(d).then(() => true, () => false)) || d === top || dirname(d) === d) return;
  }
}

/** Runs every sequence on `suite`, then writes junit.xml and results.jsonl (a suite's files: ptlab report reads them); stops early when the target goes away. */
async function runAll(seqs: readonly Sequence[], req: SeqRequest, suite: SuiteTarget, io: CliIo): Promise<number> {
  const timed: TimedResult[] = [];
  let lost: string | undefined;
  for (const s of seqs) {
    const t0 = performance.now();
    const dir = join(req.out, s.name);
    const r = await runSequenceToDir(s, dir, { ...(req.cpu ? { cpu: req.cpu } : {}), ...(req.seed !== undefined ? { seed: req.seed } : {}), suite });
    timed.push({ result: r, ms: performance.now() - t0 });
    const held = r.expectations.filter((e) => e.ok).length;
    io.out(`${r.verdict.toUpperCase().padEnd(4)}  ${s.file} on ${suite.description}:${r.profile}: ${held}/${r.expectations.length} expectations → ${dir}`);
    for (const e of r.expectations.filter((x) => !x.ok)) io.out(`      FAIL ${e.name}: ${e.detail}`);
    lost = suite.lost?.();
    if (lost !== undefined) break;
  }
  try {
    await replaceFile(join(req.out, 'junit.xml'), junitXml(timed));
    await replaceFile(join(req.out, RESULTS_FILE), resultsIndexText(timed));
  } catch (e) {
    io.err(`ptlab seq: cannot write ${req.out}/junit.xml or ${RESULTS_FILE}: ${(e as Error).message}`);
    return EXIT.incomplete;
  }
  const failed = timed.filter((t) => t.result.verdict !== 'pass').length;
  io.out(`${timed.length} sequence(s), ${timed.length - failed} passed, ${failed} failed; junit: ${req.out}/junit.xml`);
  if (lost !== undefined) {
    io.err(`ptlab seq: INCOMPLETE: the target went away (${lost}); ${seqs.length - timed.length} sequence(s) not run`);
    return EXIT.incomplete;
  }
  return failed ? EXIT.failed : EXIT.ok;
}
