// A real browser for the report's tests and benchmark (docs/report.md "Tests and benchmark"):
// Debian's chromium (`apt-get install chromium`; .ci/run installs it) driven by playwright-core,
// which downloads no browser of its own. A browser that is there but does not start is an error
// that says so, never a silent pass.
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { PtError } from '../../driver/base/errors.js';

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Why no browser could be had: not installed, playwright-core missing, or the launch failed. */
export class BrowserError extends PtError {
  override readonly name = 'BrowserError';
  constructor(message: string, options?: ErrorOptions) {
    super('unsupported', message, options);
  }
}

/** Whether chromium is installed where the tests and the benchmark look for it. */
export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/** Starts headless chromium (`executablePath`: another binary, for tests); BrowserError naming the cause when it cannot. */
export async function launchChromium(executablePath = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) throw new BrowserError(`${executablePath} is not installed: apt-get install -y chromium`);
  let pw: typeof import('playwright-core');
  try {
    pw = await import('playwright-core');
  } catch (e) {
    throw new BrowserError(`the npm package playwright-core (a devDependency) is not installed: run npm ci (${(e as Error).message})`, { cause: e });
  }
  try {
    return await pw.chromium.launch({ executablePath, headless: true, timeout: 60_000 });
  } catch (e) {
    throw new BrowserError(`chromium at ${executablePath} is installed but could not be started: ${(e as Error).message}`, { cause: e });
  }
}

/** Milliseconds from the start of navigation to the end of the load event of `url` in `page` (Navigation Timing). */
export async function loadEventMs(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
  const ms = await page.evaluate('(() => { const n = performance.getEntriesByType("navigation")[0]; return n ? n.loadEventEnd - n.startTime : -1; })()');
  if (typeof ms !== 'number' || ms < 0) throw new BrowserError(`no navigation timing for ${url}`);
  return ms;
}
