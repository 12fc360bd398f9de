// The transcript excerpt of a run that failed, was corrupt or errored (docs/report.md "Transcript
// excerpt"). An expectation names no transcript line, so the excerpt is centred on the first place
// the transcript itself marks: for a corrupt run, the first `corrupt` line (where the model's memory
// oracle saw PT reach memory the driver does not own); the first fault line (a #GP or CPU fault);
// for an error, the last line recorded before the target failed; otherwise the first PMI with its
// handling (the scenarios that fail without a fault are mostly about the ToPA PMI), and without one
// the final stop.
import { IA32_RTIT_CTL } from '../../../driver/hw/msrs.js';
import { isBad, type Verdict } from '../../rundir/result.js';
import { hexField, strField, type TLine } from './transcript-lines.js';
import type { Excerpt } from './view-model.js';


/** Lines before the anchor, after it, and at most in all; characters kept of a line. */
export const EXCERPT_BUDGET = { before: 6, after: 10, lines: 44, chars: 240 } as const;

const CTL_MSR = `0x${IA32_RTIT_CTL.address.toString(16)}`;

/** Where the excerpt goes, and why there. */
interface Anchor { readonly why: string; readonly from: number; readonly to: number; readonly at: number }

/** The excerpt of a `fail`, `corrupt` or `error` run; undefined for other verdicts or an empty transcript. */
export function failureExcerpt(lines: readonly TLine[], verdict: Verdict, firstPmi?: { raised: number; handled?: number }): Excerpt | undefined {
  if (!isBad(verdict) || lines.length === 0) return undefined;
  const a = anchorOf(lines, verdict, firstPmi);
  const cut = (s: string): string => (s.length > EXCERPT_BUDGET.chars ? `${s.slice(0, EXCERPT_BUDGET.chars)}…` : s);
  const shown = lines.filter((l) => l.n >= a.from && l.n <= a.to).slice(0, EXCERPT_BUDGET.lines);
  return { why: a.why, at: a.at, lines: shown.map((l) => ({ n: l.n, text: cut(l.raw) })) };
}

function anchorOf(lines: readonly TLine[], verdict: Verdict, firstPmi?: { raised: number; handled?: number }): Anchor {
  const around = (why: string, at: number, to = at): Anchor => ({ why, at, from: at - EXCERPT_BUDGET.before, to: to + EXCERPT_BUDGET.after });
  const corrupt = verdict === 'corrupt' ? lines.find((l) => l.op === 'corrupt') : undefined;
  if (corrupt) return around('the first corrupt line: PT reached memory the driver does not own', corrupt.n);
  const fault = lines.find((l) => l.op === 'fault' || l.f.fault !== undefined);
  if (fault) return around('the first fault line', fault.n);
  if (verdict === 'error') return around('the last line recorded before the target failed', lines[lines.length - 1]!.n);
  if (firstPmi) return around('the first PMI and its handling (the failed expectation names no transcript line)', firstPmi.raised, firstPmi.handled ?? firstPmi.raised);
  const stop = [...lines].reverse().find((l) => {
    const v = l.op === 'wrmsr' && strField(l, 'msr') === CTL_MSR ? hexField(l, 'value') : undefined;
    return v !== undefined && !IA32_RTIT_CTL.decode(v).TraceEn;
  });
  if (stop) return around('the final stop: the last write of IA32_RTIT_CTL that cleared TraceEn', stop.n);
  return around('the end of the transcript', lines[lines.length - 1]!.n);
}
