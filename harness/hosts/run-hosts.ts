// `ptlab run --hosts FILE` (docs/hosts.md): the same suite on every selected lab machine, in
// parallel, one runSuite per host with that host's own reach and its own directory OUT/<name>/ (a
// normal suite directory: run directories, junit.xml, results.jsonl), then OUT/junit.xml and
// OUT/results.jsonl over all hosts. A host that cannot be used, or dies, costs only its own
// cells: runSuite already turns a death into errors for the runs left; a host that never opened
// gets every cell as an error here (not-run.ts). The others run to their end.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { parseResultsIndex, RESULTS_FILE, type TimedResult } from '../rundir/results-index.js';
import { prepareOut } from '../report/out-dir.js';
import { runSuite, type SuiteOptions, type SuiteOutcome, type SuitePlan } from '../runner/suite.js';
import { TargetUnavailableError } from '../runner/suite-target.js';
import { hostsIndexText, hostsJunitXml } from './hosts-report.js';
import { reachOf, type LabHost } from './inventory.js';
import { notRunResults, writeNotRun } from './not-run.js';
import { replaceFile } from '../report/owned-files.js';

/** How a host's suite ended: ran to its end, stopped early (died, interrupted, a write failed), or never opened. */
export type HostStatus = 'complete' | 'incomplete' | 'unavailable';

/** What one host did. */
export interface HostRun {
  readonly host: LabHost;
  /** OUT/<name>/. */
  readonly out: string;
  readonly status: HostStatus;
  /** Why the host's suite is incomplete or the host unavailable. */
  readonly reason?: string;
  /** What the user can do about an unavailable host (TargetUnavailableError.hint). */
  readonly hint?: string;
  /** Every run of the host, with its time (its results.jsonl). */
  readonly timed: readonly TimedResult[];
  /** runSuite's outcome, when the host opened. */
  readonly outcome?: SuiteOutcome;
}

/** What `runHosts` produced. */
export interface HostsOutcome {
  /** One per host, in the order given. */
  readonly hosts: readonly HostRun[];
  /** OUT/junit.xml or OUT/results.jsonl could not be written. */
  readonly writeError?: string;
}

/** How the hosts run: runSuite's options, given per host. */
export interface HostsOptions {
  /** A host's runSuite options (progress, opened), built for it. */
  readonly suite?: (host: LabHost) => Pick<SuiteOptions, 'progress' | 'opened'>;
  /** As SuiteOptions.signal and .now, for every host. */
  readonly signal?: AbortSignal;
  readonly now?: AbortSignal;
}

/**
 * Runs `plan` (its target 'ssh'; `out` the top directory OUT) on every host of `hosts` at once and
 * writes OUT/junit.xml and OUT/results.jsonl. Throws PtError('bad_config') before anything runs
 * when OUT is refused (prepareOut); rethrows, after every host has ended, an error that is no
 * target's (a bug must not pass as an unavailable host).
 */
export async function runHosts(plan: SuitePlan, hosts: readonly LabHost[], o: HostsOptions = {}): Promise<HostsOutcome> {
  await prepareOut(plan.out, plan.force);
  const settled = await Promise.allSettled(hosts.map((h) => runHost(plan, h, o)));
  const bug = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (bug) throw bug.reason;
  const runs = settled.map((s) => (s as PromiseFulfilledResult<HostRun>).value);
  const parts = runs.map((r) => ({ name: r.host.name, timed: r.timed, ...(r.reason === undefined ? {} : { incomplete: r.reason }) }));
  let writeError: string | undefined;
  await replaceFile(join(plan.out, 'junit.xml'), hostsJunitXml(parts, plan.lastSeed !== undefined))
    .then(() => replaceFile(join(plan.out, RESULTS_FILE), hostsIndexText(parts)))
    .catch((e: unknown) => { writeError = (e as Error).message; });
  return { hosts: runs, ...(writeError === undefined ? {} : { writeError }) };
}

/** One host's suite in OUT/<name>/; a host that cannot be opened gets its cells as errors. */
async function runHost(plan: SuitePlan, host: LabHost, o: HostsOptions): Promise<HostRun> {
  const out = join(plan.out, host.name);
  const own: SuitePlan = { ...plan, out, reach: reachOf(host) };
  const given = o.suite?.(host) ?? {};
  let opened = false;
  let outcome: SuiteOutcome;
  try {
    outcome = await runSuite(own, {
      ...given, opened: (t) => { opened = true; given.opened?.(t); },
      ...(o.signal ? { signal: o.signal } : {}), ...(o.now ? { now: o.now } : {}),
    });
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    // The target opened and the suite then stopped on an error that is no target's: runSuite wrote
    // the runs it made; the host is incomplete with that error.
    if (opened) return { host, out, status: 'incomplete', timed: await timedOf(out, []), reason: `ptlab stopped: ${e.message}` };
    // Down, refusing (no PT), a key it will not take, or interrupted while connecting: nothing ran.
    const interrupted = e.code === 'aborted';
    const reason = interrupted ? `interrupted while connecting to ${host.name}` : e.message;
    const timed = notRunResults(plan, host, interrupted ? reason : `the host is unavailable: ${reason}`);
    const writeError = await writeNotRun(out, plan, timed, reason).then(() => undefined, (w: unknown) => (w as Error).message);
    const hint = e instanceof TargetUnavailableError ? e.hint : undefined;
    return {
      host, out, status: interrupted ? 'incomplete' : 'unavailable', timed,
      reason: writeError === undefined ? reason : `${reason}; and cannot write ${out}: ${writeError}`, ...(hint ? { hint } : {}),
    };
  }
  const timed = await timedOf(out, outcome.results.map((result) => ({ result, ms: 0 })));
  const reason = outcome.incomplete?.reason
    ?? (outcome.junitError ? `cannot write ${out}/junit.xml: ${outcome.junitError}` : outcome.indexError ? `cannot write ${out}/${RESULTS_FILE}: ${outcome.indexError}` : undefined);
  return { host, out, status: reason === undefined ? 'complete' : 'incomplete', timed, outcome, ...(reason === undefined ? {} : { reason }) };
}

/** The runs of the suite in `out` with their times, from its results.jsonl (runSuite's own index); `fallback` when it cannot be read. */
async function timedOf(out: string, fallback: TimedResult[]): Promise<TimedResult[]> {
  return readFile(join(out, RESULTS_FILE), 'utf8').then(parseResultsIndex, () => fallback);
}
