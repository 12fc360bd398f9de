// Typed errors of an inventory of lab machines (docs/hosts.md "Errors"): a wrong entry is refused
// before anything runs, at file:line:col with what is wrong, as a sequence file is
// (harness/seq/errors.ts: the same position and its format).
import { PtError } from '../../driver/base/errors.js';
import { formatPos, type SeqPos } from '../seq/errors.js';

/** A place in the inventory file (1-based line and column). */
export type InventoryPos = SeqPos;

/** What is wrong (tests and scripts branch on it, never on the message). */
export type InventoryProblem =
  /** Not YAML, or not readable. */
  | 'syntax'
  /** docs/schemas/hosts.schema.json refuses it: a wrong type, a missing or unknown key, a bad name. */
  | 'schema'
  /** Two hosts with one name (their directories would collide). */
  | 'duplicate-name'
  /** A name that is one of the files at the root of --out (junit.xml, results.jsonl, report.html). */
  | 'reserved-name'
  /** The client key cannot be read, or is a public key. */
  | 'key'
  /** The known-host file cannot be read, or pins no key for the host and port. */
  | 'known-host';

/** An inventory ptlab refuses: the message starts with file:line:col. */
export class InventoryError extends PtError {
  override readonly name = 'InventoryError';
  constructor(readonly problem: InventoryProblem, readonly pos: InventoryPos, readonly detail: string, readonly suggestion?: string) {
    super('bad_config', `${formatPos(pos)}: ${detail}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`);
  }
}
