// psb-preservation: PSB preservation across a context switch (docs/sdm/output.md
// §7.4 step 2–3; CPUID.(14H,0):EBX[6]; CTL.InjectPsbPmiOnEnable). A PSB that
// falls due in the packets of the TraceEn 1→0 at a switch-out cannot be
// written any more: the CPU keeps it in STATUS.PendPSB, the save carries it in
// the saved STATUS, and the restore must load it back so that the CPU writes
// the owed PSB+ first thing at TraceEn 0→1. The switches are frequent (every 8
// branches on average, and whenever a PSB is owed at a preemption) and the PSB
// period the shortest, so many PSBs fall due inside a switch-out on every seed. A PSB lost on the way shows as a gap of about two
// periods between PSBs in the stream. On the model, a PSB that falls due on
// the packets of the handler entry waits for the next packet (the SDM says a
// PSB comes "as soon as possible"; when a real CPU sets PendPSB is not
// documented), so the switch-out's TraceEn 1→0 finds it owed.
import { IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { TranscriptLine } from '../rundir/transcript-line.js';
import { packetStats, topa } from './kit/helpers.js';
import { firstSkip, needs, type Scenario } from './kit/scenario.js';
import { needsMultiEntryTopa } from './topa-grow.js';

/** PSBFreq=0: a PSB every 2 KiB of output (docs/sdm/msrs.md §3.2). */
const PERIOD = 2048;
/** The owed PSB+ comes at the resume: the rest of the disable packets and one PSB+ of slack. */
const SLACK = 64;
const STATUS = '0x571';

/** STATUS as each switch saved it and as the following restore loaded it, from the transcript. */
function switchStatuses(lines: readonly TranscriptLine[], viaXsaves: boolean): { saved: bigint[]; restored: bigint[] } {
  const saved: bigint[] = [], restored: bigint[] = [];
  let state: 'run' | 'saving' | 'restoring' = 'run';
  for (const l of lines) {
    if (l.op === 'slice') state = 'saving';
    else if (l.op === 'pmi' || l.op === 'exit') state = 'run'; // a preemption that did not switch
    else if (state === 'saving' && (viaXsaves ? l.op === 'xsaves' : l.op === 'rdmsr' && l.msr === STATUS)) {
      saved.push(BigInt((viaXsaves ? l.area?.IA32_RTIT_STATUS : l.result) ?? 0));
      state = 'restoring';
    } else if (state === 'restoring' && (viaXsaves ? l.op === 'xrstors' : l.op === 'wrmsr' && l.msr === STATUS)) {
      restored.push(BigInt((viaXsaves ? l.area?.IA32_RTIT_STATUS : l.value) ?? 0));
      state = 'run';
    }
  }
  return { saved, restored };
}

const pendPsb = (s: bigint): boolean => IA32_RTIT_STATUS.decode(s).PendPSB;

/** The `psb-preservation` scenario (see the file comment). */
export const psbPreservation: Scenario = {
  name: 'psb-preservation',
  checks: 'PSB preservation across frequent XSAVES (or RDMSR/WRMSR) switches: a PSB owed at a switch-out is saved in PendPSB, restored, and written at the resume; no PSB gap over 2 KiB + slack; lossless; flow = truth',
  appliesTo: 'CPUs enumerating PSB and PMI preservation (CPUID.(14H,0):EBX[6]) with PSBFreq=0 and multi-entry ToPA; never a KVM guest',
  targets: ['sim', 'ssh'],
  skip: (env) => firstSkip(needsMultiEntryTopa(env.caps), needs(env.caps.pmiPreservation, 'PSB and PMI preservation (CPUID.(14H,0):EBX[6])'),
    needs(env.caps.psbCyc && (env.caps.psbPeriods & 1) === 1, 'PSBFreq=0 (CPUID.(14H,0):EBX[1], CPUID.(14H,1):EBX[16])')),
  // On the model a PSB due while the driver's handler runs waits for the resume (or PendPSB), as
  // "best effort, as soon as possible" allows: the moment a real CPU sets PendPSB is not documented.
  sim: { deferPsbInHandler: true },
  negative: 'no-psb-preservation',
  catches: ['drop-pend-psb'],
  async run(ctx) {
    const viaXsaves = ctx.env.caps.xsaves && ctx.env.caps.xssPtState;
    const w = ctx.workload({ minBranches: 8000 });
    const from = ctx.target.lines.length;
    // A preemption point after every branch; the context is switched out at one in eight (chosen by
    // a hash, so a loop's regular bytes cannot keep the PSB thresholds out of the switches) and
    // whenever STATUS, read at the preemption, shows a PSB owed (PendPSB=1 while TraceEn=1).
    let slices = 0;
    const r = await ctx.trace(topa('grow', 3, { InjectPsbPmiOnEnable: true, PSBFreq: 0, switching: viaXsaves ? 'xsaves' : 'manual' }), {
      workload: w, sliceBranches: 1,
      intercept: async (ev) => {
        if (ev.kind !== 'slice') return false;
        if (Math.imul(++slices, 0x9e3779b1) >>> 0 < 0x2000_0000) return false;
        return !pendPsb(await ctx.target.rdmsr(0, IA32_RTIT_STATUS.address));
      },
    });
    const { saved, restored } = switchStatuses(ctx.target.lines.slice(from), viaXsaves);
    const owed = saved.filter(pendPsb).length;
    ctx.expect(`switches ${viaXsaves ? 'by XSAVES/XRSTORS' : 'by RDMSR/WRMSR'}, some with a PSB owed (PendPSB=1 saved)`, r.switches >= 100 && owed > 0,
      `${r.switches} switches, ${owed} saved PendPSB=1`);
    const dropped = saved.filter((s, i) => pendPsb(s) && !pendPsb(restored[i] ?? 0n)).length;
    ctx.expect('every restore loaded PendPSB back as it was saved', restored.length === saved.length && dropped === 0,
      `${saved.length} saves, ${restored.length} restores, ${dropped} owed PSBs dropped`);
    const psb = packetStats(r.stream).psbOffsets;
    const gaps = psb.slice(1).map((o, i) => o - psb[i]!);
    const long = gaps.filter((g) => g > PERIOD + SLACK);
    ctx.expect(`every owed PSB was written at the resume: no gap between PSBs over ${PERIOD} + ${SLACK} bytes`, psb.length >= 8 && long.length === 0,
      `${psb.length} PSBs; longest gap ${gaps.reduce((m, g) => Math.max(m, g), 0)} bytes; ${long.length} too long`);
    ctx.expectLossless(r);
  },
};
