// `ptlab replay`'s core: a recorded transcript issued again, step by step, on another target, each
// step's new transcript lines compared with the recorded ones (addresses by buffer role, no
// timestamps: harness/rundir/normalize-transcript.ts). The first step whose lines differ — a value,
// a fault, an event — is the divergence; the replay stops there (docs/replay.md).
import { PtError } from '../../driver/base/errors.js';
import type { Target } from '../../driver/target.js';
import { RecordingTarget } from '../rundir/recording-target.js';
import { gpRuleOf } from '../rundir/parse-transcript.js';
import { TranscriptNormalizer } from '../rundir/normalize-transcript.js';
import { explainLines } from './explain.js';
import { EVENT_OPS, stepAt, StepIssuer, type RecordedLine } from './issue.js';

/** What differed at the divergence. */
export type DivergenceKind =
  /** A value read, a CPUID result, an XSAVES area. */
  | 'value'
  /** One side faulted (#GP, a failed allocation or write), the other did not, or with another fault. */
  | 'fault'
  /** An event of an execution: another kind, another value, or none (the execution ended). */
  | 'event'
  /** The step made another number of lines (a table write that changed other entries). */
  | 'lines';

export interface Divergence {
  /** The step's first recorded line (1-based, as in transcript.jsonl). */
  readonly line: number;
  readonly op: string;
  readonly kind: DivergenceKind;
  /** The step's lines, normalised: as recorded, and as the replay made them. */
  readonly recorded: readonly string[];
  readonly replayed: readonly string[];
  /** Recorded lines before and after the step, normalised. */
  readonly before: readonly string[];
  readonly after: readonly string[];
  /** The #GP rule a faulting side names (docs/sdm/msrs.md §9). */
  readonly rule?: string;
  /** The register fields that differ, in the SDM's names ("IA32_RTIT_STATUS: Stopped 1 → 0"). */
  readonly fields: readonly string[];
}

/** A CPUID result that differed and was gone past (`pastCpuid`): its line and what differs. */
export interface CpuidDifference {
  readonly line: number;
  readonly fields: readonly string[];
}

export interface ReplayOutcome {
  /** Recorded lines, and those replayed equal before the divergence (all of them when none). */
  readonly lines: number;
  readonly equalLines: number;
  readonly divergence?: Divergence;
  /** The CPUID results that differed and were gone past (`pastCpuid`); absent when none. */
  readonly cpuid?: readonly CpuidDifference[];
  /** The replay's own transcript.jsonl. */
  readonly transcript: string;
}

/** Recorded lines shown before a divergence (and half as many after). */
const CONTEXT = 4;

function kindOf(op: string, want: readonly RecordedLine[], got: readonly RecordedLine[]): DivergenceKind {
  if (EVENT_OPS.has(op)) return 'event';
  if (want.length !== got.length) return 'lines';
  return want.some((w, i) => (w.fault === undefined) !== (got[i]?.fault === undefined) || w.fault !== got[i]?.fault) ? 'fault' : 'value';
}

/** How a replay goes. */
export interface ReplayOptions {
  readonly signal?: AbortSignal;
  /**
   * Go on past a CPUID result that differs (a replay on another CPU profile reads another CPUID by
   * design): each is listed in the outcome, and the replay stops at the first other difference.
   */
  readonly pastCpuid?: boolean;
}

/** Replays `recorded` (parsed transcript lines) on `target`; see the file comment. */
export async function replayTranscript(recorded: readonly RecordedLine[], target: Target, o: ReplayOptions = {}): Promise<ReplayOutcome> {
  const { signal } = o;
  const cpuid: CpuidDifference[] = [];
  const withCpuid = <T extends object>(r: T): T & { cpuid?: readonly CpuidDifference[] } => (cpuid.length ? { ...r, cpuid } : r);
  const rec = new RecordingTarget(target);
  const wantNorm = new TranscriptNormalizer(), gotNorm = new TranscriptNormalizer();
  const want = recorded.map((l) => wantNorm.line(l));
  const wantText = want.map((l) => JSON.stringify(l));
  await using issuer = new StepIssuer(rec, gotNorm.roles);
  let seen = 0;
  for (let i = 0; i < recorded.length;) {
    if (signal?.aborted) throw new PtError('aborted', `replay interrupted at transcript line ${i + 1} of ${recorded.length}: ${String(signal.reason)}`);
    const s = stepAt(recorded, i);
    await issuer.issue(recorded, s);
    const got = rec.lines.slice(seen).map((l) => gotNorm.line(l as unknown as RecordedLine));
    seen = rec.lines.length;
    const gotText = got.map((l) => JSON.stringify(l));
    const w = wantText.slice(s.from, s.to);
    if (gotText.length !== w.length || gotText.some((t, k) => t !== w[k])) {
      const op = String(recorded[s.from]!.op);
      if (o.pastCpuid && op === 'cpuid' && gotText.length === w.length) {
        cpuid.push({ line: s.from + 1, fields: want.slice(s.from, s.to).flatMap((l, k) => explainLines(l, got[k])) });
        i = s.to;
        continue;
      }
      const rule = [...want.slice(s.from, s.to), ...got].map((l) => gpRuleOf(typeof l.fault === 'string' ? l.fault : undefined)).find((r) => r !== undefined);
      return withCpuid({
        lines: recorded.length, equalLines: s.from, transcript: rec.jsonl(),
        divergence: {
          line: s.from + 1, op, kind: kindOf(op, want.slice(s.from, s.to), got), recorded: w, replayed: gotText,
          before: wantText.slice(Math.max(0, s.from - CONTEXT), s.from), after: wantText.slice(s.to, s.to + CONTEXT / 2),
          ...(rule ? { rule } : {}),
          fields: want.slice(s.from, s.to).flatMap((l, k) => explainLines(l, got[k])),
        },
      });
    }
    i = s.to;
  }
  return withCpuid({ lines: recorded.length, equalLines: recorded.length, transcript: rec.jsonl() });
}
