// The SDM's ordering rules for a ToPA PMI handler (docs/sdm/output.md §7.1, §7.2,
// §7.4; docs/sdm/msrs.md §11, §11.1), checked on a transcript. They hold on every
// target, real hardware included, because the transcript records what the
// driver did — MSR writes, ToPA entry writes and the LVT unmask — in order:
//
//   refill    no ToPA entry, OUTPUT_BASE, OUTPUT_MASK_PTRS or STATUS is written
//             after CTL got TraceEn=1 back (tables and pointers change only
//             with TraceEn=0; a CPU may have read the table ahead);
//   ack       every ToPA PMI (GLOBAL_STATUS[55]) is acknowledged through
//             IA32_PERF_GLOBAL_STATUS_RESET after it was delivered (a handler
//             may run late), unless the top half already did;
//   unmask    the LVT entry is unmasked only after that acknowledgement and
//             after the STATUS write that clears PendTopaPMI;
//   status    a STATUS write of a handler (or of the final stop) changes only
//             Stopped and PendTopaPMI of the STATUS it read: PacketByteCnt,
//             PendPSB and Error are the CPU's and must survive it;
//   needless  a handler writes no IA32_RTIT_* MSR with the value it already
//             holds (the CTL the PMI found, or what the handler last read or
//             wrote there): in a guest every WRMSR is a VM exit, and the
//             trace-off window is what such a write costs. Nor does a context
//             restore write an MSR of XSAVE state component 8 just before the
//             XRSTORS that loads it (docs/sdm/xsave.md §1.1: only ADDR2/ADDR3
//             are switched by hand).
import { IA32_PERF_GLOBAL_STATUS_RESET, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS, TRACE_TOPA_PMI } from '../../../driver/hw/msrs.js';
import { PT_STATE_LAYOUT } from '../../../driver/hw/xsave.js';
import { hex } from '../../../driver/base/hex.js';
import type { TranscriptLine } from '../../rundir/transcript-line.js';

const CTL = hex(IA32_RTIT_CTL.address), RESET = hex(IA32_PERF_GLOBAL_STATUS_RESET.address), STATUS = hex(IA32_RTIT_STATUS.address);
const NO_WRITE_WHILE_TRACING = new Set([hex(IA32_RTIT_OUTPUT_BASE.address), hex(IA32_RTIT_OUTPUT_MASK_PTRS.address), STATUS]);
const EVENTS: ReadonlySet<TranscriptLine['op']> = new Set(['pmi', 'slice', 'exit', 'fault']);

/** One broken rule: which, at which transcript line, in words. */
export interface OrderProblem {
  readonly rule: 'refill' | 'ack' | 'unmask' | 'status' | 'needless';
  readonly seq: number;
  readonly detail: string;
}

/** Every ToPA PMI's handler segment in `lines` (from the `pmi` line to the next event) checked against the rules. */
export function handlerOrderProblems(lines: readonly TranscriptLine[]): OrderProblem[] {
  const out: OrderProblem[] = [];
  const owed: TranscriptLine[] = []; // ToPA PMIs not acknowledged yet, oldest first
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    // GLOBAL_STATUS[55] is one bit: one acknowledgement answers every ToPA PMI still owed (PMIs that
    // came while one was held, as where perf unmasks LVTPC at once, merge into it).
    if (l.op === 'wrmsr' && l.msr === RESET && l.fault === undefined && (BigInt(l.value!) & TRACE_TOPA_PMI) !== 0n) owed.length = 0;
    if (l.op === 'exit') out.push(...statusProblems(lines.slice(i + 1)));
    if (l.op === 'xrstors') out.push(...overwrittenByXrstors(lines, i));
    if (l.op !== 'pmi' || l.value === undefined || (BigInt(l.value) & TRACE_TOPA_PMI) === 0n) continue;
    if (!/acked=true/.test(l.result ?? '')) owed.push(l);
    let end = i + 1;
    while (end < lines.length && !EVENTS.has(lines[end]!.op)) end++;
    const seg = lines.slice(i + 1, end);
    out.push(...segmentProblems(seg), ...statusProblems(seg), ...needlessWrites(l, seg));
  }
  for (const ev of owed) out.push({ rule: 'ack', seq: ev.seq, detail: `the ToPA PMI at seq ${ev.seq} was never acknowledged through IA32_PERF_GLOBAL_STATUS_RESET` });
  return out.sort((a, b) => a.seq - b.seq);
}

