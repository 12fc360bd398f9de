// The browser of the report's tests and benchmark (harness/bench/chromium.ts). playwright-core is a
// devDependency: nothing that ptlab runs may import it, only harness/bench/ (which `npm run bench`
// runs from a checkout) and tests; dependency-cruiser cannot see it (node_modules is excluded from
// its graph), so the sources are read. A browser that is missing or does not start is an error
// that says so.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { BrowserError, launchChromium } from '../../harness/bench/chromium.js';

const root = join(import.meta.dirname, '../..');

test('only harness/bench/ imports playwright-core among driver/ and harness/', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'driver', 'harness'], { cwd: root, encoding: 'utf8' })
    .split('\n').filter((f) => f.endsWith('.ts') && existsSync(join(root, f)));
  const importers = files.filter((f) => /from 'playwright-core'|import\('playwright-core'\)/.test(readFileSync(join(root, f), 'utf8')));
  expect([importers.length > 0, importers.filter((f) => !f.startsWith('harness/bench/'))]).toEqual([true, []]);
});

test('a browser that is there but does not start is a BrowserError that says so', async () => {
  const e = await launchChromium('/bin/false').catch((x: unknown) => x);
  expect([e instanceof BrowserError, (e as Error).message]).toEqual([true, expect.stringMatching(/^chromium at \/bin\/false is installed but could not be started: /)]);
});

test('a browser that is not there is a BrowserError that says how to install it', async () => {
  const e = await launchChromium('/ptlab-no-such-dir/chromium').catch((x: unknown) => x);
  expect([e instanceof BrowserError, (e as Error).message]).toEqual([true, '/ptlab-no-such-dir/chromium is not installed: apt-get install -y chromium']);
});
