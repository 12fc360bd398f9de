// tracestop-in-skid: a TraceStop (docs/sdm/README.md §4.4) while a ToPA PMI is
// still in its skid (docs/sdm/output.md §4.5). No more bytes come after a
// TraceStop, so the model raises the PMI at once, and the handler finds
// TraceEn=1 with STATUS.Stopped=1 that no ToPA STOP set: the pointer rests in
// the middle of the STOP guard region (STOP=1, not full). Only a full STOP entry
// is a ToPA STOP (§4.4, §7.2): the handler must leave Stopped set, leave the
// pointer where it is (no move past the entry), record no "stop" loss, and the
// trace must still end at the TraceStop.
//
// Where the TraceStop falls is measured first: a probe run with regions too
// large to fill gives the bytes up to and including the TraceStop packet (the
// stream is the same up to there in both runs: no PMI, no slice before it). The
// second run's grow batch of 4 KiB regions then puts the STOP guard region
// around that point and its INT region just before it, and a skid longer than a
// region keeps that INT region's PMI waiting until the TraceStop.
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_MASK_PTRS, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { TranscriptLine } from '../rundir/transcript-line.js';
import { decodeTopaPointers } from '../../driver/hw/output-pointers.js';
import { K_CALL, K_JCC, K_JMP, K_RET, type GeneratedWorkload } from '../sim/workload/index.js';
import { everyPmiHandled, linesOf, packetStats } from './kit/helpers.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

const REGION = 4096;
/** Branches before the TraceStop's target is first reached: three regions' worth at 0.1 bytes a branch. */
const LATE_BRANCHES = 120_000;
const MASK_PTRS = IA32_RTIT_OUTPUT_MASK_PTRS.address;
const NEAR = new Set([K_JCC, K_JMP, K_CALL, K_RET]);

/** The near-branch target whose first landing comes latest on the path of `w`, and that landing's index. */
function lateTarget(w: GeneratedWorkload): { target: bigint; firstHit: number } {
  // Walks the model's path (the branch records of truthLines, without writing them as text).
  const first = new Map<number, number>();
  let i = 0;
  w.model.forEachBranch((c) => {
    if (c.to >= 0 && NEAR.has(c.kind) && (c.kind !== K_JCC || c.taken) && !first.has(c.to)) first.set(c.to, i);
    i++;
  });
  let best: [number, number] = [0, -1];
  for (const e of first) if (e[1] > best[1]) best = e;
  return { target: BigInt(best[0]), firstHit: best[1] };
}

/** The transcript of one handler: from its `pmi` line to its LVT unmask. */
function handlerLines(lines: readonly TranscriptLine[], from: number): TranscriptLine[] {
  const end = lines.findIndex((l, i) => i > from && l.op === 'pmi-enable');
  return lines.slice(from, end < 0 ? lines.length : end + 1);
}