/** The refill and unmask rules inside one handler segment. */
function segmentProblems(seg: readonly TranscriptLine[]): OrderProblem[] {
  const out: OrderProblem[] = [];
  const writes = (msr: string): TranscriptLine[] => seg.filter((l) => l.op === 'wrmsr' && l.msr === msr && l.fault === undefined);
  const resumed = seg.findIndex((l) => l.op === 'wrmsr' && l.msr === CTL && l.fault === undefined && (BigInt(l.value!) & 1n) === 1n);
  if (resumed >= 0) {
    const late = seg.slice(resumed + 1).find((l) => l.op === 'topa' || (l.op === 'wrmsr' && NO_WRITE_WHILE_TRACING.has(l.msr!)));
    if (late) {
      out.push({ rule: 'refill', seq: late.seq, detail: `${late.op} ${late.msr ?? `${late.addr}[${late.index}]`} after CTL was restored with TraceEn=1 (seq ${seg[resumed]!.seq})` });
    }
  }
  const acks = writes(RESET).filter((l) => (BigInt(l.value!) & TRACE_TOPA_PMI) !== 0n);
  const unmask = seg.find((l) => l.op === 'pmi-enable');
  if (unmask) {
    const after = [...acks, ...writes(STATUS)].filter((l) => l.seq > unmask.seq);
    if (after.length) {
      out.push({ rule: 'unmask', seq: unmask.seq, detail: `the LVT was unmasked (seq ${unmask.seq}) before ${after.map((l) => `WRMSR ${l.msr} (seq ${l.seq})`).join(', ')}` });
    }
  }
  return out;
}

/** STATUS bits a handler may change: Stopped (5) and PendTopaPMI (7) (docs/sdm/msrs.md §4). */
const HANDLER_STATUS_BITS = (1n << 5n) | (1n << 7n);

/** The status rule in one segment: each STATUS write against the STATUS read first in it. */
function statusProblems(seg: readonly TranscriptLine[]): OrderProblem[] {
  const read = seg.find((l) => l.op === 'rdmsr' && l.msr === STATUS && l.result !== undefined);
  if (!read) return [];
  return seg.filter((l) => l.op === 'wrmsr' && l.msr === STATUS && l.fault === undefined && ((BigInt(l.value!) ^ BigInt(read.result!)) & ~HANDLER_STATUS_BITS) !== 0n)
    .map((l) => ({ rule: 'status' as const, seq: l.seq, detail: `STATUS written ${l.value} over ${read.result} (seq ${read.seq}) changes more than Stopped and PendTopaPMI` }));
}

/** The PT MSRs (IA32_RTIT_*, 0x560–0x58F): written by the driver only, read back as written while TraceEn=0. */
const isPtMsr = (msr: string): boolean => { const n = Number.parseInt(msr, 16); return n >= 0x560 && n <= 0x58f; };

/**
 * The needless rule in one handler segment: a WRMSR of a PT MSR with the value it holds. Known values
 * are the CTL the PMI found (the `pmi` line's `ctl=`, without TraceEn when the top half cleared it),
 * and every read and write before, in the segment;
 * an XRSTORS loads new ones.
 */
function needlessWrites(pmi: TranscriptLine, seg: readonly TranscriptLine[]): OrderProblem[] {
  const known = new Map<string, bigint>();
  // The top half may have cleared TraceEn already (`traceEnCleared=true`): CTL then holds the rest.
  const ctl = /ctl=(0x[0-9a-f]+)/.exec(pmi.result ?? '');
  if (ctl) known.set(CTL, BigInt(ctl[1]!) & (/traceEnCleared=true/.test(pmi.result ?? '') ? ~1n : ~0n));
  const out: OrderProblem[] = [];
  for (const l of seg) {
    if (l.op === 'xrstors') known.clear();
    if ((l.op !== 'rdmsr' && l.op !== 'wrmsr') || l.fault !== undefined || !isPtMsr(l.msr!)) continue;
    const v = BigInt((l.op === 'rdmsr' ? l.result : l.value)!);
    if (l.op === 'wrmsr' && known.get(l.msr!) === v) {
      out.push({ rule: 'needless', seq: l.seq, detail: `WRMSR ${l.msr} ${l.value} writes the value the MSR already holds` });
    }
    known.set(l.msr!, v);
  }
  return out;
}

/** The MSRs of XSAVE state component 8 (docs/sdm/xsave.md §1.1), as the transcript writes them. */
const COMPONENT_8 = new Set(PT_STATE_LAYOUT.map((f) => hex(f.msr.address)));

/** The WRMSRs right before the XRSTORS at `at` (no other line between) of MSRs it loads anyway. */
function overwrittenByXrstors(lines: readonly TranscriptLine[], at: number): OrderProblem[] {
  const out: OrderProblem[] = [];
  for (let i = at - 1; i >= 0 && lines[i]!.op === 'wrmsr'; i--) {
    const l = lines[i]!;
    if (l.fault === undefined && COMPONENT_8.has(l.msr!)) {
      out.push({ rule: 'needless', seq: l.seq, detail: `WRMSR ${l.msr} just before the XRSTORS at seq ${lines[at]!.seq}, which loads it` });
    }
  }
  return out;
}
