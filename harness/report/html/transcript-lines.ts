// transcript.jsonl (docs/transcript.md) read for the report: each line parsed once, with its line
// number and a clock relative to the first line. A line that is not a JSON object with an `op` is
// counted as malformed and otherwise skipped, so a damaged transcript still gives what it can.
import { parseTranscriptLine } from '../../rundir/parse-transcript.js';

/** One transcript line: `n` its 1-based line number, `t` µs since the first line, `op`, the fields. */
export interface TLine {
  readonly n: number;
  readonly t: number;
  readonly op: string;
  readonly cpu: number;
  readonly f: Readonly<Record<string, unknown>>;
  readonly raw: string;
}

/** A transcript's usable lines, and the malformed ones counted. */
export interface Transcript {
  readonly lines: readonly TLine[];
  /** Non-empty lines in the file. */
  readonly total: number;
  readonly malformed: number;
  /** The first malformed line (1-based), when there is one. */
  readonly firstMalformed?: number;
}

/** Parses transcript text; never throws. */
export function parseTranscript(text: string): Transcript {
  const lines: TLine[] = [];
  let malformed = 0, firstMalformed: number | undefined, t0: number | undefined, total = 0;
  const raws = text.split('\n');
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!;
    if (raw.trim() === '') continue;
    total++;
    const f = parseTranscriptLine(raw);
    if (typeof f.op !== 'string') {
      malformed++;
      firstMalformed ??= i + 1;
      continue;
    }
    const tUs = typeof f.t_us === 'number' && Number.isFinite(f.t_us) ? f.t_us : undefined;
    if (tUs !== undefined) t0 ??= tUs;
    const prev = lines[lines.length - 1]?.t ?? 0;
    lines.push({ n: i + 1, t: tUs === undefined ? prev : Math.max(0, tUs - (t0 ?? tUs)), op: f.op, cpu: typeof f.cpu === 'number' ? f.cpu : 0, f, raw });
  }
  return { lines, total, malformed, ...(firstMalformed === undefined ? {} : { firstMalformed }) };
}

const HEX = /^0x[0-9a-f]+$/;

/** A `0x…` field as a bigint; undefined when absent or not hex. */
export function hexField(l: TLine, key: string): bigint | undefined {
  const v = l.f[key];
  return typeof v === 'string' && HEX.test(v) ? BigInt(v) : undefined;
}

/** A string field; undefined when absent. */
export function strField(l: TLine, key: string): string | undefined {
  const v = l.f[key];
  return typeof v === 'string' ? v : undefined;
}

/** A hex string value of an XSAVE `area` (xsaves/xrstors), by SDM MSR name. */
export function areaField(l: TLine, msr: string): bigint | undefined {
  const a = l.f.area;
  if (a === null || typeof a !== 'object') return undefined;
  const v = (a as Record<string, unknown>)[msr];
  return typeof v === 'string' && HEX.test(v) ? BigInt(v) : undefined;
}
