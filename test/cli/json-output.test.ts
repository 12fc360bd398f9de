// The machine-readable forms: `run --json` and `doctor --json` print one JSON
// document on stdout, with progress and diagnostics on stderr only, spawned from dist/.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI);
const root = await tmpRoot('ptlab-json-');

describe.skipIf(!built)('--json (run `npm run build` first)', () => {
  test('--json: one JSON document on stdout, progress on stderr only', async () => {
    const r = await execa('node', [CLI, 'run', 'topa-grow', 'err-reserved-bit', '--cpu', 'skylake', '--json', '--out', join(root, 'json')], { reject: false, timeout: 60_000 });
    const doc = JSON.parse(r.stdout) as { counts: Record<string, number>; exitCode: number; runs: { scenario: string; verdict: string }[] };
    expect([r.exitCode, doc.exitCode, doc.counts, doc.runs.map((x) => `${x.scenario}:${x.verdict}`), /\[1\/2, 0 failed, ETA \d+s\] PASS topa-grow/.test(r.stderr)])
      .toEqual([0, 0, { runs: 2, passed: 2, failed: 0, corrupt: 0, skipped: 0, errors: 0 }, ['topa-grow:pass', 'err-reserved-bit:pass'], true]);
  }, 60_000);
  test('doctor --json: the findings, realPt, and the exit status that goes with it', async () => {
    const r = await execa('node', [CLI, 'doctor', '--json'], { reject: false, timeout: 60_000 });
    const doc = JSON.parse(r.stdout) as { findings: { ok: boolean; what: string }[]; realPt: boolean; matrix: unknown[] };
    expect([doc.findings.length > 0, doc.findings.some((f) => f.what === 'QEMU'), doc.matrix.length > 0, r.exitCode]).toEqual([true, true, true, doc.realPt ? 0 : 1]);
  });
});
