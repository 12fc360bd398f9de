// The matrix of a suite (docs/sharding.md): its cells (seed, scenario, profile) in the order an
// unsharded `ptlab run` makes them — seeds, then scenarios, then profiles — and a fingerprint of
// it, so shards cut from two different matrices are told apart before they are merged.
import { createHash } from 'node:crypto';
import type { KeepRuns } from './run-scenario.js';

/** What decides a suite's cells and what its run directories hold. */
export interface MatrixDef {
  /** The target kind, with the PT of a qemu guest (`qemu --pt model`, `qemu --pt hardware`). */
  readonly target: string;
  /** A seed sweep (`--seeds A-B`): run directories under `seed-<S>/`. */
  readonly sweep: boolean;
  readonly keep: KeepRuns;
  readonly seeds: { readonly from: number; readonly to: number };
  readonly scenarios: readonly string[];
  /** The profile names the runs use (`probed` on real PT). */
  readonly profiles: readonly string[];
  readonly knobs: readonly string[];
  readonly driverFaults: readonly string[];
}

/** One cell: its position in the unsharded order (0-based) and what it runs (by name, or as the runner holds them). */
export interface Cell<S = string, P = string> {
  readonly index: number;
  readonly seed: number;
  readonly scenario: S;
  readonly profile: P;
}

/**
 * The cells of `def` in the unsharded order: seeds × scenarios × profiles. The one place that
 * order is made: the suite runs it, shards deal it, a host that ran nothing reports it.
 */
export function cellsOf<S = string, P = string>(def: { readonly seeds: MatrixDef['seeds']; readonly scenarios: readonly S[]; readonly profiles: readonly P[] }): Cell<S, P>[] {
  const cells: Cell<S, P>[] = [];
  for (let seed = def.seeds.from; seed <= def.seeds.to; seed++) {
    for (const scenario of def.scenarios) for (const profile of def.profiles) cells.push({ index: cells.length, seed, scenario, profile });
  }
  return cells;
}

/** A cell's name, `<seed>/<scenario>/<profile>`, unique within a matrix. */
export function cellKey(c: Pick<Cell, 'seed' | 'scenario' | 'profile'>): string {
  return `${c.seed}/${c.scenario}/${c.profile}`;
}

/**
 * `sha256:<hex>` of the ptlab version, the settings that shape the run directories (target, sweep,
 * keep, knobs, driver faults) and the ordered cell list: equal exactly when two shards were cut
 * from the same matrix by the same ptlab.
 */
export function fingerprintOf(def: MatrixDef, version: string): string {
  const { target, sweep, keep, knobs, driverFaults } = def;
  const doc = JSON.stringify({ ptlab: version, target, sweep, keep, knobs, driverFaults, cells: cellsOf(def).map(cellKey) });
  return `sha256:${createHash('sha256').update(doc).digest('hex')}`;
}
