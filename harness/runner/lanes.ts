// The lanes a suite runs its cells on (ptlab run --jobs N, docs/parallel.md): one lane runs one
// cell at a time. With --jobs 1 the one lane is the suite's own target, as it always was. With more,
// on the sim every lane is a worker thread with its own model per run (sim-worker.ts), so N cells
// use N cores and the main thread stays free to hand out cells; on qemu a lane is a VM of its own,
// on ssh a session of its own to the host.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { firstBuilt } from '../../driver/base/built-module.js';
import { PtError } from '../../driver/base/errors.js';
import { isBad, type ResultJson } from '../rundir/result.js';
import type { ProfileName } from '../sim/profiles.js';
import { runSection } from '../report/html/run-view.js';
import type { RunDetail } from '../report/html/view-model.js';
import { runScenario, type KeepRuns, type RunSpec } from './run-scenario.js';
import type { CellMessage, CellReply } from './sim-worker.js';
import type { SuiteTarget } from './suite-target.js';

/** A cell a lane ran: its result, and its report section when it kept a run directory (report/html/run-view.ts runSection). */
export interface LaneRun {
  readonly result: ResultJson;
  readonly section?: RunDetail;
}

/**
 * Runs a cell and makes its report section while its files are fresh, so that the report at the
 * suite's end only assembles sections (with --jobs N, N lanes make them at once). A run whose
 * directory was not kept (a sweep's pass) has no section.
 */
export async function runCell(spec: RunSpec, dir: string, host: SuiteTarget | undefined, keep: KeepRuns): Promise<LaneRun> {
  const result = await runScenario(spec, dir, host, keep);
  const kept = keep === 'all' || isBad(result.verdict);
  // A section that cannot be made here costs the run nothing: the report reads its files instead.
  const section = kept ? await runSection(dir, result).catch(() => undefined) : undefined;
  return { result, ...(section ? { section } : {}) };
}

/** Something that runs one cell at a time. */
export interface Lane {
  run(spec: RunSpec, dir: string, keep: KeepRuns): Promise<LaneRun>;
  /** Why the lane's target can run nothing more (its VM or machine went away). */
  lost(): string | undefined;
  /** Stops the lane's target (idempotent). */
  dispose(): Promise<void>;
}

/** A lane on an opened suite target (the suite's own, or one more VM or session). */
export function targetLane(host: SuiteTarget): Lane {
  let disposing: Promise<void> | undefined;
  return {
    run: (spec, dir, keep) => runCell(spec, dir, host, keep),
    lost: () => host.lost?.(),
    dispose: () => (disposing ??= Promise.resolve(host[Symbol.asyncDispose]())),
  };
}

/** The built worker: beside this module in dist/, or in dist/ when this runs from the TypeScript sources (vitest). */
function workerFile(): URL {
  const inDist = '../../dist/harness/runner/sim-worker.js';
  const file = firstBuilt(import.meta.url, './sim-worker.js', inDist);
  if (file) return file;
  throw new PtError('bad_config', `--jobs on the sim needs the built worker ${fileURLToPath(new URL(inDist, import.meta.url))}: run npm run build`);
}

/** A worker thread that runs sim cells (sim-worker.ts). */
export function simWorkerLane(): Lane {
  const worker = new Worker(workerFile());
  worker.unref();
  let nextId = 0;
  const pending = new Map<number, { resolve: (r: LaneRun) => void; reject: (e: Error) => void }>();
  const failAll = (e: Error): void => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('message', (m: CellReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) { p.resolve({ result: m.result, ...(m.section ? { section: m.section } : {}) }); return; }
    // The run's own error, as the serial suite would have seen it (an errno code decides a write error;
    // the stack is the worker's, so an internal error points at where it happened).
    const e = Object.assign(new Error(m.message), { name: m.name, ...(m.code !== undefined ? { code: m.code } : {}), ...(m.stack !== undefined ? { stack: m.stack } : {}) });
    p.reject(e);
  });
  worker.on('error', (e) => failAll(e));
  worker.on('exit', (code) => failAll(new Error(`a sim worker thread exited (code ${code})`)));
  let disposing: Promise<void> | undefined;
  return {
    run(spec, dir, keep) {
      if (typeof spec.profile !== 'string') return Promise.reject(new PtError('bad_config', 'a sim worker runs model profiles only'));
      const id = nextId++;
      const msg: CellMessage = {
        id, scenario: spec.scenario.name, profile: spec.profile as ProfileName, seed: spec.seed,
        knobs: spec.knobs ?? [], driverFaults: spec.driverFaults ?? [], dir, keep, ...(spec.realism ? { realism: spec.realism } : {}),
      };
      return new Promise<LaneRun>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref(); // keep the process alive while a cell is out
        worker.postMessage(msg);
      }).finally(() => { if (pending.size === 0) worker.unref(); });
    },
    lost: () => undefined,
    dispose: () => (disposing ??= worker.terminate().then(() => undefined)),
  };
}
