// harness/seq sits above the targets (docs/design.md "Layers"): a target importing it breaks the
// `targets-below-the-suite` rule of .dependency-cruiser.cjs, and nothing in driver/ or the targets
// imports it today.
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const made: string[] = [];
afterAll(async () => { for (const d of made) await rm(d, { recursive: true, force: true }); });

async function violations(cwd: string, dirs: readonly string[]): Promise<string[]> {
  const r = await execa(DEPCRUISE, [...dirs, '--config', CONFIG, '--output-type', 'json'], { cwd, reject: false });
  const out = JSON.parse(r.stdout) as { summary: { violations: { from: string; to: string; rule: { name: string } }[] } };
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

describe('harness/seq in the layering', () => {
  test('the sim importing harness/seq is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ptlab-seq-layers-'));
    made.push(dir);
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }));
    const files = { 'harness/sim/probe.ts': "import { x } from '../seq/probe-seq.js';\nexport const y = x;\n", 'harness/seq/probe-seq.ts': 'export const x = 1;\n' };
    for (const [p, src] of Object.entries(files)) {
      await mkdir(dirname(join(dir, p)), { recursive: true });
      await writeFile(join(dir, p), src);
    }
    expect(await violations(dir, ['harness'])).toEqual(['targets-below-the-suite: harness/sim/probe.ts → harness/seq/probe-seq.ts']);
  }, 60_000);

  test('no violation involves harness/seq in the real tree', async () => {
    expect((await violations(ROOT, ['driver', 'harness'])).filter((v) => v.includes('harness/seq/') || v.includes('commands/seq'))).toEqual([]);
  }, 60_000);
});
