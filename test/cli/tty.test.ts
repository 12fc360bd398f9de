// `ptlab run` on a terminal: progress is one live line on
// stderr, rewritten in place (`\r`, erase to end of line) after every run with the runs done, the
// failures so far and the time left, while a failed run's line is kept; the live line is cleared
// before the summary. The terminal is a pseudo-terminal from util-linux
// `script` (Debian: bsdutils, always installed).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { findOnPath } from '../../harness/qemu/images.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-tty-');
const script = await findOnPath('script');

/** `ptlab run …args` on a pseudo-terminal: everything the terminal received. */
async function onTerminal(...args: string[]): Promise<string> {
  const cmd = ['node', CLI, 'run', ...args].map((a) => `'${a}'`).join(' ');
  const r = await execa(script!, ['-qec', cmd, '/dev/null'], { reject: false, timeout: 60_000 });
  return r.stdout;
}

describe.skipIf(!existsSync(CLI) || script === undefined)('ptlab run on a terminal', () => {
  test('runs share one live line with the count, failures and ETA; a failing run keeps its own; the summary follows a cleared line', async () => {
    const pass = await onTerminal('topa-grow', 'ret-compression', '--cpu', 'skylake', '--out', join(root, 'pass'));
    const fail = await onTerminal('topa-grow', '--cpu', 'skylake', '--knob', 'no-topa-pmi', '--out', join(root, 'fail'));
    expect({
      live: /\r\x1b\[K\[1\/2, 0 failed, ETA \d+s\] PASS topa-grow/.test(pass) && pass.includes('\r\x1b[K[2/2, 0 failed] PASS ret-compression'),
      cleared: /\r\x1b\[Kscenario /.test(pass),
      // The live line is cleared, then the failure is written whole, with its newline.
      kept: /\r\x1b\[K\[1\/1\] FAIL topa-grow \(sim:skylake\)[^\r\n]*\r\n/.test(fail) && fail.includes('\r\x1b[K[1/1, 1 failed] FAIL topa-grow'),
    }).toEqual({ live: true, cleared: true, kept: true });
  }, 120_000);
});
