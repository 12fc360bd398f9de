// The HTML report in a real browser (Debian's chromium through playwright-core): it makes no
// request, the matrix shows each run's verdict, a failing cell opens its run's section with the
// failed expectation and the transcript excerpt, the charts are drawn, a skip is one line. The
// screenshots are kept under build/report-screenshots/. When chromium is installed but does not
// start, every test here fails with the launch error.
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM_PATH, chromiumInstalled, launchChromium } from '../../harness/bench/chromium.js';
import { writeSuiteReport } from '../../harness/report/html/write-report.js';
import type { ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { CORRUPT, corruptCopy, makeSuite, SUITE } from './suite.js';

const SHOTS = resolve(import.meta.dirname, '../../build/report-screenshots');
const NO_CHROMIUM = `the HTML report in chromium (skipped: ${CHROMIUM_PATH} is not installed; apt-get install -y chromium)`;

describe.skipIf(!chromiumInstalled())(chromiumInstalled() ? 'the HTML report in chromium' : NO_CHROMIUM, () => {
  let browser: Browser, url = '', results: ResultJson[] = [], suite = '';

  beforeAll(async () => {
    suite = join(await tmpRoot('ptlab-report-html-'), 'suite');
    results = await makeSuite(suite);
    url = pathToFileURL(await writeSuiteReport(suite)).href;
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium(); // a BrowserError here fails every test with its message
  }, 120_000);
  afterAll(async () => { await browser?.close(); });

  /** A fresh page at `hash` (of the page at `at`), with every request, console error and page error recorded. */
  async function open(hash = '', at = url): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    // bypassCSP: the page's own policy would block a request before it is made; without it, any attempt shows.
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, bypassCSP: true });
    const page = await context.newPage();
    const requests: string[] = [], errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${at}${hash}`, { waitUntil: 'load' });
    return { page, requests, errors };
  }

  test('the page makes no request but its own file, and logs no error', async () => {
    const { page, requests, errors } = await open();
    // Open every section too: drawing must not fetch anything either.
    await page.evaluate('document.querySelectorAll("details.run").forEach((d) => { d.open = true; })');
    await page.waitForFunction('[...document.querySelectorAll("details.run")].every((d) => d.dataset.drawn)');
    await page.waitForTimeout(200);
    expect([requests, errors]).toEqual([[url], []]);
    await page.context().close();
  });

  test('the page holds no reference to another document (no src, no link, no http URL in an attribute)', async () => {
    const html = await readFile(new URL(url), 'utf8');
    expect([/<script[^>]*\ssrc=/i.test(html), /<link\s/i.test(html), /\s(?:src|href)="https?:/i.test(html)]).toEqual([false, false, false]);
  });

  test('the matrix shows every run\'s verdict in its scenario row and profile column', async () => {
    const { page } = await open();
    const cells = await page.evaluate(`(() => {
      const t = document.querySelector('table.matrix');
      const cols = [...t.querySelectorAll('thead tr:last-child th')].map((th) => th.textContent);
      return [...t.querySelectorAll('tbody tr')].flatMap((tr) => [...tr.querySelectorAll('td')].map((td, i) => [tr.querySelector('th').textContent, cols[i + 1], td.textContent]));
    })()`) as [string, string, string][];
    expect(cells.sort()).toEqual(results.map((r) => [r.scenario, `${r.target}:${r.profile}`, r.verdict]).sort());
    await page.screenshot({ path: join(SHOTS, 'matrix.png') });
    await page.context().close();
  });

  test('the suite ran with a knob: the header names it, and each judged cell and section head carries it', async () => {
    const { page } = await open();
    const seen = await page.evaluate(`(() => {
      const a = document.querySelector('table.matrix a[href="#${SUITE.failing.id}"]');
      return [document.querySelector('header p.controls')?.textContent, a.parentElement.dataset.controls,
        getComputedStyle(a, '::after').content, document.querySelector('#${SUITE.failing.id} summary .ctl')?.textContent];
    })()`) as string[];
    expect(seen).toEqual(['negative controls: knob no-topa-stop-status: every judged run should FAIL; a pass is a bug the suite misses',
      'knob no-topa-stop-status', '" \u2691"', 'with knob no-topa-stop-status']);
    await page.context().close();
  });

  test('clicking a failing cell opens that run\'s section with the failed expectation and the transcript excerpt', async () => {
    const { page, errors } = await open();
    const failed = results.find((r) => r.scenario === SUITE.failing.scenario && r.profile === SUITE.failing.profile)!.expectations.find((e) => !e.ok)!;
    await page.click(`table.matrix a[href="#${SUITE.failing.id}"]`);
    const section = page.locator(`#${SUITE.failing.id}`);
    await expect.poll(() => section.getAttribute('open')).toBe('');
    const first = page.locator(`#${SUITE.failing.id}-first-failure`);
    await first.waitFor({ state: 'visible', timeout: 10_000 });
    expect([await first.textContent(), await section.locator('pre.excerpt').isVisible(), await section.locator('pre.excerpt .at').count()])
      .toEqual([expect.stringContaining(failed.name), true, 1]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'failing-section.png') });
    await section.screenshot({ path: join(SHOTS, 'failing-section-full.png') });
    await page.context().close();
  });

  test.for([
    { what: 'the region fill', chart: '.fill-chart' },
    { what: 'the PMI timeline', chart: '.pmi-chart' },
  ])('an opened section draws $what as a canvas of non-zero size', async ({ chart }) => {
    const { page } = await open(`#${SUITE.passing.id}`);
    const canvas = page.locator(`#${SUITE.passing.id} ${chart} canvas`).first();
    await canvas.waitFor({ state: 'visible', timeout: 10_000 });
    const box = await canvas.boundingBox();
    expect([box!.width > 100, box!.height > 50]).toEqual([true, true]);
    await page.locator(`#${SUITE.passing.id}`).screenshot({ path: join(SHOTS, 'passing-section.png') });
    await page.context().close();
  });

  test('the ToPA layout of an opened section lists its table with INT, STOP and END entries', async () => {
    const { page } = await open(`#${SUITE.passing.id}`);
    const text = await page.locator(`#${SUITE.passing.id} table.topa`).first().textContent();
    expect([text?.includes('INT'), text?.includes('STOP'), text?.includes('END')]).toEqual([true, true, true]);
    await page.context().close();
  });

  test('a corrupt run\'s section lists the memory oracle\'s events and the leaked buffers', async () => {
    const copy = join(suite, '..', 'corrupt');
    await corruptCopy(suite, copy);
    const { page, errors } = await open(`#${SUITE.failing.id}`, pathToFileURL(await writeSuiteReport(copy)).href);
    const events = page.locator(`#${SUITE.failing.id}-corrupt table.corrupt tbody tr`);
    await events.first().waitFor({ state: 'visible', timeout: 10_000 });
    const row = (t: string) => page.locator(`#${SUITE.failing.id} table.${t} tbody tr`).first().locator('td').allTextContents();
    expect([await events.count(), await row('corrupt'), await row('leaked'), errors]).toEqual([
      1, [CORRUPT.event.kind, String(CORRUPT.event.cpu), CORRUPT.event.addr, '64 B', CORRUPT.event.detail],
      [CORRUPT.leaked.base, '4 KiB', CORRUPT.leaked.role], [],
    ]);
    await page.locator(`#${SUITE.failing.id}`).screenshot({ path: join(SHOTS, 'corrupt-section.png') });
    await page.context().close();
  });

  test('a skipped run is one line with its reason, without a section body or a chart', async () => {
    const { page } = await open();
    const line = page.locator(`#${SUITE.skipped.id}`);
    const reason = results.find((r) => r.scenario === SUITE.skipped.scenario && r.profile === SUITE.skipped.profile)!.reason!;
    expect([await page.evaluate(`document.getElementById('${SUITE.skipped.id}').tagName`), (await line.textContent())?.includes(reason), await line.locator('canvas').count()])
      .toEqual(['P', true, 0]);
    await page.context().close();
  });
});
