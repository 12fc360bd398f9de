// Run directories given as input (diff, replay) are checked before use: a result.json that is
// truncated, empty, edited to the wrong types, a directory or a FIFO is refused in one line with
// exit 2 (docs/exit-codes.md), never a TypeError and exit 70, and never a wait on a FIFO.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-badrun-');
const suite = join(root, 'suite');
const good = join(suite, 'topa-grow', 'skylake');

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', suite);
const resultText = await readFile(join(good, 'result.json'), 'utf8');

/** A copy of the good run directory whose result.json `spoil` replaced. */
async function spoiled(name: string, spoil: (path: string) => Promise<void>): Promise<string> {
  const dir = join(root, name);
  await cp(good, dir, { recursive: true });
  await rm(join(dir, 'result.json'));
  await spoil(join(dir, 'result.json'));
  return dir;
}

const CASES = [
  { what: 'a truncated result.json', spoil: (p: string) => writeFile(p, resultText.slice(0, 40)), msg: /is not a ptlab result\.json: not JSON/ },
  { what: 'an empty result.json', spoil: (p: string) => writeFile(p, ''), msg: /is not a ptlab result\.json: it is empty/ },
  { what: 'expectations that are no list', spoil: (p: string) => writeFile(p, resultText.replace(/"expectations": \[[\s\S]*?\n {2}\],/, '"expectations": "x",')), msg: /is not a ptlab result\.json: expectations must be array/ },
  { what: 'a result.json that is a directory', spoil: (p: string) => mkdir(p), msg: /result\.json is not a regular file/ },
  { what: 'a result.json that is a FIFO', spoil: async (p: string) => { execFileSync('mkfifo', [p]); }, msg: /result\.json is not a regular file/ },
];

describe('a spoiled result.json', () => {
  test.for(CASES)('$what: diff and replay refuse it (exit 2), one line', async ({ what, spoil, msg }) => {
    const dir = await spoiled(what.replace(/\W+/g, '-'), spoil);
    const d = await ptlab('diff', good, dir), r = await ptlab('replay', dir);
    expect([d.code, msg.test(d.err), r.code, msg.test(r.err), /\n\s+at /.test(d.err + r.err)]).toEqual([2, true, 2, true, false]);
  });
});

describe('diff --suite', () => {
  test('a run directory given as a suite is refused (exit 2), not compared as an empty suite', async () => {
    const r = await ptlab('diff', '--suite', suite, good);
    expect([r.code, /is a run directory, not a suite/.test(r.err)]).toEqual([2, true]);
  });
});
