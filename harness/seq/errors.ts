// Typed errors of sequence files (docs/formats/seq.md "Errors"): a bad file is refused before
// anything runs, with file:line:col and, for a misspelled name, the nearest valid one.
import { PtError } from '../../driver/base/errors.js';

/** A place in a sequence file (1-based line and column). */
export interface SeqPos {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/** "file:line:col". */
export function formatPos(p: SeqPos): string {
  return `${p.file}:${p.line}:${p.col}`;
}

/** What kind of mistake a file has (tests and scripts branch on it, never on the message). */
export type SeqProblem =
  /** Not YAML, or not readable. */
  | 'syntax'
  /** The JSON Schema (docs/schemas/seq.schema.json) refuses it: a wrong type, a missing or unknown key. */
  | 'schema'
  /** A step whose kind is not one of the step kinds. */
  | 'unknown-step'
  /** An MSR name that is not in the field tables (driver/hw/msrs.ts). */
  | 'unknown-msr'
  /** A field name that is not in the MSR's field table. */
  | 'unknown-field'
  /** A field value the field cannot hold, or a raw value beyond 64 bits. */
  | 'bad-value'
  /** A buffer, table or area name used before it is defined, or defined twice. */
  | 'unknown-name'
  /** A `--cpu`/`cpu:` profile that does not exist, or a rule id that no rule has. */
  | 'bad-config'
  /** A step out of order with the driver's trace session: `handle-pmi` with no `trace` open, a `trace` while one is. */
  | 'trace-state'
  /** A check the target cannot make: `flow: truth` where the reference model is not the PT unit. */
  | 'not-on-target'
  /** A WRMSR that would reach a real MSR outside the PT and performance-monitoring allowlist, without --allow-msr. */
  | 'msr-not-allowed';

/** A sequence file ptlab refuses: the message starts with file:line:col. */
export class SeqFileError extends PtError {
  override readonly name = 'SeqFileError';
  constructor(readonly problem: SeqProblem, readonly pos: SeqPos, readonly detail: string, readonly suggestion?: string) {
    super('bad_config', `${formatPos(pos)}: ${detail}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`);
  }
}

/** Several mistakes in one sequence file, each a SeqFileError at its own place: the message has one line each. */
export class SeqFileErrors extends PtError {
  override readonly name = 'SeqFileErrors';
  constructor(readonly errors: readonly SeqFileError[]) {
    super('bad_config', errors.map((e) => e.message).join('\n'));
  }
}
