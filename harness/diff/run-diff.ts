// `ptlab diff A B`: two run directories compared section by section — verdict and expectations,
// the memory oracle's events and the leaked buffers (result.json `corrupt`, `leaked`), transcript (addresses by role, no timestamps), packets (timing left out unless asked), flow, and
// the loss ledger — each with its first divergence and the lines around it.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { readRunFile } from '../rundir/read-run-file.js';
import { RUN_FILES, type RunFile } from '../rundir/run-files.js';
import { flowOfRunDir } from '../runner/flow-check.js';
import { streamPackets } from './packets.js';
import { gpRuleOf } from '../rundir/parse-transcript.js';
import { normalTranscript } from '../rundir/normalize-transcript.js';
import { readResultJson } from '../rundir/read-result.js';
import type { ResultJson } from '../rundir/result.js';
type Expectation = ResultJson['expectations'][number];

/** What a section compares. */
export type DiffSection = 'verdict' | 'expectations' | 'memory' | 'transcript' | 'packets' | 'flow' | 'losses';

/** One section's outcome: equal or different (with the first divergence); a file only one side has differs. */
export interface SectionDiff {
  readonly section: DiffSection;
  readonly status: 'equal' | 'differ';
  /** A short account: sizes when equal, the first divergence when not. */
  readonly detail: string;
  /** Where they first differ: the item's index (1-based) and a few items of context from each side. */
  readonly first?: { readonly index: number; readonly a: readonly string[]; readonly b: readonly string[] };
  /** The SDM rule the divergence involves, where a side names one (a #GP's rule id). */
  readonly rule?: string;
}

export interface RunDiff {
  readonly a: string;
  readonly b: string;
  readonly equal: boolean;
  readonly sections: readonly SectionDiff[];
}

export interface DiffOptions {
  /** Compare timing packets (TSC, TMA, MTC, CYC, CBR) too. */
  readonly timing?: boolean;
}

/** Items of context shown on each side of a divergence. */
const CONTEXT = 2;

