// Temporary run directories for scenario, runner and CLI tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/**
 * The directories made and not yet removed. This module is evaluated once per test file (vitest
 * isolates files), while the file is collected, so the hook below is the file's own: it removes
 * what is left when the file's tests end. An afterAll registered later, inside a test or a
 * beforeAll, is never called; directories made there were left in TMPDIR by every run.
 */
const made = new Set<string>();
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
  made.clear();
});

/** A fresh temporary directory, removed when the test that made it ends, or after the file's tests. */
export async function tmpRoot(prefix = 'ptlab-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.add(dir);
  try {
    onTestFinished(async () => { made.delete(dir); await rm(dir, { recursive: true, force: true }); });
  } catch {
    // Not inside a test (collection or a beforeAll): the file's afterAll above removes it.
  }
  return dir;
}
