// Report sections built on section threads (harness/report/html/section-thread.ts) are the
// sections the main thread builds, for every run of a real suite (passing, failing, skipped); a
// thread that has died refuses work, and the suite view then builds those runs itself.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findRuns } from '../../harness/report/html/find-runs.js';
import { runView } from '../../harness/report/html/run-view.js';
import { SectionThread } from '../../harness/report/html/section-thread.js';
import { anchorsOf, suiteView } from '../../harness/report/html/suite-view.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { makeSuite } from './suite.js';

let suite = '';
const opened: SectionThread[] = [];
beforeAll(async () => {
  suite = join(await tmpRoot('ptlab-report-threads-'), 'suite');
  await makeSuite(suite);
}, 120_000);
afterAll(async () => { await Promise.all(opened.map((t) => t.close())); });

describe('section threads', () => {
  test('a thread builds every run\'s view as the main thread does', async () => {
    const { runs } = await findRuns(suite);
    const ids = anchorsOf(runs.map((r) => r.key));
    const [thread] = SectionThread.open(1);
    expect(thread).toBeDefined();
    opened.push(thread!);
    const verdicts = new Set<string>();
    for (const [i, r] of runs.entries()) {
      const here = await runView(r, ids[i]!, r.key);
      verdicts.add(here.summary.verdict);
      expect(await thread!.view({ src: r, id: ids[i]!, key: r.key })).toEqual(here);
    }
    expect([...verdicts].sort()).toEqual(['fail', 'pass', 'skip']);
  }, 60_000);

  test('the suite view is the same with two threads as with none', async () => {
    expect(await suiteView(suite, undefined, { threads: 2 })).toEqual(await suiteView(suite, undefined, { threads: 0 }));
  }, 60_000);

  test('a thread that has stopped refuses work, with a reason', async () => {
    const [thread] = SectionThread.open(1);
    await thread!.close();
    const { runs } = await findRuns(suite);
    await expect(thread!.view({ src: runs[0]!, id: 'x', key: runs[0]!.key })).rejects.toThrow(/exited/);
  });
});
