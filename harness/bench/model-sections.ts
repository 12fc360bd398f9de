// `npm run bench` sections for the reference model (sim) and for flow
// reconstruction, each next to a baseline measured in the same run: the
// native CPU on the same workload image, and libipt's instruction-flow
// decoder on the same trace and image. Timing never fails the run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { benchFlow } from './flow-bench.js';
import { benchSim } from './sim-bench.js';
import { benchGenerator } from './generator-bench.js';
import { benchWorkloadPath } from './workload-path-bench.js';
import { generateWorkload } from '../sim/workload/generate.js';
import { SimTarget } from '../sim/sim-target.js';
import { buildPtflow, ptflowBench } from './libipt-flow-tool.js';
import type { BenchSection } from './sections.js';

/** The model's speed target: simulated branches per second, truth recording off. */
export const SIM_TARGET_BRANCHES_PER_S = 50e6;
/** Flow reconstruction target: at least libipt's instruction-flow decoder speed. */
export const FLOW_TARGET_RATIO = 1.0;

const M = (x: number): string => (x / 1e6).toFixed(1);

/** Simulated branches/s and trace MB/s next to native execution of the same image. */
export const simSection: BenchSection = {
  name: 'sim',
  async run({ quick }) {
    const branches = quick ? 300_000 : 2_000_000;
    const w = generateWorkload(1, { branches });
    const native = await runNative(w);
    const nativeRate = w.model.branchCount / native;
    const path = benchWorkloadPath({ seed: 1, branches });
    const gen = benchGenerator(quick ? 2_000_000 : 20_000_000);
    const sim = await benchSim({ seed: 1, branches });
    const lines = [
      `workload gen-1 (${w.model.branchCount} branches, ${w.image.length} bytes of x86-64); truth recording off; M = 10^6`,
      `native CPU, same image:      ${M(nativeRate).padStart(8)} M branches/s  (${(native * 1e3).toFixed(2)} ms incl. fork+mmap)`,
      `model, path replay only:     ${M(path.branchesPerSecond).padStart(8)} M branches/s`,
      `model, packet generator only:${M(gen.branchesPerSecond).padStart(8)} M branches/s  ${M(gen.bytesPerSecond)} MB/s`,
      `model, whole (SimTarget):    ${M(sim.branchesPerSecond).padStart(8)} M branches/s  ${M(sim.bytesPerSecond)} MB/s of trace`,
      `ratio model/native: ${(sim.branchesPerSecond / nativeRate).toFixed(3)}x; target >= ${M(SIM_TARGET_BRANCHES_PER_S)} M branches/s${sim.branchesPerSecond >= SIM_TARGET_BRANCHES_PER_S ? '' : ' (NOT MET)'}`,
    ];
    return { lines, ok: true };
  },
};

async function runNative(w: ReturnType<typeof generateWorkload>): Promise<number> {
  const { runImageNatively } = await import('./native-run.js');
  return runImageNatively(w, 5);
}

/** perf's `intel_pt/cyc,mtc/` timing: TSC, MTC at CTC/2^3 and CYC on every packet (CycThresh 0). */
const PERF_TIMING = { TSCEn: true, MTCEn: true, MTCFreq: 3, CYCEn: true, CycThresh: 0 } as const;

/**
 * A lossless sim trace of the generated workload `seed` (single range, DisRETC + libipt-compatible
 * forms); `timing`: with perf's timing packets on.
 */
export async function simTrace(branches: number, seed = 7, opts: { readonly timing?: boolean } = {}): Promise<{ trace: Uint8Array; w: ReturnType<typeof generateWorkload> }> {
  const w = generateWorkload(seed, { branches });
  const size = 64 * 2 ** 20;
  await using t = await SimTarget.create({ profile: 'skylake', memory: { ramSize: 2 * size, maxContiguous: size }, trace: { libiptCompat: true } });
  const region = await t.phys.alloc(size, size);
  await t.msrBatch(0, [
    { op: 'wrmsr', msr: 0x571, value: 0n },
    { op: 'wrmsr', msr: 0x560, value: region.base },
    { op: 'wrmsr', msr: 0x561, value: BigInt(size - 1) },
    { op: 'wrmsr', msr: 0x570, value: IA32_RTIT_CTL.encode({ TraceEn: true, User: true, BranchEn: true, DisRETC: true, PSBFreq: 3, ...(opts.timing ? PERF_TIMING : {}) }) },
  ]);
  await using ex = t.start(w, 0);
  for await (const _e of ex.events) { /* run to the exit */ }
  await t.wrmsr(0, 0x570, 0n);
  const written = t.written(0);
  if (written >= size) throw new Error(`bench trace wrapped (${written} bytes)`);
  return { trace: await t.phys.read(region.base, written), w };
}

/** ptlab's flow reconstruction against libipt's instruction-flow decoder on one sim trace. */
export const flowSection: BenchSection = {
  name: 'flow',
  async run({ quick }) {
    const { trace, w } = await simTrace(quick ? 200_000 : 1_000_000);
    const dir = mkdtempSync(join(tmpdir(), 'ptlab-bench-flow-'));
    try {
      const tracePath = join(dir, 'trace.pt');
      const imagePath = join(dir, 'image.bin');
      writeFileSync(tracePath, trace);
      writeFileSync(imagePath, w.image);
      const ours = benchFlow(trace, [{ bytes: w.image, base: w.base }], 3);
      const exe = await buildPtflow();
      const theirs = await ptflowBench(exe, tracePath, [{ path: imagePath, base: w.base }], 3);
      const ratio = theirs.seconds / ours.seconds;
      const agree = ours.instructions === theirs.instructions && ours.errors === 0 && theirs.errors === 0;
      const row = (name: string, insns: number, s: number, errors: number): string =>
        `${name.padEnd(8)}${M(insns / s).padStart(9)} M insn/s ${(s * 1e3).toFixed(1).padStart(9)} ms ${String(insns).padStart(10)} insns ${errors} errors`;
      const lines = [
        `flow reconstruction: sim trace of ${w.name} (${trace.length} bytes, DisRETC=1, libipt-compatible forms), best of 3`,
        row('libipt', theirs.instructions, theirs.seconds, theirs.errors),
        row('ptlab', ours.instructions, ours.seconds, ours.errors),
        `ratio ptlab/libipt: ${ratio.toFixed(2)}x (target >= ${FLOW_TARGET_RATIO.toFixed(1)}x${ratio >= FLOW_TARGET_RATIO ? '' : ', NOT MET'})`,
        ...(agree ? [] : [`MISMATCH: instructions ${ours.instructions} vs ${theirs.instructions}, errors ${ours.errors}/${theirs.errors}`]),
      ];
      return { lines, ok: agree };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
