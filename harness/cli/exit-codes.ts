// ptlab's exit statuses, one table for every command, `--help` and the README (docs/exit-codes.md).
// A lab's scripts branch on them, so each means one thing.

/** Exit statuses, by meaning. */
export const EXIT = {
  /** Everything asked for was done, and nothing failed. */
  ok: 0,
  /** run: a verdict failed (fail or corrupt). dump/flow: the input had decode errors (unless --tolerate-errors). doctor: no real-PT run is possible here. */
  failed: 1,
  /** The command line is wrong, or names an input that cannot be read (nothing was run or written). */
  usage: 2,
  /** The environment or target is not available: no QEMU, no image, no PT, SSH refused, the CPU traced by someone else. */
  unavailable: 3,
  /** The target died or kept failing, or a file could not be written: the run is incomplete (junit.xml says so). */
  incomplete: 4,
  /** ptlab itself failed (a bug, not a verdict): the stack is on stderr (70 is sysexits' EX_SOFTWARE). */
  internal: 70,
  /** Stopped by SIGHUP (128 + 1), after cleaning up. */
  sighup: 129,
  /** Stopped by SIGINT (Ctrl-C; 128 + 2), after cleaning up. */
  sigint: 130,
  /** Stopped by SIGTERM (128 + 15), after cleaning up. */
  sigterm: 143,
} as const;

/** The signals `ptlab run` stops cleanly on, with the status each leaves. */
export const STOP_SIGNALS = { SIGINT: EXIT.sigint, SIGTERM: EXIT.sigterm, SIGHUP: EXIT.sighup } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** The table as `ptlab --help` prints it. */
export const EXIT_TABLE = [
  'exit status:',
  `  ${EXIT.ok}    success`,
  `  ${EXIT.failed}    a verdict failed: fail or corrupt (run, merge, seq), the runs differ (diff), a replayed result differs (replay), decode errors (dump, flow), no real PT here (doctor)`,
  `  ${EXIT.usage}    usage error, or an input file that cannot be read or is not valid (seq), a run that cannot be replayed (replay): nothing was run`,
  `  ${EXIT.unavailable}    environment or target unavailable (no QEMU, no image, no PT, SSH failed, the CPU traced by someone else; run --hosts: every machine)`,
  `  ${EXIT.incomplete}    incomplete: the target died or kept failing, a file could not be written, or (merge) a shard was incomplete, or (run --hosts) some machine was unavailable or died`,
  `  ${EXIT.internal}   ptlab itself failed (a bug, never a verdict): the error and its stack are on stderr`,
  `  ${EXIT.sighup}  ${EXIT.sigint}  ${EXIT.sigterm}   stopped by SIGHUP, SIGINT, SIGTERM (after cleaning up; junit.xml marks the suite incomplete)`,
].join('\n');
