// The CLI fuzz (harness/fuzz/) in its bounded form: every command that reads a file a user names ×
// every file slot × every input kind (missing, empty, a directory, a FIFO, /dev/zero, a symlink to
// a device, a 2 GiB sparse file, random bytes, a truncated file, the right file), each as its own
// process from dist/: no exit 70 or stack trace, no hang past 30 s, peak RSS under 1 GiB, nothing
// outside --out created, changed or removed, nothing left in TMPDIR. `npm run fuzz` runs the long
// form. First, the fuzz's own checks are shown to catch what they exist for, with a CLI that misbehaves.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { matrixCases, runCampaign, summarize } from '../../harness/fuzz/campaign.js';
import { FUZZ_COMMANDS } from '../../harness/fuzz/commands.js';
import { INPUT_KINDS } from '../../harness/fuzz/inputs.js';
import { runCase } from '../../harness/fuzz/run-case.js';
import { Rng } from '../../harness/sim/workload/prng.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI);
const root = await tmpRoot('ptlab-cli-fuzz-');
const dump = FUZZ_COMMANDS.find((c) => c.name === 'dump')!;

describe('the CLI fuzz catches what it looks for', () => {
  /** The problems the fuzz finds in one `dump` case run by the stand-in CLI `source`. */
  async function problemsOf(name: string, source: string, hangMs = 30_000): Promise<readonly string[]> {
    const fixtures = join(root, `${name}-fixtures`);
    const cli = join(root, `${name}.mjs`);
    await writeFile(cli, source);
    await mkdir(join(fixtures, 'suite/topa-grow/skylake'), { recursive: true });
    await writeFile(join(fixtures, 'suite/topa-grow/skylake/trace.pt'), new Uint8Array(16));
    const o = await runCase({ command: dump, slot: 'TRACE', kind: 'valid', seed: 1 }, cli, fixtures, { imageBase: '0x0', closedPort: 1 }, join(root, name), new Rng(1), hangMs);
    return o.problems;
  }

  test('exit 70 with a stack trace', async () => {
    const p = await problemsOf('crash', 'console.error(new Error("boom").stack); process.exit(70);\n');
    expect(p).toEqual(['exit 70', 'a stack trace or an internal error on stderr']);
  });

  test('a file written beside the input, outside --out, and one left in TMPDIR', async () => {
    const p = await problemsOf('writes', 'import { writeFileSync } from "node:fs"; writeFileSync("stray.txt", "x"); writeFileSync(process.env.TMPDIR + "/left", "x");\n');
    expect(p).toEqual([expect.stringMatching(/^outside --out: .*stray\.txt created$/), 'left in TMPDIR: left']);
  });

  test('a hang, killed with its process group', async () => {
    const p = await problemsOf('hang', 'setInterval(() => {}, 1000);\n', 500);
    expect(p).toEqual(['hung: still running after 500 ms (killed)']);
  });

  test('a peak RSS over 1 GiB', async () => {
    const p = await problemsOf('rss', 'const b = Buffer.alloc(1100 * 2 ** 20, 1); console.log(b[5]);\n');
    expect(p).toEqual([expect.stringMatching(/^peak RSS 1[01]\d\d MiB$/)]);
  });
});

describe.skipIf(!built)(`ptlab under the CLI fuzz${built ? '' : ' (skipped: run `npm run build` first)'}`, () => {
  test('every command × slot × input kind: no exit 70, no hang, RSS under 1 GiB, nothing touched outside --out', async () => {
    const cases = matrixCases(1);
    const outcomes = await runCampaign(CLI, join(root, 'matrix'), cases, 2);
    const s = summarize(outcomes);
    const bad = outcomes.filter((o) => o.problems.length > 0).map((o) => `${o.command} ${o.slot}=${o.kind}: ${o.problems.join('; ')}`);
    expect({ cases: s.cases, bad }).toEqual({ cases: FUZZ_COMMANDS.reduce((n, c) => n + c.slots.length, 0) * INPUT_KINDS.length, bad: [] });
    // The wrong inputs are refused as inputs (exit 2), not let through: every kind but the right one is refused somewhere.
    expect(new Set(outcomes.filter((o) => o.exitCode === 2).map((o) => o.kind))).toEqual(new Set(INPUT_KINDS.filter((k) => k !== 'valid')));
  }, 600_000);
});
