// `ptlab run` and signals, spawned from dist/ as a user or a CI runner stops it:
// SIGTERM, SIGHUP and SIGINT stop the suite after the current run; a second signal stops it at
// once; either way the summary and junit.xml are written, marked incomplete, no staging directory
// is left, and the exit status names the first signal (128 + its number).
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI);
const root = await tmpRoot('ptlab-signals-');

/** A long sweep (thousands of runs) on the sim, with `--keep all` so every run leaves a directory. */
const longSweep = (out: string): ResultPromise<{ reject: false; timeout: number }> =>
  execa('node', [CLI, 'run', '--all', '--cpu', 'skylake', '--seeds', '1-500', '--keep', 'all', '--out', out], { reject: false, timeout: 120_000 });

/** Resolves once the child's stderr has said `what` (or the child ended). */
function saidOnStderr(child: ResultPromise, what: RegExp): Promise<void> {
  return new Promise((resolve) => {
    let text = '';
    void child.finally(() => resolve());
    child.stderr!.on('data', (d: Buffer) => {
      text += d.toString();
      if (what.test(text)) resolve();
    });
  });
}

/** Staging directories (`.…partial-…`) anywhere under `dir`. */
async function partials(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.name.includes('.partial-')) out.push(e.name);
  return out;
}

describe.skipIf(!built)('ptlab run and signals (run `npm run build` first)', () => {
  test.for([
    { sig: 'SIGTERM', code: 143 },
    { sig: 'SIGHUP', code: 129 },
  ] as const)('$sig stops after the current run: exit $code, the summary and junit.xml marked incomplete, no staging left', { timeout: 120_000 }, async ({ sig, code }) => {
    const out = join(root, sig);
    const child = longSweep(out);
    // Plain progress shows the first run's line (then one each twentieth of the runs): stop once it is out.
    await saidOnStderr(child, /^\[\s*1\/\d+, /m);
    child.kill(sig);
    const r = await child;
    const junit = await readFile(join(out, 'junit.xml'), 'utf8');
    expect({
      code: r.exitCode, said: r.stderr.includes(`${sig}: stopping after the current run`),
      summary: /INCOMPLETE: interrupted after \d+ of \d+ runs/.test(r.stdout), junit: junit.includes('<error message="interrupted after'),
      partials: await partials(out),
    }).toEqual({ code, said: true, summary: true, junit: true, partials: [] });
  });

  test('a second signal stops at once: the first signal\'s status, junit.xml still written', async () => {
    const out = join(root, 'twice');
    const child = execa('node', [CLI, 'run', '--all', '--seeds', '1-500', '--out', out], { reject: false, timeout: 120_000 });
    // Once the suite runs (its first run is done), SIGINT; once ptlab has said it stops after the run, SIGTERM.
    await saidOnStderr(child, /^\[\s*1\/\d+, /m);
    child.kill('SIGINT');
    await saidOnStderr(child, /SIGINT: stopping after the current run/);
    child.kill('SIGTERM');
    const r = await child;
    expect({ code: r.exitCode, again: r.stderr.includes('SIGTERM: stopping the target now'), junit: existsSync(join(out, 'junit.xml')), partials: await partials(out) })
      .toEqual({ code: 130, again: true, junit: true, partials: [] });
  }, 120_000);
});
