// Builds one small C tool with gcc when its executable is missing or older
// than its sources: the one build step every C helper of the tests and
// benchmarks shares (written under a temporary name, then renamed, so
// concurrent builders never run half a binary).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { PtError } from '../../driver/errors.js';

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
