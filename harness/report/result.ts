// result.json (docs/design.md "The run directory"): the verdict of one scenario
// run with its expectations and figures.
import type { Expectation, Figures } from '../scenarios/context.js';

/**
 * pass and fail judge the driver; skip: the scenario does not apply; error: the run could not be
 * judged because the target failed (it died, or stopped answering) or it was never made.
 */
export type Verdict = 'pass' | 'fail' | 'skip' | 'error';

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

/** The result of a run the target kept from being judged (or that was never made): `reason` says why. */
export function errorResult(base: Pick<ResultJson, 'scenario' | 'target' | 'profile' | 'seed'>, reason: string, r?: Pick<ResultJson, 'expectations' | 'figures'>): ResultJson {
  return { ...base, verdict: 'error', reason, expectations: r?.expectations ?? [], figures: r?.figures ?? {} };
}

/** result.json text (2-space indented, trailing newline). */
export function resultJsonText(r: ResultJson): string {
  const ordered = {
    scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, verdict: r.verdict,
    ...(r.reason === undefined ? {} : { reason: r.reason }), expectations: r.expectations, figures: r.figures,
    ...(r.libipt === undefined ? {} : { libipt: r.libipt }),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}
