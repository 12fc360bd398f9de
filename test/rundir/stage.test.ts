// stage() while another lane removes empty seed directories (docs/design.md "Where run directories
// go": a sweep run that keeps nothing leaves no empty parents, and lanes run at once).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { discard, stage } from '../../harness/rundir/stage.js';

let root: string | undefined;
afterEach(async () => { if (root) await rm(root, { recursive: true, force: true }); });

test('staging succeeds every time while a second lane removes the empty parents', async () => {
  root = await mkdtemp(join(tmpdir(), 'ptlab-stage-'));
  const seedDir = join(root, 'seed-7');
  const scenarioDir = join(seedDir, 'topa-grow');
  // The other lane, in a process of its own so it truly runs at once: it stages runs in the same
  // seed directory, and a run that kept no directory removes its empty scenario and seed
  // directories, again and again.
  const script = `const fs = require('node:fs'); const [a, b] = process.argv.slice(1);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (;;) { try { fs.mkdirSync(a, { recursive: true }); } catch {}
      try { fs.rmdirSync(a); } catch {} try { fs.rmdirSync(b); } catch {}
      Atomics.wait(pause, 0, 0, 0.05); }`;
  const remover = spawn(process.execPath, ['-e', script, scenarioDir, seedDir], { stdio: 'ignore' });
  const gone = new Promise((resolve) => remover.once('exit', resolve));
  const failures: string[] = [];
  for (let i = 0; i < 3000; i++) {
    try {
      await discard(await stage(join(scenarioDir, 'skylake')));
    } catch (e) {
      failures.push((e as NodeJS.ErrnoException).code ?? String(e));
    }
  }
  remover.kill('SIGKILL');
  await gone;
  expect(failures).toEqual([]);
}, 120_000);