/** The `tracestop-in-skid` scenario (see the file comment). */
export const tracestopInSkid: Scenario = {
  name: 'tracestop-in-skid',
  checks: 'a TraceStop while a ToPA PMI is in its skid: the handler finds Stopped=1 (TraceStop, not a ToPA STOP) in a STOP region that is not full; Stopped stays, the pointer stays, no "stop" loss; the trace ends at the TraceStop',
  appliesTo: 'CPUs with multi-entry ToPA and TraceStop (CPUID.(14H,0):ECX[1], EBX[2])',
  targets: ['sim'],
  skip: (env) => firstSkip(needsMultiEntryTopa(env.caps),
    needs(env.caps.ipFiltering && env.caps.numAddressRanges > 0, 'IP filtering and TraceStop (CPUID.(14H,0):EBX[2])')),
  // Longer than a region: the INT region's PMI is still waiting when the TraceStop comes.
  sim: { pmiSkid: 2 * REGION },
  negative: 'ignore-addr-cfg',
  async run(ctx) {
    // A target first reached late on a long path, so the trace up to it fills more than one 4 KiB region
    // even at the lowest rate a workload writes (about 0.1 bytes a branch: seed 318's 40,000 branches
    // made 3,904 bytes); a path that only loops early has no such target: derived seeds are tried then.
    const w = ctx.workload({ minBranches: LATE_BRANCHES, where: (x) => lateTarget(x).firstHit >= LATE_BRANCHES });
    const { target, firstHit } = lateTarget(w);
    const ranges = [{ role: 'tracestop' as const, a: target, b: target }];
    // Probe: 1 MiB regions (the INT one fills far beyond the trace), so no PMI comes before the TraceStop.
    const probe = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: 1 << 20, regions: 3 }, ranges }, { workload: w });
    const at = probe.stream.length;
    ctx.figure('traceStopAt', at);
    const g = Math.floor(at / REGION) + 1; // the STOP guard is entry g-1, the INT region entry g-2
    if (!ctx.expect('probe: the trace ends at the TraceStop, with no PMI, past the first 4 KiB region',
      probe.final.stopped && probe.pmis.length === 0 && g >= 2 && g < 500, `${at} bytes, Stopped=${probe.final.stopped}, ${probe.pmis.length} PMIs`)) return;
    // truth.jsonl: the second run's records only (the model's truth holds both runs).
    const before = ctx.sim?.truthLog(0)?.length ?? 0;
    ctx.truthFilter = { from: before };
    const from = ctx.target.lines.length;
    const r = await ctx.trace({ output: { scheme: 'topa', policy: 'grow', regionSize: REGION, regions: g }, ranges }, { workload: w });
    const lines = ctx.target.lines;
    const pmiAt = lines.findIndex((l, i) => i >= from && l.op === 'pmi');
    const h = pmiAt < 0 ? [] : handlerLines(lines, pmiAt);
    const ctl = /ctl=(0x[0-9a-f]+)/.exec(h[0]?.result ?? '')?.[1];
    const read = linesOf(h, 'rdmsr', MASK_PTRS)[0]?.result;
    const ptr = read === undefined ? undefined : decodeTopaPointers(BigInt(read));
    const status = r.pmis[0]?.status;
    ctx.expect(`one PMI, taken at the TraceStop with TraceEn=1 and Stopped=1, the pointer in the STOP guard region (entry ${g - 1}) at offset ${at - (g - 1) * REGION}`,
      r.pmis.length === 1 && ctl !== undefined && IA32_RTIT_CTL.decode(BigInt(ctl)).TraceEn && status !== undefined && IA32_RTIT_STATUS.decode(status).Stopped
        && ptr?.entryIndex === g - 1 && ptr.outputOffset === at - (g - 1) * REGION,
      `${r.pmis.length} PMIs; CTL ${ctl ?? '?'}, STATUS 0x${(status ?? 0n).toString(16)}; pointer ${ptr ? `entry ${ptr.entryIndex} offset ${ptr.outputOffset}` : '?'}`);
    ctx.expect('every PMI was handled', everyPmiHandled(r.pmis), r.pmis.map((p) => p.action).join(','));
    ctx.expectEqual('the handler claims no ToPA stop and no error (a TraceStop is neither)', r.pmis.map((p) => [p.action, p.stopped, p.error]), [['handled', false, false]]);
    const moved = linesOf(h, 'wrmsr', MASK_PTRS), statusWrites = linesOf(h, 'wrmsr', IA32_RTIT_STATUS.address);
    ctx.expect('the handler moved no pointer and left Stopped set (only a full STOP entry is a ToPA STOP: §4.4, §7.2)',
      moved.length === 0 && statusWrites.every((l) => IA32_RTIT_STATUS.decode(BigInt(l.value!)).Stopped),
      `MASK_PTRS writes ${moved.map((l) => l.value).join(',') || '-'}; STATUS writes ${statusWrites.map((l) => l.value).join(',') || '-'}`);
    ctx.expectEqual('STATUS.Stopped=1 at the end', r.final.stopped, true);
    ctx.expectEqual('one TraceStop packet', packetStats(r.stream).count.stop ?? 0, 1);
    ctx.expectEqual('the same bytes as the probe: the trace ends at the TraceStop', r.stream.length, at);
    const traced = ctx.sim?.truthLog(0)?.branches({ from: before }) ?? 0;
    ctx.expectEqual(`the trace ends at the first branch landing at 0x${target.toString(16)}`, traced, firstHit + 1);
    // Lossless: a TraceStop is no "stop" loss; the flow equals truth up to the TraceStop.
    ctx.expectLossless(r, { partial: true });
  },
};
