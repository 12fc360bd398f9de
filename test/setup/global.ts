// Vitest global setup: builds the libipt C tools once per run and tells the
// test files whether they can use them (inject('libipt')). Under CI=true a
// missing libipt/gcc fails the run loudly; elsewhere the tests that need the
// tools skip with the reason (describe.skipIf).
import type { TestProject } from 'vitest/node';
import { buildLibiptTools, LibiptToolsError, type LibiptTools } from '../../harness/bench/libipt-tools.js';

/** What test files get from inject('libipt'). */
export type LibiptStatus =
  | { readonly ok: true; readonly tools: LibiptTools }
  | { readonly ok: false; readonly reason: string };

declare module 'vitest' {
  export interface ProvidedContext {
    libipt: LibiptStatus;
  }
}

/** Builds the tools (or records why not) and provides the status to every test file. */
export default async function setup(project: TestProject): Promise<void> {
  let status: LibiptStatus;
  try {
    status = { ok: true, tools: await buildLibiptTools() };
  } catch (e) {
    if (!(e instanceof LibiptToolsError) || process.env['CI'] === 'true') throw e;
    status = { ok: false, reason: `libipt tools unavailable (${e.reason}): ${e.message}` };
  }
  project.provide('libipt', status);
}
