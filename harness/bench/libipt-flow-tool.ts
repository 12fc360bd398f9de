// Builds test/libipt/ptflow.c, the libipt instruction-flow checker of ptlab's
// flow reconstruction (docs/design.md "truth.jsonl"), into build/libipt/ next to
// the other tools, and runs it. Reuses libipt-tools.ts (directories, error type).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildLibiptTools, defaultToolDirs, type ToolDirs } from './libipt-tools.js';

const run = promisify(execFile);
const MAX_OUTPUT = 512 * 1024 * 1024;

/** Compiles ptflow (with the other libipt tools) when missing or stale; returns its path. Throws LibiptToolsError. */
export async function buildPtflow(dirs: ToolDirs = defaultToolDirs()): Promise<string> {
  return (await buildLibiptTools(dirs)).ptflow;
}

/** libipt's flow-json lines for `trace` against images [(path, base)]. */
export async function ptflow(exe: string, trace: string, images: readonly { readonly path: string; readonly base: bigint }[]): Promise<string[]> {
  const args = [trace, ...images.flatMap((im) => [im.path, `0x${im.base.toString(16)}`])];
  const { stdout } = await run(exe, args, { maxBuffer: MAX_OUTPUT });
  return stdout.split('\n').filter((l) => l !== '');
}

/** libipt's flow decoder timed inside ptflow (`--bench RUNS`, best run, nothing printed). */
export async function ptflowBench(
  exe: string,
  trace: string,
  images: readonly { readonly path: string; readonly base: bigint }[],
  runs = 3,
): Promise<{ instructions: number; errors: number; seconds: number }> {
  const args = ['--bench', String(runs), trace, ...images.flatMap((im) => [im.path, `0x${im.base.toString(16)}`])];
  const { stdout } = await run(exe, args, { maxBuffer: MAX_OUTPUT });
  return JSON.parse(stdout) as { instructions: number; errors: number; seconds: number };
}
