// Builds one small C tool (or Node addon) with gcc when its output is missing or
// older than its sources: the one build step every C helper of the harness, the
// tests and the benchmarks shares (written under a temporary name, then renamed,
// so concurrent builders never run or load half a binary).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PtError } from '../../driver/base/errors.js';

const run = promisify(execFile);

/** What to build. */
export interface CToolSpec {
  /** The .c file, then any headers it includes (a newer header rebuilds too). */
  readonly sources: readonly string[];
  readonly exe: string;
  readonly cflags?: readonly string[];
  readonly libs?: readonly string[];
  /** The C compiler (default: $CC or gcc). */
  readonly cc?: string;
}

function stale(exe: string, sources: readonly string[]): boolean {
  if (!existsSync(exe)) return true;
  const built = statSync(exe).mtimeMs;
  return sources.some((s) => statSync(s).mtimeMs > built);
}

/** Compiles `spec` unless an up-to-date executable exists; returns the executable's path. */
export async function buildCTool(spec: CToolSpec): Promise<string> {
  const [main] = spec.sources;
  if (main === undefined || spec.sources.some((s) => !existsSync(s))) {
    throw new PtError('bad_config', `missing C source among ${spec.sources.join(', ')}`);
  }
  if (!stale(spec.exe, spec.sources)) return spec.exe;
  mkdirSync(dirname(spec.exe), { recursive: true });
  const cc = spec.cc ?? process.env['CC'] ?? 'gcc';
  const tmp = `${spec.exe}.tmp-${process.pid}`;
  const argv = [...(spec.cflags ?? ['-O2', '-Wall', '-Wextra']), '-o', tmp, main, ...(spec.libs ?? [])];
  try {
    await run(cc, argv);
  } catch (e) {
    rmSync(tmp, { force: true });
    const stderr = (e as { stderr?: unknown }).stderr;
    throw new PtError('bad_config', `${cc} ${argv.join(' ')} failed:\n${typeof stderr === 'string' ? stderr : String(e)}`, { cause: e });
  }
  renameSync(tmp, spec.exe);
  return spec.exe;
}

/** The repository root: the nearest ancestor of `from` holding package.json (works from dist/ too). */
export function repoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new PtError('bad_config', `no package.json above ${from}`);
  }
}
