// A worker thread of `ptlab run --jobs N` on the sim (lanes.ts): it receives one cell at a time,
// runs it with runCell on a fresh SimTarget of its own — exactly what a serial run does, so the
// run directory is the same bytes — and posts back result.json's content and the run's report
// section, or the error.
import { parentPort } from 'node:worker_threads';
import { findScenario } from '../scenarios/index.js';
import type { DriverFault } from '../../driver/faults.js';
import type { KnobName } from '../sim/knobs/knobs.js';
import type { ProfileName } from '../sim/profiles.js';
import type { RealismMode } from '../sim/realism.js';
import type { RunDetail } from '../report/html/view-model.js';
import type { ResultJson } from '../rundir/result.js';
import { runCell } from './lanes.js';
import type { KeepRuns } from './run-scenario.js';
import { SimSuiteTarget } from './suite-target.js';

/** One cell to run (main → worker). */
export interface CellMessage {
  readonly id: number;
  readonly scenario: string;
  readonly profile: ProfileName;
  readonly seed: number;
  readonly knobs: readonly KnobName[];
  readonly driverFaults: readonly DriverFault[];
  readonly dir: string;
  readonly keep: KeepRuns;
  readonly realism?: RealismMode;
}

/** What became of it (worker → main): the result, or the error with its code (an errno or a PtError code) and where it was thrown. */
export type CellReply =
  | { readonly id: number; readonly ok: true; readonly result: ResultJson; readonly section?: RunDetail }
  | { readonly id: number; readonly ok: false; readonly name: string; readonly message: string; readonly code?: string; readonly stack?: string };

const port = parentPort;
if (port) {
  const sim = new SimSuiteTarget();
  port.on('message', (m: CellMessage) => {
    void (async (): Promise<CellReply> => {
      try {
        const spec = { scenario: findScenario(m.scenario), target: 'sim' as const, profile: m.profile, seed: m.seed, knobs: m.knobs, driverFaults: m.driverFaults, ...(m.realism ? { realism: m.realism } : {}) };
        return { id: m.id, ok: true, ...await runCell(spec, m.dir, sim, m.keep) };
      } catch (e) {
        const err = e as Error & { code?: unknown };
        return {
          id: m.id, ok: false, name: err.name ?? 'Error', message: err.message ?? String(e),
          ...(typeof err.code === 'string' ? { code: err.code } : {}), ...(typeof err.stack === 'string' ? { stack: err.stack } : {}),
        };
      }
    })().then((reply) => port.postMessage(reply));
  });
}
