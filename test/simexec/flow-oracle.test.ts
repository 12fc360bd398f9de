// The flow-level cross-check (docs/design.md "The run directory": on a lossless sim run our flow
// reconstruction and libipt's instruction-flow decoder both reproduce truth.jsonl), for many
// seeds and configurations, with the generator's libipt-compatibility switch on.
//
// Exclusions (what the two decoders cannot reproduce, and why):
// - mode annotations: the image stays 64-bit code while MODE.Exec says 32-bit (workload README),
//   so no decoder can walk it;
// - OS=1 with interrupts or the exit: the kernel handler and entry are not in the image;
// - PTWRITE annotations: zero-length PTWRITEs not in the image bytes (workload README);
// - libipt only: RET compression with an unmatched (edited) RET on the path — libipt 2.0.5 pops
//   its return stack only on compressed RETs (docs/sdm/packets.md §7), so those seeds run with
//   DisRETC=1 for libipt's side;
// - libipt only: the `taken` of a jcc whose target is its own fall-through (rel 0): libipt's
//   instruction API does not say whether a jcc was taken, ptflow infers it from the next IP, so
//   truth's `"taken":true` is compared as false there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { flowJsonLine, flowLines, ImageSet } from '../../driver/decode/flow/index.js';
import { buildPtflow, ptflow } from '../../harness/bench/libipt-flow-tool.js';
import { LibiptToolsError } from '../../harness/bench/libipt-tools.js';
import type { GeneratedWorkload } from '../../harness/sim/workload/index.js';
import { K_RET } from '../../harness/sim/workload/index.js';
import { type CtlFields, sim, singleRangeRun, workload } from './rig.js';

let exe: string | undefined;
let skipReason = '';
try {
  exe = await buildPtflow();
} catch (e) {
  if (!(e instanceof LibiptToolsError) || process.env['CI'] === 'true') throw e;
  skipReason = `libipt unavailable (${e.reason})`;
}
const dir = mkdtempSync(join(tmpdir(), 'ptlab-flow-oracle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Truth as ptflow can print it: a taken rel-0 jcc reads as not taken (see the exclusions). */
function asLibiptSees(w: GeneratedWorkload, truth: readonly string[]): string[] {
  const rel0 = new Set(w.model.sites().filter((s) => s.kind === 'jcc' && s.target === s.ip + BigInt(s.length)).map((s) => `"ip":"0x${s.ip.toString(16)}"`));
  return truth.map((l) => (l.includes('"taken":true') && rel0.has(l.slice(1, l.indexOf(',"kind"'))) ? l.replace('"taken":true', '"taken":false') : l));
}

/** True when some RET on the path does not go to its CALL's Next IP (an edited return). */
function hasUnmatchedRet(w: GeneratedWorkload): boolean {
  let any = false;
  w.model.forEachBranch((c) => { if (c.kind === K_RET && !c.retMatched) any = true; });
  return any;
}

interface Config {
  readonly name: string;
  readonly ctl: (w: GeneratedWorkload) => CtlFields;
  readonly annotations?: { interrupts?: number; cr3Switches?: number };
  readonly sliceBranches?: number;
}

const USER = { User: true, BranchEn: true } as const;
const CONFIGS: readonly Config[] = [
  { name: 'RET compression on', ctl: () => USER },
  { name: 'DisRETC, interrupts, PSBFreq 0, slices', ctl: () => ({ ...USER, DisRETC: true, PSBFreq: 0 }), annotations: { interrupts: 4 }, sliceBranches: 700 },
  {
    name: 'IP filter on the first half of the image, DisRETC',
    ctl: (w) => ({ ...USER, DisRETC: true, ADDR0_CFG: 1, ADDR0_A: w.base, ADDR0_B: w.base + BigInt(w.image.length >> 1) }) as CtlFields,
  },
  { name: 'timing packets, CR3 switches, interrupts, RET compression on', ctl: () => ({ ...USER, TSCEn: true, MTCEn: true, MTCFreq: 3, CYCEn: true }), annotations: { interrupts: 3, cr3Switches: 3 } },
];
const SEEDS = Array.from({ length: 20 }, (_, i) => 100 + i);

async function runOne(cfg: Config, seed: number, forLibipt: boolean) {
  const w = workload(seed, { branches: 3000, ...cfg.annotations });
  let ctl = cfg.ctl(w);
  if (forLibipt && !ctl.DisRETC && hasUnmatchedRet(w)) ctl = { ...ctl, DisRETC: true };
  const { ADDR0_A, ADDR0_B, ...fields } = ctl as CtlFields & { ADDR0_A?: bigint; ADDR0_B?: bigint };
  await using t = await sim({ trace: { truth: true, libiptCompat: true } });
  if (ADDR0_A !== undefined && ADDR0_B !== undefined) {
    await t.wrmsr(0, 0x580, ADDR0_A);
    await t.wrmsr(0, 0x581, ADDR0_B);
  }
  const { bytes } = await singleRangeRun(t, w, { ctl: fields, ...(cfg.sliceBranches ? { sliceBranches: cfg.sliceBranches } : {}) });
  return { w, bytes, truth: [...t.truth(0)], dropped: t.dropped(0) };
}

describe('our flow decoder reproduces truth.jsonl', () => {
  test.for(CONFIGS.flatMap((cfg) => SEEDS.map((seed) => ({ cfg, seed, label: `${cfg.name}, seed ${seed}` }))))('$label', async ({ cfg, seed }) => {
    const r = await runOne(cfg, seed, false);
    expect(r.dropped).toBe(0);
    const mine = flowLines(r.bytes, new ImageSet([{ base: r.w.base, bytes: r.w.image }]), flowJsonLine);
    expect(mine).toEqual(r.truth);
  });
});

describe.skipIf(!exe)(`libipt's instruction-flow decoder reproduces truth.jsonl${exe ? '' : ` (skipped: ${skipReason})`}`, () => {
  test.for(CONFIGS.flatMap((cfg) => SEEDS.map((seed) => ({ cfg, seed, label: `${cfg.name}, seed ${seed}` }))))('$label', async ({ cfg, seed }) => {
    const r = await runOne(cfg, seed, true);
    const trace = join(dir, `t-${seed}-${CONFIGS.indexOf(cfg)}.pt`), image = join(dir, `i-${seed}-${CONFIGS.indexOf(cfg)}.bin`);
    writeFileSync(trace, r.bytes);
    writeFileSync(image, r.w.image);
    expect(await ptflow(exe!, trace, [{ path: image, base: r.w.base }])).toEqual(asLibiptSees(r.w, r.truth));
  });
});
