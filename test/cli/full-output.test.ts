// Standard output that cannot be written (a full disk; /dev/full) is the environment's failure, not
// ptlab's: every command says so in one line and exits 4 (docs/exit-codes.md), never 70 with a stack.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-full-');
const suite = join(root, 'suite');
const run = join(suite, 'topa-grow', 'skylake');
await main(['run', 'topa-grow', '--cpu', 'skylake', '--out', suite], { out: () => undefined, err: () => undefined });

const COMMANDS: readonly (readonly string[])[] = [
  ['list'], ['list', '--json'], ['--help'], ['--version'], ['doctor'],
  ['dump', join(run, 'trace.pt')], ['dump', '--json', join(run, 'trace.pt')],
  ['flow', join(run, 'trace.pt'), '--image', `${join(run, 'image.bin')}@0x10000000`],
  ['run', 'topa-grow', '--cpu', 'skylake', '--out', join(root, 'r1')], ['run', 'topa-grow', '--cpu', 'skylake', '--json', '--out', join(root, 'r2')],
  ['diff', run, run], ['diff', '--json', run, run],
];

describe.skipIf(!existsSync('/dev/full'))('stdout on /dev/full', () => {
  test.for(COMMANDS.map((argv) => ({ argv, name: argv.slice(0, 2).join(' ') })))('ptlab $name …: exit 4, one line on stderr, no stack', async ({ argv }) => {
    // The shell's redirection: the command's own fd 1 is /dev/full (execa's `file` option copies through a pipe).
    const r = await execa('sh', ['-c', 'exec node "$@" > /dev/full', 'sh', CLI, ...argv], { reject: false, timeout: 60_000 });
    expect([r.exitCode, /cannot write to standard output: ENOSPC/.test(r.stderr), /internal error|\n\s+at /.test(r.stderr)]).toEqual([4, true, false]);
  });
});
