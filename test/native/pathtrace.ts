// Runner for test/native/pathtrace.c: builds it with gcc into build/native/ (gitignored) and runs a
// workload image natively under ptrace, returning its executed path as flow-json lines.
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Workload } from '../../driver/target.js';
import { buildCTool } from '../../harness/native/c-tool.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '../..');
/** The C source of the tool. */
export const PATHTRACE_SRC = join(here, 'pathtrace.c');
/** Where the tool is built. */
export const PATHTRACE_BIN = join(ROOT, 'build', 'native', 'pathtrace');

/** True where the tool can work: Linux on x86-64 with gcc on PATH. */
export function nativeAvailable(): boolean {
  if (process.platform !== 'linux' || process.arch !== 'x64') return false;
  return (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, 'gcc')));
}

/** Builds the tool unless an up-to-date binary exists; returns its path. */
export function buildPathtrace(): Promise<string> {
  return buildCTool({ sources: [PATHTRACE_SRC], exe: PATHTRACE_BIN, cflags: ['-O2', '-Wall', '-Wextra', '-Werror'] });
}

/** Why a native run failed: the tool's exit code (2 setup, 3 off the expected path) and its message. */
export class NativeRunError extends Error {
  override readonly name = 'NativeRunError';
  constructor(message: string, readonly exitCode: number | null, readonly stderr: string, readonly lines: string[]) {
    super(message);
  }
}

let serial = 0;

/** Runs `w` natively, single-stepped; resolves to its path (one flow-json branch record per line). */
export async function runNative(w: Workload, opts: { maxSteps?: number; signal?: AbortSignal } = {}): Promise<string[]> {
  const bin = await buildPathtrace();
  const img = join(dirname(bin), `img-${process.pid}-${serial++}.bin`);
  writeFileSync(img, w.image);
  const args = [img, w.base.toString(16), w.entry.toString(16), String(opts.maxSteps ?? 50_000_000)];
  try {
    const { stdout } = await run(bin, args, { maxBuffer: 1 << 30, encoding: 'utf8', ...(opts.signal ? { signal: opts.signal } : {}) });
    return stdout === '' ? [] : stdout.trimEnd().split('\n');
  } catch (e) {
    const err = e as { code?: number | string; stderr?: string; stdout?: string };
    const stdout = err.stdout ?? '';
    throw new NativeRunError(`pathtrace failed: ${(err.stderr ?? String(e)).trim()}`, typeof err.code === 'number' ? err.code : null,
      err.stderr ?? '', stdout === '' ? [] : stdout.trimEnd().split('\n'));
  } finally {
    rmSync(img, { force: true });
  }
}
