// Every input file has a bound suited to what it is (without one, /dev/zero as an input took the machine):
// a code image, a losses.json, a sequence file and a lab inventory that go on past their bound are
// refused (exit 2) in one line, at once, holding no more than the bound in memory.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-bounded-');
const run = join(root, 'suite', 'topa-grow', 'skylake');
await main(['run', 'topa-grow', '--cpu', 'skylake', '--out', join(root, 'suite')], { out: () => undefined, err: () => undefined });

const CASES = [
  { what: 'a code image', argv: ['flow', join(run, 'trace.pt'), '--image', '/dev/zero@0x10000000'], msg: /\/dev\/zero holds more than 268435456 bytes, more than a code image ever does/ },
  { what: 'a losses.json', argv: ['flow', join(run, 'trace.pt'), '--image', `${join(run, 'image.bin')}@0x10000000`, '--losses', '/dev/zero'], msg: /more than a losses\.json ever does/ },
  { what: 'a sequence file', argv: ['seq', '/dev/zero', '--out', join(root, 'seq')], msg: /more than a sequence file ever does/ },
  { what: 'a lab inventory', argv: ['run', '--all', '--hosts', '/dev/zero', '--out', join(root, 'hosts')], msg: /more than a lab inventory ever does/ },
  // A trace has no bound (a perf capture is as long as it is), but a device is no trace: it never ends.
  { what: 'a trace (dump)', argv: ['dump', '/dev/zero'], msg: /^ptlab dump: \/dev\/zero: a character device, not a trace file \(read a device through a pipe: - < \/dev\/zero\)$/ },
  { what: 'a trace (flow)', argv: ['flow', '/dev/zero', '--image', `${join(run, 'image.bin')}@0x10000000`], msg: /^ptlab flow: \/dev\/zero: a character device, not a trace file/ },
];

describe.skipIf(!existsSync('/dev/zero'))('/dev/zero as an input', () => {
  test.for(CASES)('$what: refused past its bound (exit 2), in one line, with bounded memory', async ({ argv, msg }) => {
    // A 600 MB heap is more than any bound here needs; reading /dev/zero without one runs out of it.
    const r = await execa('node', ['--max-old-space-size=600', CLI, ...argv], { reject: false, timeout: 60_000 });
    expect([r.exitCode, msg.test(r.stderr), /\n\s+at /.test(r.stderr)]).toEqual([2, true, false]);
  });
});

test('a missing trace is said as a Unix tool says it, once', async () => {
  const r = await execa('node', [CLI, 'dump', join(root, 'nonexistent.pt')], { reject: false });
  expect([r.exitCode, r.stderr]).toEqual([2, `ptlab dump: ${join(root, 'nonexistent.pt')}: No such file or directory`]);
});

test('an input that cannot be opened is said in the system\'s words, never with its errno code', async () => {
  const bad = join(run, 'image.bin', 'x');
  const r = await execa('node', [CLI, 'flow', join(run, 'trace.pt'), '--image', `${bad}@0x10000000`], { reject: false });
  expect([r.exitCode, r.stderr]).toEqual([2, `ptlab flow: ${bad}: Not a directory`]);
});
