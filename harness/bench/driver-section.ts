// `npm run bench` section `driver`: what the driver's ToPA PMI handling costs on the PMI-heavy
// scenarios — PMIs, bytes lost per PMI at the runner's default skid (target 0), target round
// trips per PMI, and the trace-off window per PMI: modelled bytes on the sim (docs/design.md "How the
// model runs": the CPU is stopped while the handler runs, so the target is 0 bytes), and
// wall-clock µs on the qemu+model target (one TCG/KVM guest, the model as its PT unit) when the
// guest image exists. Reported, never asserted on time; a scenario whose expectations fail
// makes the section not ok.
import { lostBytes } from '../../driver/collect/ledger.js';
import { RecordingTarget } from '../rundir/recording-target.js';
import type { TraceResult } from '../../driver/session.js';
import { findGuestImage, findOnPath, QEMU_BINARY } from '../qemu/images.js';
import { openSuiteTarget, type SuiteTarget } from '../runner/suite-target.js';
import { SIM_DEFAULTS } from '../runner/targets.js';
import { ScenarioContext } from '../scenarios/kit/context.js';
import { findScenario } from '../scenarios/index.js';
import { capsOf, getProfile } from '../sim/profiles.js';
import type { BenchSection, SectionReport } from './sections.js';

/** The PMI-heavy scenarios, on one profile. */
const SCENARIOS = ['pmi-skid', 'topa-grow', 'topa-circular-fresh'] as const;
const PROFILE = 'skylake';

/** One scenario's totals over the seeds. */
interface DriverRow {
  readonly scenario: string;
  readonly pmis: number;
  readonly lostBytes: number;
  readonly lossEntries: number;
  readonly roundTrips: number;
  readonly batches: number;
  readonly offBytes: number;
  readonly offUs: number;
  readonly failed: readonly string[];
}

/** Runs `name` once per seed on a fresh CPU of `host` and adds up its PMIs. */
async function measure(host: SuiteTarget, name: string, seeds: readonly number[]): Promise<DriverRow> {
  const s = findScenario(name);
  const p = getProfile(PROFILE);
  let pmis = 0, lost = 0, entries = 0, roundTrips = 0, batches = 0, offBytes = 0, offUs = 0;
  const failed: string[] = [];
  for (const seed of seeds) {
    const cpu = await host.prepare({ profile: p, seed, knobs: [], settings: s.sim ?? {} });
    try {
      const ctx = new ScenarioContext({ target: host.kind, ptUnit: host.rules === 'sim' ? 'model' : 'hardware', profile: p, caps: capsOf(p), seed }, new RecordingTarget(cpu.target), cpu.model);
      await s.run(ctx);
      for (const e of ctx.expectations) if (!e.ok) failed.push(`seed ${seed}: ${e.name}: ${e.detail}`);
      const r: TraceResult | undefined = ctx.result;
      if (!r) { failed.push(`seed ${seed}: no trace run`); continue; }
      const handled = r.pmis.filter((x) => x.action === 'handled');
      pmis += handled.length;
      lost += lostBytes(r.ledger);
      entries += r.ledger.lost.length;
      for (const x of handled) {
        roundTrips += x.roundTrips;
        batches += x.batches;
        offBytes += x.window?.model?.bytes ?? 0;
        offUs += x.window?.us ?? 0;
      }
    } finally {
      await cpu.release();
    }
  }
  return { scenario: name, pmis, lostBytes: lost, lossEntries: entries, roundTrips, batches, offBytes, offUs, failed };
}

const per = (x: number, n: number, digits = 2): string => (n === 0 ? '-' : (x / n).toFixed(digits));

/** The table of `rows`; `us` adds the wall-clock column. */
function table(rows: readonly DriverRow[], us: boolean): string[] {
  const head = ['scenario'.padEnd(21), 'PMIs'.padStart(6), 'lost B/PMI'.padStart(11), 'losses'.padStart(7),
    'trips/PMI'.padStart(10), 'batches/PMI'.padStart(12), 'off B/PMI'.padStart(10), ...(us ? ['off µs/PMI'.padStart(11)] : [])];
  const lines = [head.join('')];
  for (const r of rows) {
    lines.push([r.scenario.padEnd(21), String(r.pmis).padStart(6), per(r.lostBytes, r.pmis).padStart(11), String(r.lossEntries).padStart(7),
      per(r.roundTrips, r.pmis).padStart(10), per(r.batches, r.pmis).padStart(12), per(r.offBytes, r.pmis).padStart(10),
      ...(us ? [per(r.offUs, r.pmis, 0).padStart(11)] : [])].join(''));
  }
  const lostAny = rows.some((r) => r.lostBytes > 0 || r.lossEntries > 0);
  const offAny = rows.some((r) => r.offBytes > 0);
  lines.push(`bytes lost per PMI: target 0${lostAny ? ', NOT MET' : ', met'}; modelled bytes while tracing is off: target 0${offAny ? ', NOT MET' : ', met'}`);
  return lines;
}

/** The section `harness/bench/sections.ts` registers. */
export const driverSection: BenchSection = {
  name: 'driver',
  async run({ quick }): Promise<SectionReport> {
    const seeds = quick ? [1] : [1, 2, 3, 4, 5];
    const lines = [`driver PMI handling on ${PROFILE}, default skid ${SIM_DEFAULTS.pmiSkid} B, seeds ${seeds.join(',')}; per handled PMI (trips = target calls)`];
    const failed: string[] = [];
    const sim = await openSuiteTarget('sim', undefined);
    const simRows: DriverRow[] = [];
    for (const s of SCENARIOS) simRows.push(await measure(sim, s, seeds));
    lines.push('sim:', ...table(simRows, false));
    failed.push(...simRows.flatMap((r) => r.failed.map((f) => `sim ${r.scenario} ${f}`)));
    const image = await findGuestImage();
    if ((await findOnPath(QEMU_BINARY)) === undefined) lines.push(`qemu+model: skipped (${QEMU_BINARY} is not installed)`);
    else if ('missing' in image) lines.push(`qemu+model: skipped (${image.missing})`);
    else {
      await using qemu = await openSuiteTarget('qemu', { kind: 'qemu', pt: 'model', accel: 'auto' });
      const rows: DriverRow[] = [];
      for (const s of SCENARIOS) rows.push(await measure(qemu, s, seeds));
      lines.push(`${qemu.description} (the model as the guest's PT unit; µs = wall clock, ToPA tables in guest RAM):`, ...table(rows, true));
      failed.push(...rows.flatMap((r) => r.failed.map((f) => `qemu ${r.scenario} ${f}`)));
    }
    lines.push(...failed.map((f) => `FAILED ${f}`));
    return { lines, ok: failed.length === 0 };
  },
};