async function readOptional(dir: string, file: RunFile): Promise<Buffer | undefined> {
  try {
    return await readRunFile(dir, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether `path` exists (flowOfRunDir reads the files itself: no need to read them here too). */
async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

/** When a side lacks `file`: equal if neither has it, else a difference naming the side that has it. */
function absent(section: DiffSection, file: string, inA: boolean, inB: boolean): SectionDiff | undefined {
  if (inA && inB) return undefined;
  return inA || inB
    ? { section, status: 'differ', detail: `only ${inA ? 'A' : 'B'} has ${file}` }
    : { section, status: 'equal', detail: `neither run has ${file}` };
}

/** The first index where `a` and `b` differ, or -1. */
function firstDifference(a: readonly string[], b: readonly string[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Compares two lists item by item: `what` names the items (plural) and `one` an item in the detail. */
function compareLists(section: DiffSection, what: string, a: readonly string[], b: readonly string[], where?: (i: number) => string, one = what.replace(/s\b.*$/, '')): SectionDiff {
  const i = firstDifference(a, b);
  if (i < 0) return { section, status: 'equal', detail: `${a.length} ${what}` };
  const around = (xs: readonly string[]): string[] => xs.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1);
  const at = where ? ` (${where(i)})` : '';
  const rule = gpRuleOf(a[i]) ?? gpRuleOf(b[i]);
  return {
    section, status: 'differ', detail: `${one} ${i + 1} differs${at}: ${a[i] ?? '(end)'} / ${b[i] ?? '(end)'} (${a.length} vs ${b.length} ${what})`,
    first: { index: i + 1, a: around(a), b: around(b) }, ...(rule ? { rule } : {}),
  };
}

/**
 * Two runs' expectations matched by name (the k-th of a repeated name with the k-th), not by
 * position: a check added or dropped on one side is named as such, and the rest still pair up.
 */
function compareExpectations(a: readonly Expectation[], b: readonly Expectation[]): SectionDiff {
  const keyed = (xs: readonly Expectation[]): Map<string, { e: Expectation; i: number }> => {
    const seen = new Map<string, number>(), out = new Map<string, { e: Expectation; i: number }>();
    xs.forEach((e, i) => {
      const k = (seen.get(e.name) ?? 0) + 1;
      seen.set(e.name, k);
      out.set(k === 1 ? e.name : `${e.name} (#${k})`, { e, i });
    });
    return out;
  };
  const ka = keyed(a), kb = keyed(b);
  const diffs: { i: number; text: string }[] = [];
  for (const [name, x] of ka) {
    const y = kb.get(name);
    if (y === undefined) diffs.push({ i: x.i, text: `'${name}' only in A (${x.e.ok ? 'ok' : 'FAILED'})` });
    else if (x.e.ok !== y.e.ok) diffs.push({ i: x.i, text: `'${name}' ${x.e.ok ? 'held in A, FAILED in B' : 'FAILED in A, held in B'}` });
  }
  for (const [name, y] of kb) if (!ka.has(name)) diffs.push({ i: y.i, text: `'${name}' only in B (${y.e.ok ? 'ok' : 'FAILED'})` });
  if (diffs.length === 0) return { section: 'expectations', status: 'equal', detail: `${a.length} expectations` };
  diffs.sort((x, y) => x.i - y.i);
  const line = (e: Expectation): string => `${e.ok ? 'ok' : 'FAILED'}: ${e.name}`;
  const at = diffs[0]!.i;
  const around = (xs: readonly Expectation[]): string[] => xs.slice(Math.max(0, at - CONTEXT), at + CONTEXT + 1).map(line);
  return {
    section: 'expectations', status: 'differ',
    detail: `${diffs.length} expectation${diffs.length === 1 ? ' differs' : 's differ'} by name: ${diffs.slice(0, 3).map((d) => d.text).join('; ')}${diffs.length > 3 ? `; … ${diffs.length - 3} more` : ''} (${a.length} vs ${b.length})`,
    first: { index: at + 1, a: around(a), b: around(b) },
  };
}

/**
 * A result's corrupt events and leaked buffers, one item each. Addresses are left out (two
 * allocators place buffers apart): the transcript section compares the `corrupt` lines with
 * their addresses by buffer role.
 */
function memoryItems(j: ResultJson): string[] {
  return [
    ...(j.corrupt ?? []).map((c) => `corrupt ${c.kind} on cpu ${c.cpu}: ${c.length} bytes`),
    ...(j.leaked ?? []).map((l) => `leaked ${l.role}: ${l.size} bytes`),
  ];
}

async function results(a: string, b: string): Promise<SectionDiff[]> {
  const ja = await readResultJson(a), jb = await readResultJson(b);
  const verdict: SectionDiff = ja.verdict === jb.verdict
    ? { section: 'verdict', status: 'equal', detail: `${ja.verdict} on both` }
    : { section: 'verdict', status: 'differ', detail: `${ja.verdict}${ja.reason ? ` (${ja.reason})` : ''} / ${jb.verdict}${jb.reason ? ` (${jb.reason})` : ''}` };
  return [verdict, compareExpectations(ja.expectations, jb.expectations),
    compareLists('memory', 'corrupt events and leaked buffers', memoryItems(ja), memoryItems(jb), undefined, 'item')];
}

async function transcripts(a: string, b: string): Promise<SectionDiff> {
  const ta = await readOptional(a, RUN_FILES.transcript), tb = await readOptional(b, RUN_FILES.transcript);
  if (!ta || !tb) return absent('transcript', RUN_FILES.transcript, !!ta, !!tb)!;
  const na = normalTranscript(ta.toString('utf8')), nb = normalTranscript(tb.toString('utf8'));
  return compareLists('transcript', 'lines', na.map((l) => l.text), nb.map((l) => l.text), (i) => `line ${na[i]?.at ?? '-'} of A, ${nb[i]?.at ?? '-'} of B`);
}

async function packets(a: string, b: string, opts: DiffOptions): Promise<SectionDiff> {
  const ta = await readOptional(a, RUN_FILES.trace), tb = await readOptional(b, RUN_FILES.trace);
  if (!ta || !tb) return absent('packets', RUN_FILES.trace, !!ta, !!tb)!;
  const pa = streamPackets(new Uint8Array(ta), opts), pb = streamPackets(new Uint8Array(tb), opts);
  const what = opts.timing ? 'packets' : 'packets (timing packets left out)';
  return compareLists('packets', what, pa.map((p) => p.text), pb.map((p) => p.text), (i) => `offset ${pa[i]?.off ?? 'end'} of A, ${pb[i]?.off ?? 'end'} of B`);
}

async function flows(a: string, b: string): Promise<SectionDiff> {
  for (const f of [RUN_FILES.trace, RUN_FILES.image, RUN_FILES.imageJson, RUN_FILES.losses]) {
    const missing = absent('flow', f, await exists(join(a, f)), await exists(join(b, f)));
    if (missing) return missing;
  }
  return compareLists('flow', 'flow records', await flowOfRunDir(a), await flowOfRunDir(b));
}

interface LossFile { collected?: number; lost?: { at: number; bytes: number | null; reason: string }[] }

async function losses(a: string, b: string): Promise<SectionDiff> {
  const la = await readOptional(a, RUN_FILES.losses), lb = await readOptional(b, RUN_FILES.losses);
  if (!la || !lb) return absent('losses', RUN_FILES.losses, !!la, !!lb)!;
  const items = (j: LossFile): string[] => [`collected ${j.collected ?? 0}`, ...(j.lost ?? []).map((l) => `${l.reason} at ${l.at}: ${l.bytes ?? 'unknown'} bytes`)];
  return compareLists('losses', 'ledger entries', items(JSON.parse(la.toString('utf8')) as LossFile), items(JSON.parse(lb.toString('utf8')) as LossFile), undefined, 'ledger entry');
}

/** Compares the run directories `a` and `b` (see the file comment). Throws PtError('bad_config') when either has no result.json. */
export async function diffRuns(a: string, b: string, opts: DiffOptions = {}): Promise<RunDiff> {
  const sections = [...await results(a, b), await transcripts(a, b), await packets(a, b, opts), await flows(a, b), await losses(a, b)];
  return { a, b, equal: sections.every((s) => s.status === 'equal'), sections };
}
