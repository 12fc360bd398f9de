// ptlab never overwrites or deletes a file it did not write (docs/design.md "Where run directories
// go"): `report --out`, `replay --out` and `run --force` replace only ptlab's own files, refuse a
// device node, a symbolic link, a directory or a foreign file under one of ptlab's names before
// anything is written, and never write a file in place (a hard link elsewhere keeps its bytes).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-owned-');

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const RUN = ['run', 'topa-grow', '--cpu', 'skylake'];
const suite = join(root, 'suite');
const runDir = join(suite, 'topa-grow', 'skylake');
const made = await ptlab(...RUN, '--out', suite);

/** A character device node of our own (root only: mknod), or why there is none. */
function deviceNode(path: string): string | undefined {
  if (process.getuid?.() !== 0) return 'creating a device node needs root';
  execFileSync('mknod', [path, 'c', '1', '3']); // the same device as /dev/null
  return undefined;
}

const inDev = '/dev/ptlab-owned-test-out';
afterAll(async () => { for (const p of [inDev, `${inDev}-replay`]) await rm(p, { recursive: true, force: true }); });

describe('ptlab report --out', () => {
  test('the suite to report on was made', () => {
    expect(made.code).toBe(0);
  });

  test('a device node at FILE is refused (exit 2) and stays the device it was', async (ctx) => {
    const dev = join(root, 'full-dev');
    const why = deviceNode(dev);
    if (why) ctx.skip(why);
    const r = await ptlab('report', suite, '--out', dev);
    expect([r.code, /is not a regular file/.test(r.err), (await lstat(dev)).isCharacterDevice()]).toEqual([2, true, true]);
  });

  test('a file ptlab did not write is refused (exit 2) and keeps its bytes', async () => {
    const mine = join(root, 'notes.html');
    await writeFile(mine, '<p>my notes</p>');
    const r = await ptlab('report', suite, '--out', mine);
    expect([r.code, /is not a report\.html that ptlab wrote/.test(r.err), await readFile(mine, 'utf8')]).toEqual([2, true, '<p>my notes</p>']);
  });

  test('a symbolic link or a directory at FILE is refused', async () => {
    const target = join(root, 'linked-target.html');
    await writeFile(target, 'elsewhere');
    const ln = join(root, 'link.html');
    await symlink(target, ln);
    const dir = join(root, 'a-dir.html');
    await mkdir(dir);
    const a = await ptlab('report', suite, '--out', ln), b = await ptlab('report', suite, '--out', dir);
    expect([a.code, b.code, await readFile(target, 'utf8'), (await lstat(ln)).isSymbolicLink(), (await stat(dir)).isDirectory()]).toEqual([2, 2, 'elsewhere', true, true]);
  });

  test('a path under /dev is refused up front, and nothing is created there', async () => {
    const r = await ptlab('report', suite, '--out', inDev);
    expect([r.code, /kernel file system/.test(r.err), existsSync(inDev)]).toEqual([2, true, false]);
  });

  test('a report ptlab wrote is replaced by a new file: a hard link to the old one keeps the old page', async () => {
    const page = join(suite, 'report.html'), kept = join(root, 'kept-report.html');
    await link(page, kept);
    const before = await readFile(kept, 'utf8');
    const r = await ptlab('report', suite);
    expect([r.code, (await stat(page)).ino === (await stat(kept)).ino, await readFile(kept, 'utf8') === before]).toEqual([0, false, true]);
  });
});

describe('ptlab replay --out', () => {
  test('the recording itself as --out is refused (exit 2): its transcript keeps its bytes and inode', async () => {
    const t = join(runDir, 'transcript.jsonl');
    const [bytes, ino] = [await readFile(t, 'utf8'), (await stat(t)).ino];
    const r = await ptlab('replay', runDir, '--out', runDir);
    expect([r.code, /is not empty/.test(r.err), await readFile(t, 'utf8') === bytes, (await stat(t)).ino]).toEqual([2, true, true, ino]);
  });

  test('a directory holding a foreign transcript.jsonl is refused; a path under /dev creates nothing', async () => {
    const dir = join(root, 'theirs');
    await mkdir(dir);
    await writeFile(join(dir, 'transcript.jsonl'), 'theirs\n');
    const a = await ptlab('replay', runDir, '--out', dir);
    const b = await ptlab('replay', runDir, '--out', `${inDev}-replay`);
    expect([a.code, await readFile(join(dir, 'transcript.jsonl'), 'utf8'), b.code, existsSync(`${inDev}-replay`)]).toEqual([2, 'theirs\n', 2, false]);
  });

  test('a new directory gets the replay\'s transcript.jsonl and replay.json', async () => {
    const dir = join(root, 'replayed');
    const r = await ptlab('replay', runDir, '--out', dir);
    expect([r.code, existsSync(join(dir, 'transcript.jsonl')), existsSync(join(dir, 'replay.json'))]).toEqual([0, true, true]);
  });
});

describe('ptlab run --force', () => {
  test.for([
    { what: 'a junit.xml of another tool at the root', place: (out: string) => writeFile(join(out, 'junit.xml'), '<testsuites name="mine"/>\n'), file: 'junit.xml' },
    { what: 'a results.jsonl of another tool at the root', place: (out: string) => writeFile(join(out, 'results.jsonl'), '{"mine":1}\n'), file: 'results.jsonl' },
    { what: 'a trace.pt in a directory without a ptlab result.json', place: async (out: string) => { await mkdir(join(out, 'topa-grow', 'skylake'), { recursive: true }); await writeFile(join(out, 'topa-grow', 'skylake', 'trace.pt'), 'mine'); }, file: join('topa-grow', 'skylake', 'trace.pt') },
    { what: 'a symbolic link named report.html', place: async (out: string) => { await writeFile(join(out, 'x'), 'mine'); await symlink(join(out, 'x'), join(out, 'report.html')); }, file: 'x' },
  ])('$what: refused before anything runs (exit 2), every file kept', async ({ what, place, file }) => {
    const out = join(root, `force-${what.replace(/\W+/g, '-')}`);
    await mkdir(out);
    await place(out);
    const before = await readFile(join(out, file), 'utf8');
    const r = await ptlab(...RUN, '--out', out, '--force');
    expect([r.code, /ptlab did not write/.test(r.err), await readFile(join(out, file), 'utf8') === before]).toEqual([2, true, true]);
  });

  test('an earlier run\'s files are replaced by new files: hard links to them keep the earlier bytes', async () => {
    const out = join(root, 'linked');
    expect((await ptlab(...RUN, '--out', out)).code).toBe(0);
    const keptJunit = join(root, 'kept-junit.xml'), keptTrace = join(root, 'kept-trace.pt');
    await link(join(out, 'junit.xml'), keptJunit);
    await link(join(out, 'topa-grow', 'skylake', 'trace.pt'), keptTrace);
    const [junit, trace] = [await readFile(keptJunit), await readFile(keptTrace)];
    expect((await ptlab(...RUN, '--seed', '5', '--out', out, '--force')).code).toBe(0);
    expect([
      (await readFile(keptJunit)).equals(junit), (await readFile(keptTrace)).equals(trace),
      (await stat(keptTrace)).ino === (await stat(join(out, 'topa-grow', 'skylake', 'trace.pt'))).ino,
    ]).toEqual([true, true, false]);
  });
});
