// guest/ is kernel C (CONTRIBUTING.md "Code"): every .c and .h of guest/kmod and guest/helper
// passes the kernel's own kernel-doc checker, `scripts/kernel-doc -none -Wall` (every documented
// function has all its parameters and a Return: where it returns a value, every documented
// struct all its members), keeps to 100 columns, and has no one-line "/** ... */" comment, which
// kernel-doc does not read as kernel-doc and so would never check. kernel-doc comes with Debian's
// linux-kbuild-<version> (a dependency of the linux-headers packages `npm run images` installs);
// only the 6.12 one takes -Wall, so without it that part skips and says so. checkpatch.pl is in
// no Debian package but linux-source's tarball, so it is not run here.
import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { tmpRoot } from '../scenarios/tmp.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FILES = ['guest/kmod', 'guest/helper'].flatMap((d) =>
  readdirSync(join(REPO, d)).filter((f) => /\.[ch]$/.test(f)).sort().map((f) => join(REPO, d, f)));

const root = await tmpRoot('ptlab-kernel-doc-');
/** A function whose kernel-doc lacks a parameter and its Return: what -Wall must report. */
const BAD = join(root, 'bad.c');
await writeFile(BAD, '/**\n * twice - double a number\n */\nint twice(int x)\n{\n\treturn 2 * x;\n}\n');

/** The newest installed kernel-doc that takes -Wall (6.1's does not), or undefined. */
async function findKernelDoc(): Promise<string | undefined> {
  let dirs: string[] = [];
  try {
    dirs = readdirSync('/usr/lib').filter((d) => d.startsWith('linux-kbuild-'));
  } catch {
    return undefined;
  }
  dirs.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  for (const d of dirs) {
    const exe = join('/usr/lib', d, 'scripts', 'kernel-doc');
    const r = await execa(exe, ['-none', '-Wall', BAD], { reject: false, all: true }).catch(() => undefined);
    if (r?.exitCode === 0 && /not described/.test(r.all ?? '')) return exe;
  }
  return undefined;
}

const kernelDoc = await findKernelDoc();
const name = 'guest/ passes kernel-doc -none -Wall';

describe.skipIf(kernelDoc === undefined)(kernelDoc !== undefined ? name : `${name} (skipped: no kernel-doc that takes -Wall: npm run images -- --kernel 6.12 installs bookworm-backports' linux-kbuild-6.12)`, () => {
  const exe = kernelDoc ?? '';

  test('a function without its parameter and Return: is reported (the checker checks)', async () => {
    const r = await execa(exe, ['-none', '-Wall', BAD], { reject: false, all: true });
    expect(r.all).toMatch(/'x' not described in 'twice'/);
    expect(r.all).toMatch(/No description found for return value of 'twice'/);
  });

  test('every .c and .h of guest/kmod and guest/helper: no warning', async () => {
    const found: string[] = [];
    for (const f of FILES) {
      const r = await execa(exe, ['-none', '-Wall', f], { reject: false, all: true });
      if (r.exitCode !== 0 || r.all) found.push(`${relative(REPO, f)}: ${r.all || `exit ${r.exitCode}`}`);
    }
    expect(FILES.length).toBeGreaterThan(8);
    expect(found).toEqual([]);
  });
});

describe('guest/ keeps the kernel\'s layout', () => {
  test('no line is wider than 100 columns (a tab is 8), but a string alone on its line', () => {
    const wide: string[] = [];
    for (const f of FILES) {
      readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
        // checkpatch.pl's exception: a user-visible string is never split, so it can be grepped.
        if (/^\s*"(?:[^"\\]|\\.)*"\s*(?:,|\)\s*;)?\s*$/.test(line)) return;
        let col = 0;
        for (const ch of line) col = ch === '\t' ? (col & ~7) + 8 : col + 1;
        if (col > 100) wide.push(`${relative(REPO, f)}:${i + 1}: ${col} columns`);
      });
    }
    expect(wide).toEqual([]);
  });

  test('every /** comment is a block kernel-doc reads (no one-line /** ... */)', () => {
    const oneLine: string[] = [];
    for (const f of FILES) {
      readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
        if (/^\s*\/\*\*(?!\s*@).*\*\/\s*$/.test(line)) oneLine.push(`${relative(REPO, f)}:${i + 1}`);
      });
    }
    expect(oneLine).toEqual([]);
  });
});
