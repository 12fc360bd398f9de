// Command-line parsing for every sub-command, on node:util.parseArgs: `--opt value` and
// `--opt=value` alike, unknown options refused, `--help`/`-h` recognised everywhere. A mistake is
// a UsageError (exit 2) whose message names the option, never a stack trace.
import { parseArgs } from 'node:util';
import { PtError } from '../../driver/base/errors.js';
import { didYouMean } from '../text/nearest.js';

/** A bad command line: the message says what is wrong; the command says where its options are after it. */
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
    const { values, positionals, tokens } = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
    refuseRepeats(tokens, options);
    const { help, ...rest } = values as Record<string, unknown>;
    return { values: rest as ParsedValues<O>, positionals, help: help === true };
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const unknown = /^Unknown option '(--?[^']+)'/.exec((e as Error).message)?.[1];
    const hint = unknown === undefined ? '' : didYouMean(unknown, ['--help', ...Object.keys(options).map((o) => `--${o}`)]);
    throw new UsageError(`${cleanMessage((e as Error).message)}${hint}`);
  }
}

/**
 * An option that takes one value, given twice, is refused: parseArgs keeps the last and drops the
 * other without a word (`--cpu skylake --cpu icelake` ran icelake only).
 */
function refuseRepeats(tokens: readonly { kind: string; name?: string; value?: string | undefined }[], options: Readonly<Record<string, OptionSpec>>): void {
  const seen = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined) continue;
    const spec = options[t.name];
    if (spec === undefined || spec.multiple === true || spec.type !== 'string') continue;
    seen.set(t.name, [...(seen.get(t.name) ?? []), t.value ?? '']);
  }
  for (const [name, values] of seen) {
    if (values.length > 1) throw new UsageError(`--${name} was given ${values.length} times (${values.join(', ')}): give it once`);
  }
}

/** The values of a repeatable option, each split at commas (`--cpu a,b --cpu c` is a, b, c), in order, each once. */
export function listValues(values: readonly string[] | undefined): string[] {
  return [...new Set((values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== ''))];
}

/** node's parseArgs messages, without the advice to use `--` that ptlab does not need. */
function cleanMessage(m: string): string {
  return m.replace(/\. To specify a positional argument starting with a '-'.*$/s, '').replace(/\.$/, '');
}

/**
 * Runs a command's argument parser: its result, or the exit status when the command line asked for
 * the usage (`'help'`: printed on stdout, 0) or was wrong (UsageError: the message and a pointer to --help on stderr, 2).
 */
export function commandArgs<T>(name: string, usage: string, io: { out(s: string): void; err(s: string): void }, parse: () => T | 'help'): T | number {
  try {
    const r = parse();
    if (r !== 'help') return r;
    io.out(usage);
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(usageErrorText(name, e.message));
    return 2;
  }
}

/** A command line's mistake, then where the options are: ten lines of usage would bury the one line that matters. */
export function usageErrorText(command: string, message: string): string {
  return `ptlab ${command}: ${message}\n(ptlab ${command} --help shows its options)`;
}
