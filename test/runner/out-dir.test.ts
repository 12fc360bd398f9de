// `--out` never costs a user a file: a non-empty directory is refused unless --force,
// --force replaces only what an earlier ptlab run wrote, and kernel file systems are refused up
// front instead of failing (or spinning) mid-run.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-out-');

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const RUN = ['run', 'topa-grow', '--cpu', 'skylake'];

describe('ptlab run --out', () => {
  test('a directory holding anything is refused (exit 2) and left exactly as it was', async () => {
    const out = join(root, 'busy');
    await mkdir(out);
    await writeFile(join(out, 'thesis.tex'), 'mine');
    const r = await ptlab(...RUN, '--out', out);
    expect([r.code, r.err.split('\n').find((l) => l.includes('is not empty')), await readdir(out)]).toEqual([
      2, `ptlab run: --out ${out} is not empty (1 entry); give a new or empty directory, or --force to replace the run directories of an earlier run there (ptlab never deletes a file it did not write)`,
      ['thesis.tex'],
    ]);
  });

  test('--force over an earlier run: its run directory is replaced (an older per-run junit.xml too), a file ptlab did not write in it is kept', async () => {
    const out = join(root, 'again');
    expect((await ptlab(...RUN, '--out', out)).code).toBe(0);
    const dir = join(out, 'topa-grow', 'skylake');
    await writeFile(join(dir, 'notes.txt'), 'what I saw');
    await writeFile(join(dir, 'junit.xml'), '<testsuites/>'); // what earlier ptlab versions wrote into each run directory
    const before = await readFile(join(dir, 'result.json'), 'utf8');
    const refused = await ptlab(...RUN, '--out', out);
    const forced = await ptlab(...RUN, '--seed', '9', '--out', out, '--force');
    const after = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as { seed: number };
    expect([refused.code, forced.code, await readFile(join(dir, 'notes.txt'), 'utf8'), after.seed, (JSON.parse(before) as { seed: number }).seed,
      (await readdir(dir)).sort(), (await readdir(out)).sort()]).toEqual([
      2, 0, 'what I saw', 9, 1,
      ['image.bin', 'image.json', 'losses.json', 'notes.txt', 'result.json', 'trace.pt', 'transcript.jsonl', 'truth.jsonl'],
      ['junit.xml', 'report.html', 'results.jsonl', 'topa-grow'],
    ]);
  });

  test('--force over a run directory without foreign files replaces it whole (no stale file of the older run stays)', async () => {
    const out = join(root, 'stale');
    expect((await ptlab(...RUN, '--out', out)).code).toBe(0);
    const dir = join(out, 'topa-grow', 'skylake');
    await writeFile(join(dir, 'truth.jsonl'), 'old');
    expect((await ptlab(...RUN, '--out', out, '--force')).code).toBe(0);
    expect((await readFile(join(dir, 'truth.jsonl'), 'utf8')) === 'old').toBe(false);
  });

  test('--force removes what a killed ptlab left half-written (its process gone), and keeps a live one\'s', async () => {
    const out = join(root, 'killed');
    expect((await ptlab(...RUN, '--out', out)).code).toBe(0);
    const dead = spawnSync('true').pid; // a process that has ended
    const stale = [join(out, 'topa-grow', `.skylake.partial-${dead}-1`), join(out, `.junit.xml.partial-${dead}-2`)];
    const live = join(out, 'topa-grow', `.skylake.partial-${process.pid}-3`);
    await mkdir(stale[0]!);
    await writeFile(join(stale[0]!, 'trace.pt'), 'half');
    await writeFile(stale[1]!, '<?xml');
    await mkdir(live);
    const forced = await ptlab(...RUN, '--out', out, '--force');
    expect(forced.code, forced.err).toBe(0);
    expect([existsSync(stale[0]!), existsSync(stale[1]!), existsSync(live)]).toEqual([false, false, true]);
  });

  test.for(['/proc/self/ptlab-runs', '/sys/kernel/ptlab-runs', '/dev/shm/../ptlab-runs'])('--out %s is refused up front as a kernel file system (exit 2), nothing created', async (out) => {
    const r = await ptlab(...RUN, '--out', out);
    expect([r.code, /is under \/(proc|sys|dev), a kernel file system/.test(r.err), existsSync(out)]).toEqual([2, true, false]);
  });
});

/** A 96 KiB tmpfs at a fresh directory (root only); undefined with the reason it cannot be had. */
async function smallDisk(): Promise<{ dir: string; umount: () => Promise<void> } | string> {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root';
  const dir = join(root, 'small-disk');
  await mkdir(dir, { recursive: true });
  const m = await execa('mount', ['-t', 'tmpfs', '-o', 'size=96k', 'tmpfs', dir], { reject: false });
  if (m.exitCode !== 0) return `mount -t tmpfs failed: ${m.stderr}`;
  return { dir, umount: async () => { await execa('umount', [dir], { reject: false }); } };
}

const disk = await smallDisk();

describe('a full disk', () => {
  test.skipIf(typeof disk === 'string')(`a run directory that cannot be written ends the suite with one line, exit 4, and junit.xml marked incomplete${typeof disk === 'string' ? ` (skipped: ${disk})` : ''}`, async () => {
    const d = disk as Exclude<typeof disk, string>;
    try {
      const out = join(d.dir, 'runs');
      const r = await ptlab('run', '--all', '--cpu', 'skylake', '--out', out);
      const junit = await readFile(join(out, 'junit.xml'), 'utf8');
      const left = (await readdir(out, { recursive: true })).filter((f) => f.includes('.partial-'));
      expect({
        code: r.code, said: /INCOMPLETE: cannot write the run directory .*ENOSPC/.test(r.err),
        junit: /<error message="cannot write the run directory [^"]*ENOSPC/.test(junit), left,
      }).toEqual({ code: 4, said: true, junit: true, left: [] });
    } finally {
      await d.umount();
    }
  });
});
