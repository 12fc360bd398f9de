// The PMI timeline of a run (docs/report.md "PMI timeline"), from the transcript alone, so it reads
// the same for the model, a QEMU guest and a lab machine: a `pmi` event raises a PMI; the handler's
// `note` names the branch of the ToPA PMI algorithm it took; its write of bit 55 to
// IA32_PERF_GLOBAL_STATUS_RESET acknowledges the oldest PMI pending (a platform top half may have
// done so already: the `pmi` line says `acked=true`), and the `pmi-enable` after it (the LVT unmask)
// ends the handling (docs/transcript.md "Order rules checked on every run"). The
// bytes are how far the output pointer the handler read moved since the previous PMI's (or since
// the driver last programmed it), on through an END into a chained table: what the CPU wrote in between.
import { IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';
import { PointerTracker, type PointerSample } from './pointer-reads.js';
import { TopaState } from './topa-state.js';
import { hexField, strField, type TLine } from './transcript-lines.js';
import type { PmiTimeline, PmiView } from './view-model.js';


/** PMIs listed per run at most (the count says how many there were). */
export const PMI_BUDGET = 400;

/** A PMI while it is being followed; `handledLine` marks where its handling ended. */
interface Followed {
  view: { -readonly [K in keyof PmiView]: PmiView[K] };
  handledLine?: number;
  acked: boolean;
  unmasked: boolean;
  sawPointer: boolean;
  sawStatus: boolean;
}

const STATUS_MSR = `0x${IA32_RTIT_STATUS.address.toString(16)}`;
const RESET_MSR = `0x${IA32_PERF_GLOBAL_STATUS_RESET.address.toString(16)}`;
const STATUS_FLAGS = ['Stopped', 'Error', 'PendTopaPMI'] as const;

/** The PMI timeline, with the transcript lines where the first PMI was raised and handled (for the excerpt). */
export function pmiTimeline(lines: readonly TLine[]): { timeline: PmiTimeline; first?: { raised: number; handled?: number } } {
  const topa = new TopaState(), ptrs = new PointerTracker();
  const all: Followed[] = [];
  const posAt = new Map<bigint, number>();
  // The oldest PMI, in the order raised, still waiting for `what` (a handled PMI waits for nothing).
  const oldest = (what: (p: Followed) => boolean): Followed | undefined => all.find((p) => !p.unmasked && what(p));
  const handled = (p: Followed, l: TLine): void => { p.view.handled = l.t; p.handledLine = l.n; };
  for (const l of lines) {
    topa.apply(l);
    const s = ptrs.apply(l);
    if (l.op === 'pmi') {
      const gs = hexField(l, 'value'), at = strField(l, 'result') ?? '';
      const topaPmi = gs !== undefined && IA32_PERF_GLOBAL_STATUS.decode(gs).Trace_ToPA_PMI;
      // A platform top half may have acknowledged it and cleared TraceEn already (docs/transcript.md).
      if (/\btraceEnCleared=true\b/.test(at)) ptrs.markStopped(l.cpu);
      all.push({
        view: { line: l.n, cpu: l.cpu, raised: l.t, handled: null, branch: null, bytes: null, status: '', topa: topaPmi },
        // Another counter's PMI is listed, but the ToPA handler's lines are never its.
        acked: /\backed=true\b/.test(at), unmasked: !topaPmi, sawPointer: false, sawStatus: false,
      });
    } else if (l.op === 'note') {
      const m = /^pmi: (.+)$/.exec(strField(l, 'value') ?? ''), p = oldest((x) => x.view.branch === null);
      if (m && p) p.view.branch = m[1]!;
    } else if (l.op === 'wrmsr' && strField(l, 'msr') === RESET_MSR && l.f.fault === undefined) {
      const v = hexField(l, 'value'), p = oldest((x) => !x.acked);
      if (v !== undefined && IA32_PERF_GLOBAL_STATUS_RESET.decode(v).Trace_ToPA_PMI && p) {
        p.acked = true;
        handled(p, l);
      }
    } else if (l.op === 'pmi-enable') {
      const p = oldest((x) => x.acked);
      if (p) {
        p.unmasked = true;
        handled(p, l);
      }
    } else if (l.op === 'rdmsr' && strField(l, 'msr') === STATUS_MSR && ptrs.isStopped(l.cpu)) {
      const v = hexField(l, 'result'), p = oldest((x) => !x.sawStatus);
      if (v !== undefined && p) {
        const d = IA32_RTIT_STATUS.decode(v);
        p.view.status = STATUS_FLAGS.filter((f) => d[f]).join(' ');
        p.sawStatus = true;
      }
    }
    if (s !== undefined && s.mode === 'topa') pointer(s, topa, posAt, s.how === 'read' && ptrs.isStopped(l.cpu) ? oldest((x) => !x.sawPointer) : undefined);
  }
  const first = all[0];
  return {
    timeline: { pmis: all.slice(0, PMI_BUDGET).map((p) => p.view), count: all.length },
    ...(first ? { first: { raised: first.view.line, ...(first.handledLine === undefined ? {} : { handled: first.handledLine }) } } : {}),
  };
}

/**
 * A pointer sample: a handler's read gives its PMI the bytes written since the table's last
 * position (a position that went back wrapped around the table once); the driver programming the
 * pointer sets the position.
 */
function pointer(s: PointerSample, topa: TopaState, posAt: Map<bigint, number>, p: Followed | undefined): void {
  const outs = topa.outputs(s.table);
  if (outs.length === 0) return;
  const pos = outs.filter(([i]) => i < s.index).reduce((n, [, e]) => n + e.size, 0) + s.offset;
  if (s.how === 'write') {
    posAt.set(s.table, pos);
    return;
  }
  if (p === undefined) return;
  p.sawPointer = true;
  const before = posAt.get(s.table), total = (t: bigint): number => topa.outputs(t).reduce((n, [, e]) => n + e.size, 0);
  if (before !== undefined) {
    p.view.bytes = pos >= before ? pos - before : pos + total(s.table) - before;
  } else {
    // The pointer reached this table through another's END (a chain): the rest of that one, then this one up to here.
    const from = topa.linkingTo(s.table).find((t) => posAt.has(t));
    if (from !== undefined) {
      p.view.bytes = total(from) - posAt.get(from)! + pos;
      posAt.delete(from);
    }
  }
  posAt.set(s.table, pos);
}
