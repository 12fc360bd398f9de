// result.json (docs/design.md "The run directory"): the verdict of one scenario
// run with its expectations and figures.

/** One line of result.json `expectations`. */
export interface Expectation {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** Figures of result.json: numbers, or small objects of numbers. */
export type Figures = Record<string, number | string | boolean | null>;

/**
 * pass and fail judge the driver; corrupt: PT reached memory the driver does not own (the model's
 * memory oracle, docs/design.md "The memory oracle"), whatever the expectations said; skip: the
 * scenario does not apply; error: the run could not be judged because the target failed (it died,
 * or stopped answering) or it was never made.
 */
export type Verdict = 'pass' | 'fail' | 'corrupt' | 'skip' | 'error';

/** Every verdict, in the order summaries list them. */
export const VERDICTS: readonly Verdict[] = ['pass', 'fail', 'corrupt', 'skip', 'error'];

/** A verdict that judged the driver wrong: `fail`, or the worse `corrupt` (exit status 1). */
export function isFailure(v: Verdict | string): boolean {
  return v === 'fail' || v === 'corrupt';
}

/** A run whose directory a sweep keeps and whose transcript a report excerpts: failed, corrupt or errored. */
export function isBad(v: Verdict | string): boolean {
  return isFailure(v) || v === 'error';
}

/** One corrupt event of the memory oracle, as result.json keeps it (hex addresses). */
export interface CorruptRecord {
  /** trace-write, topa-read, output-base or free-while-tracing. */
  readonly kind: string;
  readonly cpu: number;
  readonly addr: string;
  readonly length: number;
  readonly detail: string;
}

/** A buffer the run could not free safely (tracing could not be confirmed off), left allocated on the target. */
export interface LeakRecord {
  /** Absent for an allocation whose answer was lost: the target may hold it, at an unknown address. */
  readonly base?: string;
  readonly size: number;
  /** What the buffer held ("ToPA table", "output region"). */
  readonly role: string;
}

/** The content of result.json, keys in the documented order. */
export interface ResultJson {
  readonly scenario: string;
  readonly target: string;
  readonly profile: string;
  readonly seed: number;
  readonly verdict: Verdict;
  readonly reason?: string;
  readonly expectations: readonly Expectation[];
  readonly figures: Figures;
  /** The memory oracle's events (verdict `corrupt`); absent when there were none. */
  readonly corrupt?: readonly CorruptRecord[];
  /** Buffers left allocated because tracing could not be confirmed off before freeing them; absent when none. */
  readonly leaked?: readonly LeakRecord[];
  /** The libipt command lines that decode this run's trace.pt as ptlab did (run inside the run directory). */
  readonly libipt?: { readonly ptdump: string; readonly ptxed: string };
}

/** pass when every expectation holds (and there is at least one); fail otherwise; skip when `skipReason` is set. */
export function verdictOf(expectations: readonly Expectation[], skipReason?: string): { verdict: Verdict; reason?: string } {
  if (skipReason !== undefined) return { verdict: 'skip', reason: skipReason };
  if (expectations.length === 0) return { verdict: 'fail', reason: 'the scenario recorded no expectation' };
  const bad = expectations.find((e) => !e.ok);
  return bad ? { verdict: 'fail', reason: `${bad.name}: ${bad.detail}` } : { verdict: 'pass' };
}

/**
 * `r` with the memory oracle's events: verdict `corrupt` whenever there is one, which no
 * expectation and no target failure can mask, the first event as its reason.
 */
export function withCorruption(r: ResultJson, events: readonly CorruptRecord[], more = 0): ResultJson {
  if (events.length === 0) return r;
  const first = events[0]!;
  const total = events.length + more;
  const was = r.verdict === 'fail' ? ` (it also failed: ${r.reason ?? ''})` : r.verdict === 'error' ? ` (it was also an error: ${r.reason ?? ''})` : '';
  return {
    ...r, verdict: 'corrupt',
    reason: `PT reached memory the driver does not own (${first.kind}): ${first.detail}${total > 1 ? ` (+${total - 1} more)` : ''}${was}`,
    corrupt: events,
  };
}

/** The result of a run the target kept from being judged (or that was never made): `reason` says why. */
export function errorResult(base: Pick<ResultJson, 'scenario' | 'target' | 'profile' | 'seed'>, reason: string, r?: Pick<ResultJson, 'expectations' | 'figures'>): ResultJson {
  return { ...base, verdict: 'error', reason, expectations: r?.expectations ?? [], figures: r?.figures ?? {} };
}

/** result.json text (2-space indented, trailing newline). */
export function resultJsonText(r: ResultJson): string {
  const ordered = {
    scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, verdict: r.verdict,
    ...(r.reason === undefined ? {} : { reason: r.reason }), expectations: r.expectations, figures: r.figures,
    ...(r.corrupt === undefined ? {} : { corrupt: r.corrupt }),
    ...(r.leaked === undefined ? {} : { leaked: r.leaked }),
    ...(r.libipt === undefined ? {} : { libipt: r.libipt }),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}
