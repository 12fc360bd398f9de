// Builds test/libipt/ptflow.c, the libipt instruction-flow checker of ptlab's
// flow reconstruction (DESIGN.md: "so does libipt's instruction-flow decoder
// … build a small C checker on it"), into build/libipt/ next to the other
// tools, and runs it. Reuses libipt-tools.ts (directories, error type).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { defaultToolDirs, LibiptToolsError, type ToolDirs } from './libipt-tools.js';

const run = promisify(execFile);
const CFLAGS = ['-O2', '-Wall', '-Wextra', '-std=gnu11'];
const MAX_OUTPUT = 512 * 1024 * 1024;

function stderrOf(e: unknown): string {
  const s = (e as { readonly stderr?: unknown }).stderr;
  return typeof s === 'string' ? s : '';
}

/** Compiles ptflow when missing or older than ptflow.c / ptio.h; returns its path. Throws LibiptToolsError. */
export async function buildPtflow(dirs: ToolDirs = defaultToolDirs()): Promise<string> {
  const src = join(dirs.srcDir, 'ptflow.c');
  const header = join(dirs.srcDir, 'ptio.h');
  for (const f of [src, header]) if (!existsSync(f)) throw new LibiptToolsError('no-sources', `missing C source ${f}`);
  const exe = join(dirs.outDir, 'ptflow');
  if (existsSync(exe) && Math.max(statSync(src).mtimeMs, statSync(header).mtimeMs) <= statSync(exe).mtimeMs) return exe;
  const cc = dirs.cc ?? process.env['CC'] ?? 'gcc';
  mkdirSync(dirs.outDir, { recursive: true });
  const tmp = `${exe}.tmp-${process.pid}`;
  const argv = [cc, ...CFLAGS, '-o', tmp, src, '-lipt'];
  try {
    await run(cc, argv.slice(1));
  } catch (e) {
    rmSync(tmp, { force: true });
    const err = stderrOf(e);
    const code = (e as { readonly code?: unknown }).code;
    if (code === 'ENOENT') throw new LibiptToolsError('no-gcc', `cannot run the C compiler '${cc}' (install gcc)`, { argv }, { cause: e });
    const reason = /intel-pt\.h|-lipt/.test(err) ? 'no-libipt' : 'compile-failed';
    throw new LibiptToolsError(reason, `compiling ptflow.c failed:\n${err}`, { argv, stderr: err }, { cause: e });
  }
  renameSync(tmp, exe);
  return exe;
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
