// `ptlab seq FILE… [--target sim] [--cpu PROFILE] [--seed N] [--out DIR] [--force]`: runs sequence
// files (docs/formats/seq.md) and writes one run directory per file under --out
// (DIR/<sequence>/), with DIR/junit.xml. Every file is read and checked before anything runs: a bad
// file is refused with file:line:col (exit 2). Exit 0 when every expectation held, 1 when one failed.
// This slice runs on the sim only: --target qemu and ssh are accepted and refused (exit 2).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../../driver/base/errors.js';
import { junitXml, type TimedResult } from '../../report/junit.js';
import { checkProfile, checkTarget } from '../../runner/targets.js';
import { prepareOut } from '../../runner/suite.js';
import { SeqFileError } from '../../seq/errors.js';
import type { Sequence } from '../../seq/model.js';
import { loadSequences, runSequenceToDir } from '../../seq/run-seq.js';
import type { ProfileName } from '../../sim/profiles.js';
import { parseCommandLine, UsageError, type OptionSpec } from '../args.js';
import { EXIT, EXIT_TABLE } from '../exit-codes.js';
import type { CliIo } from '../main.js';
import { defaultOut } from './run.js';

const USAGE = [
  'usage: ptlab seq FILE… [--target sim] [--cpu PROFILE] [--seed N] [--out DIR] [--force]',
  '         runs sequence files (docs/formats/seq.md): one run directory per file under --out, and --out/junit.xml',
  '         every file is checked before anything runs; a bad file is refused with file:line:col (exit 2)',
  '         --cpu and --seed override the file\'s cpu: and seed: (default profile skylake, seed 1)',
  '         --out must be new or empty; --force replaces an earlier run\'s directories there (never other files)',
  '         --target qemu and ssh are not in this slice: refused (exit 2)',
].join('\n');

const OPTIONS = {
  target: { type: 'string' }, cpu: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean' },
  pt: { type: 'string' }, accel: { type: 'string' },
  host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' }, key: { type: 'string' }, 'known-host': { type: 'string' },
} as const satisfies Record<string, OptionSpec>;

/** A target this slice of `ptlab seq` does not drive yet (issue 11: sim first). */
export class SeqTargetError extends PtError {
  override readonly name = 'SeqTargetError';
  constructor(readonly target: string) {
    super('unsupported', `--target ${target} is not in this slice of ptlab seq: sequence files run on the sim only for now (--target sim)`);
  }
}

interface SeqRequest {
  readonly files: readonly string[];
  readonly cpu: ProfileName | undefined;
  readonly seed: number | undefined;
  readonly out: string;
  readonly force: boolean;
}

function parseSeqArgs(argv: string[]): SeqRequest | 'help' {
  const { values: v, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  const target = checkTarget(v.target ?? 'sim');
  if (target !== 'sim') throw new SeqTargetError(target);
  const foreign = ['pt', 'accel', 'host', 'port', 'user', 'key', 'known-host'].filter((o) => v[o as keyof typeof v] !== undefined);
  if (foreign.length) throw new UsageError(`--${foreign.join(', --')} ${foreign.length > 1 ? 'do' : 'does'} not apply to --target sim`);
  if (positionals.length === 0) throw new UsageError('no sequence file given');
  if (v.seed !== undefined && (!/^\d+$/.test(v.seed) || Number(v.seed) > 0xffff_ffff)) throw new UsageError(`--seed must be an integer 0..4294967295, got '${v.seed}'`);
  return {
    files: positionals, cpu: v.cpu === undefined ? undefined : checkProfile(v.cpu), seed: v.seed === undefined ? undefined : Number(v.seed),
    out: v.out ?? defaultOut(), force: v.force === true,
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
    io.err(`ptlab seq: ${e.message}${e instanceof UsageError || e.code === 'bad_config' ? `\n${USAGE}` : ''}`);
    return EXIT.usage;
  }
  let seqs: Sequence[];
  try {
    seqs = await loadSequences(req.files);
    const dup = seqs.find((s, i) => seqs.findIndex((x) => x.name === s.name) !== i);
    if (dup) throw new UsageError(`two sequences are named '${dup.name}' (their run directories would collide): give one a name:`);
    await prepareOut(req.out, req.force);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(e instanceof SeqFileError ? e.message : `ptlab seq: ${e.message}`);
    return EXIT.usage;
  }
  const timed: TimedResult[] = [];
  for (const s of seqs) {
    const t0 = performance.now();
    const dir = join(req.out, s.name);
    const r = await runSequenceToDir(s, dir, { ...(req.cpu ? { cpu: req.cpu } : {}), ...(req.seed !== undefined ? { seed: req.seed } : {}) });
    timed.push({ result: r, ms: performance.now() - t0 });
    const held = r.expectations.filter((e) => e.ok).length;
    io.out(`${r.verdict.toUpperCase().padEnd(4)}  ${s.file} on sim:${r.profile}: ${held}/${r.expectations.length} expectations → ${dir}`);
    for (const e of r.expectations.filter((x) => !x.ok)) io.out(`      FAIL ${e.name}: ${e.detail}`);
  }
  try {
    await writeFile(join(req.out, 'junit.xml'), junitXml(timed));
  } catch (e) {
    io.err(`ptlab seq: cannot write ${req.out}/junit.xml: ${(e as Error).message}`);
    return EXIT.incomplete;
  }
  const failed = timed.filter((t) => t.result.verdict !== 'pass').length;
  io.out(`${timed.length} sequence(s), ${timed.length - failed} passed, ${failed} failed; junit: ${req.out}/junit.xml`);
  return failed ? EXIT.failed : EXIT.ok;
}
