// A trace argument as libipt's tools take it: `FILE[:FROM[-TO]]` (ptdump's <ptfile>, ptxed's
// --pt), the bytes FROM (inclusive) to TO (exclusive) of FILE. As in ptdump, offsets in the output
// count from FROM. Numbers are read as ptlab reads every address (0x… hex, digits alone decimal),
// not as strtoull's base 0 (where a leading 0 is octal). A name that is itself an existing file is
// that file, suffix and all: libipt would cut `trace:1` to `trace`; ptlab opens what is there.
import { stat } from 'node:fs/promises';
import { UsageError } from './args.js';

/** The part of a file to read. */
export interface TraceRange {
  readonly path: string;
  /** First byte; 0 when the argument names no range. */
  readonly from: number;
  /** One past the last byte; absent: to the end. */
  readonly to?: number;
}

const NUMBER = '(0x[0-9a-fA-F]+|[0-9]+)';
const SUFFIX = new RegExp(`^(.+):${NUMBER}(?:-${NUMBER})?$`);

function offset(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`trace offset '${text}' is too large`);
  return n;
}

/** Splits `arg` into the file and the range it names (see the file comment). */
export async function traceRange(arg: string): Promise<TraceRange> {
  const m = SUFFIX.exec(arg);
  if (m === null || arg === '-' || (await exists(arg))) return { path: arg, from: 0 };
  const from = offset(m[2]!);
  if (m[3] === undefined) return { path: m[1]!, from };
  const to = offset(m[3]);
  if (to <= from) throw new UsageError(`bad trace range '${arg}': the end (${m[3]}) must lie past the start (${m[2]})`);
  return { path: m[1]!, from, to };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
