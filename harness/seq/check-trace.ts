// Checking the steps of the driver's trace session (docs/formats/seq.md "trace", "handle-pmi"): a
// `trace` step's request, checked by the driver's own checkRequest; a `handle-pmi` step, which
// only makes sense on the tables a `trace` built (the handler's ToPA manager knows its own tables
// and placements, nothing else: driver/topa/manager.ts); and the order of both with `collect`,
// which ends the session.
import { PtError } from '../../driver/base/errors.js';
import { checkRequest } from '../../driver/check-request.js';
import type { Field } from '../../driver/hw/field.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { CTL_FIELDS_NOT_OPTIONS, type CtlOptions, type TopaPolicy, type TopaRequest } from '../../driver/request.js';
import { POLICY_BRANCHES, type TopaBranch } from '../../driver/topa/policies.js';
import { capsOf, getProfile } from '../sim/profiles.js';
import { formatPos, SeqFileError, type SeqPos } from './errors.js';
import type { HandleExpect, Step, TopaTraceRequest } from './model.js';
import type { SeqPath, SeqSource } from './parse.js';

type Obj = Readonly<Record<string, unknown>>;
type TraceStep = Extract<Step, { kind: 'trace' }>;
type HandleStep = Extract<Step, { kind: 'handle-pmi' }>;

/** The capabilities a request is checked against before anything runs: the `full` profile's (every one). The CPU's own are checked when the step runs. */
const ALL_CAPS = capsOf(getProfile('full'));

/** A `trace` step: its request (ToPA output with a policy, CTL options by their IA32_RTIT_CTL field names) as the driver's checkRequest accepts it. */
export function traceStep(src: SeqSource, at: SeqPath, s: Obj, ctl: ReadonlyMap<string, bigint>): TraceStep {
  const t = s.trace as Obj;
  const policy = t.policy as TopaPolicy;
  const regionSize = t['region-size'] === undefined ? 4096 : Number(t['region-size']);
  if ((regionSize & (regionSize - 1)) !== 0) {
    throw new SeqFileError('bad-value', src.pos([...at, 'trace', 'region-size']), `region-size ${regionSize} is not a power of two (a ToPA output region is 4 KiB << 0..15: docs/sdm/output.md §4.2)`);
  }
  if (t.budget !== undefined && policy !== 'budget') {
    throw new SeqFileError('schema', src.pos([...at, 'trace', 'budget'], true), `'budget' is the memory budget of policy budget; this trace's policy is ${policy}`);
  }
  const output: TopaRequest = {
    scheme: 'topa', policy, regionSize, regions: t.regions === undefined ? 3 : Number(t.regions),
    ...(t['table-entries'] === undefined ? {} : { tableEntries: Number(t['table-entries']) }),
    ...(t.budget === undefined ? {} : { budget: Number(t.budget) }),
  };
  const request: TopaTraceRequest = { ...ctlOptions(src, at, ctl), output };
  try {
    checkRequest(ALL_CAPS, request, []);
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    throw new SeqFileError('bad-value', src.pos([...at, 'trace']), `the driver refuses this trace: ${e.message}`);
  }
  const opts = [...ctl].map(([f, x]) => `${f}=${x}`).join(' ');
  const text = `ToPA ${policy}: ${output.regions} × ${regionSize} bytes${output.tableEntries ? `, ${output.tableEntries} entries a table` : ''}${opts ? `, ${opts}` : ''}`;
  return { kind: 'trace', at: src.pos(at), cpu: s.cpu === undefined ? 0 : Number(s.cpu), request, text };
}

/** The request options of `ctl` (checked IA32_RTIT_CTL field values): a flag as a boolean, a wider field as its encoding. */
function ctlOptions(src: SeqSource, at: SeqPath, ctl: ReadonlyMap<string, bigint>): CtlOptions {
  const out: Record<string, boolean | number> = {};
  for (const [name, x] of ctl) {
    const setBy = (CTL_FIELDS_NOT_OPTIONS as Readonly<Record<string, string>>)[name];
    if (setBy !== undefined) {
      throw new SeqFileError('unknown-field', src.pos([...at, 'ctl', name], true), `IA32_RTIT_CTL.${name} is not an option of trace: it is set by ${setBy}`);
    }
    const field = (IA32_RTIT_CTL.fields as Readonly<Record<string, Field<unknown>>>)[name]!;
    out[name] = field.kind === 'flag' ? x === 1n : Number(x);
  }
  return out as CtlOptions;
}

/** A `handle-pmi` step: the policy it names (the trace's, checked by checkTraceOrder) and what it expects of the handler. */
export function handlePmiStep(src: SeqSource, at: SeqPath, s: Obj): HandleStep {
  const h = (s['handle-pmi'] ?? {}) as Obj, e = (s.expect ?? {}) as Obj;
  const expect: HandleExpect = { action: (e.action ?? 'handled') as HandleExpect['action'], branch: e.branch as TopaBranch | undefined };
  if (expect.branch !== undefined && expect.action !== 'handled') {
    throw new SeqFileError('bad-value', src.pos([...at, 'expect', 'branch']), `only a handled PMI refills: a branch cannot be expected with action ${expect.action}`);
  }
  return {
    kind: 'handle-pmi', at: src.pos(at), policy: h.policy as TopaPolicy | undefined, expect,
    where: { policy: h.policy === undefined ? undefined : src.pos([...at, 'handle-pmi', 'policy']), branch: e.branch === undefined ? undefined : src.pos([...at, 'expect', 'branch']) },
  };
}

/** The open trace session, in file order: the `trace` step that opened it. */
type Open = TraceStep | undefined;

/**
 * Walks `steps` as they will run and refuses, at its place, a `handle-pmi` with no trace session
 * open, one naming another policy than the session's or a branch that policy never takes, and a
 * `trace` while a session is open. A repeated body is walked as many times as it runs (at most 3:
 * the session is open or not, so the walk repeats from there).
 */
export function checkTraceOrder(steps: readonly Step[], open: Open = undefined): Open {
  for (const s of steps) {
    switch (s.kind) {
      case 'trace':
        if (open) throw new SeqFileError('trace-state', s.at, `a trace session is already open (the trace at ${line(open.at)}): collect ends it before another trace`);
        open = s;
        break;
      case 'collect':
        open = undefined;
        break;
      case 'handle-pmi':
        checkHandle(s, open);
        break;
      case 'repeat':
        for (let i = 0; i < Math.min(s.times, 3); i++) open = checkTraceOrder(s.steps, open);
        break;
      default:
        break;
    }
  }
  return open;
}

function checkHandle(s: HandleStep, open: Open): void {
  if (!open) {
    throw new SeqFileError('trace-state', s.at, "handle-pmi runs the driver's PMI handler, which acts on the ToPA tables the driver built: it needs an open trace session (a trace step before it, not yet ended by collect)");
  }
  const policy = open.request.output.policy;
  if (s.policy !== undefined && s.policy !== policy) {
    throw new SeqFileError('bad-value', s.where.policy!, `the trace at ${line(open.at)} built its tables for policy ${policy}; the handler refills with that policy, so handle-pmi cannot use ${s.policy}`);
  }
  const b = s.expect.branch;
  if (b !== undefined && !POLICY_BRANCHES[policy].includes(b)) {
    throw new SeqFileError('bad-value', s.where.branch!, `policy ${policy} never takes branch ${b} (its branches: ${POLICY_BRANCHES[policy].join(', ')})`);
  }
}

const line = (p: SeqPos): string => formatPos(p).replace(/:\d+$/, '');
