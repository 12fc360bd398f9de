// Command-line parsing for every sub-command, on node:util.parseArgs: `--opt value` and
// `--opt=value` alike, unknown options refused, `--help`/`-h` recognised everywhere. A mistake is
// a UsageError (exit 2) whose message names the option, never a stack trace.
import { parseArgs } from 'node:util';
import { PtError } from '../../driver/base/errors.js';

/** A bad command line: the message says what is wrong; the command prints its usage after it. */
export class UsageError extends PtError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super('bad_config', message);
  }
}

export interface OptionSpec {
  readonly type: 'boolean' | 'string';
  readonly multiple?: boolean;
  readonly short?: string;
}

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? (S['multiple'] extends true ? boolean[] : boolean)
  : (S['multiple'] extends true ? string[] : string);

export type ParsedValues<O extends Record<string, OptionSpec>> = { [K in keyof O]?: ValueOf<O[K]> };

export interface Parsed<O extends Record<string, OptionSpec>> {
  readonly values: ParsedValues<O>;
  readonly positionals: readonly string[];
  /** `--help` or `-h` was given: print the usage and exit 0. */
  readonly help: boolean;
}

/** Parses `argv` against `options` (plus --help); throws UsageError. */
export function parseCommandLine<O extends Record<string, OptionSpec>>(argv: readonly string[], options: O): Parsed<O> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    });
    const { help, ...rest } = values as Record<string, unknown>;
    return { values: rest as ParsedValues<O>, positionals, help: help === true };
  } catch (e) {
    throw new UsageError(cleanMessage((e as Error).message));
  }
}

/** node's parseArgs messages, without the advice to use `--` that ptlab does not need. */
function cleanMessage(m: string): string {
  return m.replace(/\. To specify a positional argument starting with a '-'.*$/s, '').replace(/\.$/, '');
}

/**
 * Runs a command's argument parser: its result, or the exit status when the command line asked for
 * the usage (`'help'`: printed on stdout, 0) or was wrong (UsageError: message and usage on stderr, 2).
 */
export function commandArgs<T>(name: string, usage: string, io: { out(s: string): void; err(s: string): void }, parse: () => T | 'help'): T | number {
  try {
    const r = parse();
    if (r !== 'help') return r;
    io.out(usage);
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`ptlab ${name}: ${e.message}\n${usage}`);
    return 2;
  }
}
