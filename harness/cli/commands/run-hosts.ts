// `ptlab run … --hosts FILE [--tags T1,T2]` (docs/hosts.md): the suite on every lab machine of an
// inventory, in parallel (harness/hosts/run-hosts.ts). This file is the command-line side: the
// options --hosts replaces, reading and checking the inventory before anything runs (exit 2 at
// file:line:col), progress per host on stderr, the summary and the exit status, which is decided
// over all hosts (docs/exit-codes.md, docs/hosts.md "Exit status").
import { PtError } from '../../../driver/base/errors.js';
import { checkHostFiles } from '../../hosts/host-files.js';
import { hostsSummary, hostTarget } from '../../hosts/hosts-summary.js';
import { readInventory, type LabHost } from '../../hosts/inventory.js';
import { runHosts, type HostsOutcome } from '../../hosts/run-hosts.js';
import { parseTags, selectHosts } from '../../hosts/select.js';
import { isFailure } from '../../rundir/result.js';
import { verdictCounts } from '../../report/summary.js';
import type { SuitePlan } from '../../runner/suite.js';
import { EXIT, STOP_SIGNALS, type StopSignal } from '../exit-codes.js';
import { writeReportAfter } from '../suite-report.js';
import type { CliIo } from '../main.js';
import { suiteProgress } from '../progress.js';

/** `--hosts FILE [--tags T1,T2]`. */
export interface HostsRequest {
  readonly file: string;
  /** A host is selected when it has any of these tags; undefined: every host. */
  readonly tags?: readonly string[];
}

/** A `ptlab run` request with --hosts. */
export interface HostsRunRequest extends SuitePlan {
  readonly json?: boolean;
  readonly hosts: HostsRequest;
}

/** The options an inventory replaces: every host's connection is in the file, and each host runs the whole matrix. */
const REPLACED = ['target', 'host', 'port', 'user', 'key', 'known-host', 'pt', 'accel', 'shard'];

/** `--hosts`/`--tags` of parsed options `v`; undefined without --hosts. Throws PtError('bad_config') for options that do not combine. */
export function hostsRequestOf(v: Readonly<Record<string, unknown>>): HostsRequest | undefined {
  const file = v['hosts'], tags = v['tags'];
  if (typeof file !== 'string') {
    if (tags !== undefined) throw new PtError('bad_config', '--tags selects hosts of an inventory: give --hosts FILE too');
    return undefined;
  }
  const clash = REPLACED.filter((o) => v[o] !== undefined).map((o) => `--${o}`);
  if (clash.length) {
    throw new PtError('bad_config', `--hosts gives each machine's connection in the inventory and runs the whole matrix on each: ${clash.join(', ')} ${clash.length > 1 ? 'do' : 'does'} not combine with it`);
  }
  return { file, ...(typeof tags === 'string' ? { tags: parseTags(tags) } : {}) };
}

/** What SignalStop (run.ts) gives a suite: the soft and hard stops, and the first signal. */
export interface Stops {
  readonly soft: AbortController;
  readonly hard: AbortController;
  readonly first: StopSignal | undefined;
}

/** The exit status over all hosts (docs/hosts.md "Exit status"). */
export function exitOfHosts(o: HostsOutcome, signal: StopSignal | undefined): number {
  if (signal !== undefined) return STOP_SIGNALS[signal];
  if (o.hosts.every((h) => h.status === 'unavailable')) return EXIT.unavailable;
  if (o.writeError !== undefined || o.hosts.some((h) => h.status !== 'complete')) return EXIT.incomplete;
  return o.hosts.some((h) => h.timed.some((t) => isFailure(t.result.verdict))) ? EXIT.failed : EXIT.ok;
}

/** `ptlab run … --hosts FILE`: after the command line was parsed. */
export async function runHostsCommand(plan: HostsRunRequest, io: CliIo, stop: Stops): Promise<number> {
  let hosts: LabHost[];
  try {
    const inv = await readInventory(plan.hosts.file);
    hosts = selectHosts(inv, plan.hosts.tags);
    await checkHostFiles(inv, hosts);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(`ptlab run: ${e.message}`);
    return EXIT.usage;
  }
  const sweep = plan.lastSeed !== undefined;
  const seedsText = sweep ? `seeds ${plan.seed}-${plan.lastSeed}` : `seed ${plan.seed}`;
  io.err(`ptlab run: ${plan.scenarios.length} scenario(s) on ${hosts.length} host(s) of ${plan.hosts.file} (${hosts.map((h) => h.name).join(', ')}), ${seedsText} → ${plan.out}/<host>/`);
  let outcome: HostsOutcome;
  try {
    outcome = await runHosts(plan, hosts, {
      // Hosts run at once, so no live line: plain progress lines, each named by its host.
      suite: (h) => ({
        progress: suiteProgress({ line: (l) => io.err(`[${h.name}] ${l}`) }, { sweep }),
        opened: (t) => io.err(`ptlab run: [${h.name}] ${t.description} is ready`),
      }),
      signal: stop.soft.signal,
      now: stop.hard.signal,
    });
  } catch (e) {
    if (!(e instanceof PtError) || e.code !== 'bad_config') throw e;
    io.err(`ptlab run: ${e.message}`);
    return EXIT.usage;
  }
  const code = exitOfHosts(outcome, stop.first);
  for (const h of outcome.hosts) {
    if (h.outcome?.disposeError) io.err(`ptlab run: [${h.host.name}] stopping the target: ${h.outcome.disposeError}`);
    if (h.status === 'unavailable') io.err(`ptlab run: [${h.host.name}] UNAVAILABLE: ${h.reason ?? ''}${h.hint ? `\nptlab run: [${h.host.name}] ${h.hint}` : ''}`);
    if (h.status === 'incomplete') io.err(`ptlab run: [${h.host.name}] INCOMPLETE: ${h.reason ?? ''}`);
  }
  if (outcome.writeError) io.err(`ptlab run: cannot write ${plan.out}/junit.xml or results.jsonl: ${outcome.writeError}`);
  const sections = new Map(outcome.hosts.flatMap((h) => [...(h.outcome?.sections ?? [])]));
  const report = await writeReportAfter(plan.out, io, 'run', sections);
  if (plan.json) {
    const all = outcome.hosts.flatMap((h) => h.timed.map((t) => ({ host: h.host.name, ...t.result })));
    io.out(JSON.stringify({
      out: plan.out, inventory: plan.hosts.file, ...(plan.hosts.tags ? { tags: plan.hosts.tags } : {}), seeds: { from: plan.seed, to: plan.lastSeed ?? plan.seed },
      hosts: outcome.hosts.map((h) => ({
        name: h.host.name, target: hostTarget(h.host), status: h.status, ...(h.reason === undefined ? {} : { reason: h.reason }), out: h.out,
        counts: verdictCounts(h.timed.map((t) => t.result)),
      })),
      counts: verdictCounts(all), exitCode: code, junit: `${plan.out}/junit.xml`, ...(report ? { report } : {}),
      runs: all.map((r) => ({ host: r.host, scenario: r.scenario, target: r.target, profile: r.profile, seed: r.seed, verdict: r.verdict, ...(r.reason === undefined ? {} : { reason: r.reason }) })),
    }));
    return code;
  }
  io.out(`${hostsSummary(outcome.hosts)}run directories: ${plan.out}/<host>/${sweep ? 'seed-<S>/' : ''}<scenario>/<profile>/, junit: ${plan.out}/junit.xml (one testsuite per host)${report ? `\nreport: ${report}` : ''}`);
  return code;
}
