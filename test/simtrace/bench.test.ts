// The bench entry runs and reports positive rates (its speed is never asserted).
import { expect, test } from 'vitest';
import { benchGenerator } from '../../harness/bench/generator-bench.js';

test('benchGenerator reports branch and byte rates', () => {
  const r = benchGenerator(80_000);
  expect(r.branchesPerSecond).toBeGreaterThan(0);
  expect(r.bytesPerSecond).toBeGreaterThan(0);
});
