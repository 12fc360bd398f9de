// Sharding a suite (docs/sharding.md): which shard runs which cell, `--shard i/n`
// on the command line, the matrix fingerprint and shard.json.
import { describe, expect, test } from 'vitest';
import { parseRunArgs } from '../../harness/cli/commands/run.js';
import { UsageError } from '../../harness/cli/args.js';
import { cellKey, cellsOf, fingerprintOf, type MatrixDef } from '../../harness/runner/matrix.js';
import { cellsOfShard, parseShardJson, shardJsonText, shardOfCell, SHARD_FORMAT, type ShardJson } from '../../harness/runner/shard.js';

const DEF: MatrixDef = {
  target: 'sim', sweep: true, keep: 'all', seeds: { from: 1, to: 2 }, scenarios: ['a', 'b', 'c'], profiles: ['skylake', 'broadwell'], knobs: [], driverFaults: [],
};

describe('the cells of a matrix', () => {
  test('are seeds × scenarios × profiles, in the order of an unsharded run', () => {
    expect(cellsOf({ seeds: { from: 7, to: 8 }, scenarios: ['a', 'b'], profiles: ['p', 'q'] }).map(cellKey))
      .toEqual(['7/a/p', '7/a/q', '7/b/p', '7/b/q', '8/a/p', '8/a/q', '8/b/p', '8/b/q']);
  });

  test('are dealt in blocks of n, block b rotated by b: cell k goes to shard ((k mod n) + ⌊k/n⌋) mod n + 1', () => {
    expect(Array.from({ length: 9 }, (_, k) => shardOfCell(k, 3))).toEqual([1, 2, 3, 2, 3, 1, 3, 1, 2]);
  });

  test.for([2, 3, 6])('with 6 profiles and %i shards, every shard gets every profile (plain round-robin gave each shard the same ones)', (n) => {
    const profiles = ['broadwell', 'skylake', 'icelake', 'sapphire-rapids', 'kvm-guest', 'full'];
    const cells = cellsOf({ seeds: { from: 1, to: 1 }, scenarios: Array.from({ length: 12 }, (_, i) => `s${i}`), profiles });
    const perShard = Array.from({ length: n }, (_, i) => new Set(cellsOfShard(cells, { index: i + 1, count: n }).map((c) => c.profile)));
    expect(perShard.map((set) => set.size)).toEqual(Array.from({ length: n }, () => 6));
  });

  test.for([1, 2, 3, 5, 12, 13])('%i shards hold every cell exactly once, each in the unsharded order', (n) => {
    const cells = cellsOf(DEF);
    const shards = Array.from({ length: n }, (_, i) => cellsOfShard(cells, { index: i + 1, count: n }));
    const sizes = shards.map((s) => s.length);
    expect({
      all: shards.flat().map((c) => c.index).sort((x, y) => x - y), ordered: shards.every((s) => s.every((c, j) => j === 0 || c.index > s[j - 1]!.index)),
      balanced: Math.max(...sizes) - Math.min(...sizes) <= 1,
    }).toEqual({ all: cells.map((c) => c.index), ordered: true, balanced: true });
  });

  test('a slow scenario is spread over the shards, not given to one', () => {
    // Scenario "a" on its two profiles for two seeds: a contiguous split would give all four to shard 1.
    const owners = cellsOf(DEF).filter((c) => c.scenario === 'a').map((c) => shardOfCell(c.index, 3));
    expect(new Set(owners).size).toBeGreaterThan(1);
  });
});

describe('the fingerprint of a matrix', () => {
  test('is the same for the same matrix and ptlab version', () => {
    expect(fingerprintOf({ ...DEF }, '0.1.0')).toBe(fingerprintOf(DEF, '0.1.0'));
  });

  test.for([
    { what: 'another ptlab version', def: DEF, version: '0.2.0' },
    { what: 'the scenarios in another order', def: { ...DEF, scenarios: ['b', 'a', 'c'] }, version: '0.1.0' },
    { what: 'another seed range', def: { ...DEF, seeds: { from: 1, to: 3 } }, version: '0.1.0' },
    { what: 'a knob', def: { ...DEF, knobs: ['no-topa-pmi'] }, version: '0.1.0' },
    { what: 'another --keep', def: { ...DEF, keep: 'failed' as const }, version: '0.1.0' },
    { what: 'another target', def: { ...DEF, target: 'qemu --pt model' }, version: '0.1.0' },
  ])('differs for $what', ({ def, version }) => {
    expect(fingerprintOf(def, version)).not.toBe(fingerprintOf(DEF, '0.1.0'));
  });
});

describe('--shard i/n', () => {
  test('takes shard i of n', () => {
    expect(parseRunArgs(['--all', '--shard', '2/3']).shard).toEqual({ index: 2, count: 3 });
  });

  test('is absent unless given', () => {
    expect(parseRunArgs(['--all']).shard).toBeUndefined();
  });

  test.for(['0/3', '4/3', 'x/y', '1/0', '3', '-1/3', '1/3/3', ' 1/3', '1.5/3'])('refuses %j as a UsageError (exit 2)', (v) => {
    expect(() => parseRunArgs(['--all', '--shard', v])).toThrow(UsageError);
  });
});

describe('shard.json', () => {
  const s: ShardJson = {
    format: SHARD_FORMAT, shard: 2, of: 3, ptlab: '0.1.0', fingerprint: fingerprintOf(DEF, '0.1.0'), cells: 12, shardCells: 4, matrix: DEF, status: 'done', runs: 4,
  };

  test('reads back what was written, keys in the documented order', () => {
    expect([parseShardJson(shardJsonText(s)), Object.keys(JSON.parse(shardJsonText(s)) as object)]).toEqual([
      s, ['format', 'shard', 'of', 'ptlab', 'fingerprint', 'cells', 'shardCells', 'matrix', 'status', 'runs'],
    ]);
  });

  test.for([
    { what: 'another format', text: JSON.stringify({ ...s, format: 'x' }), msg: /format/ },
    { what: 'a shard beyond n', text: JSON.stringify({ ...s, shard: 4 }), msg: /1 ≤ i ≤ n/ },
    { what: 'an unknown status', text: JSON.stringify({ ...s, status: 'ok' }), msg: /status/ },
    { what: 'no matrix', text: JSON.stringify({ ...s, matrix: undefined }), msg: /matrix/ },
    { what: 'not JSON', text: '{', msg: /not JSON/ },
  ])('refuses $what', ({ text, msg }) => {
    expect(() => parseShardJson(text)).toThrow(msg);
  });
});
