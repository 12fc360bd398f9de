// The layering of docs/design.md, checked by dependency-cruiser with the rules in
// .dependency-cruiser.cjs: no import points upward (codecs → driver, decoder → driver, driver →
// harness, one target → another, a target → the suite). Arrows still waiting for their fix are
// listed in .dependency-cruiser-known-violations.json, each with the change that removes it;
// the list may only shrink: a fixed arrow still listed fails here too.
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

interface Violation { readonly from: string; readonly to: string; readonly rule: { readonly name: string } }

/** The rule violations dependency-cruiser finds under `cwd` in `dirs`, as "rule: from → to". */
async function violations(cwd: string, dirs: readonly string[]): Promise<string[]> {
  const r = await execa(DEPCRUISE, [...dirs, '--config', CONFIG, '--output-type', 'json'], { cwd, reject: false });
  const out = JSON.parse(r.stdout) as { summary: { violations: Violation[] } };
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

/** One upward import: the file that has it, its source, the rule it breaks and the module it reaches. */
interface UpwardCase { readonly label: string; readonly path: string; readonly src: string; readonly rule: string; readonly to: string }

const UPWARD: readonly UpwardCase[] = [
  { label: 'a codec importing the driver', path: 'driver/hw/probe-codec.ts', src: "import { x } from '../session.js';\nexport const y = x;\n", rule: 'codecs-import-only-base', to: 'driver/session.ts' },
  { label: 'the decoder importing the driver', path: 'driver/decode/probe-decoder.ts', src: "import type { X } from '../session.js';\nexport type Y = X;\n", rule: 'decoder-below-driver', to: 'driver/session.ts' },
  { label: 'the base importing a codec', path: 'driver/base/probe-base.ts', src: "import { x } from '../hw/probe-field.js';\nexport const y = x;\n", rule: 'base-imports-nothing', to: 'driver/hw/probe-field.ts' },
  { label: 'the driver importing a target', path: 'driver/probe-driver.ts', src: "import { x } from '../harness/sim/probe-sim.js';\nexport const y = x;\n", rule: 'driver-never-imports-harness', to: 'harness/sim/probe-sim.ts' },
  { label: 'the ssh target importing the qemu target', path: 'harness/ssh/probe-ssh.ts', src: "import { x } from '../qemu/probe-qemu.js';\nexport const y = x;\n", rule: 'ssh-imports-no-other-target', to: 'harness/qemu/probe-qemu.ts' },
  { label: 'the qemu target importing the sim', path: 'harness/qemu/probe-qemu.ts', src: "import { x } from '../sim/probe-sim.js';\nexport const y = x;\n", rule: 'qemu-imports-no-other-target', to: 'harness/sim/probe-sim.ts' },
  { label: 'the guest link importing a target', path: 'harness/link/probe-link.ts', src: "import { x } from '../sim/probe-sim.js';\nexport const y = x;\n", rule: 'link-below-targets', to: 'harness/sim/probe-sim.ts' },
  { label: 'a target importing the runner', path: 'harness/sim/probe-sim2.ts', src: "import { x } from '../runner/probe-runner.js';\nexport const y = x;\n", rule: 'targets-below-the-suite', to: 'harness/runner/probe-runner.ts' },
  { label: 'the runner importing ptlab merge', path: 'harness/runner/probe-runner2.ts', src: "import { x } from '../merge/probe-merge.js';\nexport const y = x;\n", rule: 'merge-below-the-cli-only', to: 'harness/merge/probe-merge.ts' },
  { label: 'the runner importing the crash-point sweep', path: 'harness/runner/probe-runner3.ts', src: "import { x } from '../crash/probe-crash.js';\nexport const y = x;\n", rule: 'crash-below-the-cli-only', to: 'harness/crash/probe-crash.ts' },
  { label: 'the run directory importing the runner', path: 'harness/rundir/probe-rundir.ts', src: "import type { X } from '../runner/probe-runner.js';\nexport type Y = X;\n", rule: 'rundir-below-its-readers-and-writers', to: 'harness/runner/probe-runner.ts' },
  { label: 'the HTML report importing the runner', path: 'harness/report/html/probe-html.ts', src: "import { x } from '../../runner/probe-runner.js';\nexport const y = x;\n", rule: 'report-html-reads-run-directories', to: 'harness/runner/probe-runner.ts' },
];

const made: string[] = [];
afterAll(async () => { for (const d of made) await rm(d, { recursive: true, force: true }); });

/** A throw-away tree with `files` (path → source) and a tsconfig, for the rules to judge. */
async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ptlab-layers-'));
  made.push(dir);
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }));
  for (const [path, src] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), src);
  }
  return dir;
}

describe('layering (dependency-cruiser)', () => {
  test('every import in driver/ and harness/ points downward, apart from the listed known arrows', async () => {
    const known = (JSON.parse(await readFile(join(ROOT, '.dependency-cruiser-known-violations.json'), 'utf8')) as { arrows: Violation[] }).arrows
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(await violations(ROOT, ['driver', 'harness'])).toEqual(known);
  }, 60_000);

  test.for<UpwardCase>(UPWARD)('an upward import fails: $label', { timeout: 60_000 }, async ({ path, src, rule, to }) => {
    const leaf = "export const x = 1;\nexport type X = number;\n";
    const dir = await tree({
      'driver/session.ts': leaf, 'driver/hw/probe-field.ts': leaf, 'harness/sim/probe-sim.ts': leaf,
      'harness/qemu/probe-qemu.ts': leaf, 'harness/runner/probe-runner.ts': leaf, 'harness/merge/probe-merge.ts': leaf, 'harness/crash/probe-crash.ts': leaf, [path]: src,
    });
    expect(await violations(dir, ['driver', 'harness'])).toEqual([`${rule}: ${path} → ${to}`]);
  });

  test('the same tree without the upward import passes', async () => {
    const leaf = "export const x = 1;\n";
    const dir = await tree({
      'driver/session.ts': "import { x } from './hw/probe-field.js';\nexport const y = x;\n", 'driver/hw/probe-field.ts': leaf,
      'harness/sim/probe-sim.ts': "import { y } from '../../driver/session.js';\nexport const z = y;\n",
    });
    expect(await violations(dir, ['driver', 'harness'])).toEqual([]);
  }, 60_000);
});
