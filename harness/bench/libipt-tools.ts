// Builds the libipt-based C tools (test/libipt/*.c) that serve as an
// independent oracle for ptlab's packet layer (docs/design.md "Layers": libipt is
// the independent decoder for packets and flow). Used by
// `npm run bench` and by the vitest global setup (test/setup/global.ts).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PtError } from '../../driver/base/errors.js';
import { repoRoot as sourceRoot } from '../native/c-tool.js';

const run = promisify(execFile);

/** The C tools, one source file each under test/libipt/. */
export const LIBIPT_TOOLS = ['ptjson', 'ptgen', 'ptbench', 'ptflow'] as const;

/** One of the C tools. */
export type LibiptTool = (typeof LIBIPT_TOOLS)[number];

/** Absolute paths of the built executables. */
export type LibiptTools = Readonly<Record<LibiptTool, string>>;

/** Why the tools could not be built. */
export type LibiptFailure = 'no-gcc' | 'no-libipt' | 'no-sources' | 'compile-failed';

/** The tools cannot be built here; `reason` says which prerequisite is missing. */
export class LibiptToolsError extends PtError {
  override readonly name = 'LibiptToolsError';
  constructor(
    readonly reason: LibiptFailure,
    message: string,
    readonly evidence: { readonly argv?: readonly string[]; readonly stderr?: string } = {},
    options?: ErrorOptions,
  ) {
    super('unsupported', message, options);
  }
}

/** The repository root: the nearest ancestor of this file holding package.json (works from dist/ too). */
export function repoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  try {
    return sourceRoot(from);
  } catch (e) {
    throw new LibiptToolsError('no-sources', (e as Error).message, {}, { cause: e });
  }
}

/** Where the tools' sources and executables live, and the C compiler to use. */
export interface ToolDirs {
  readonly srcDir: string;
  readonly outDir: string;
  /** The C compiler (default: $CC or gcc). */
  readonly cc?: string;
}

/** Default directories: sources in test/libipt/, executables in build/libipt/ (gitignored). */
export function defaultToolDirs(root: string = repoRoot()): ToolDirs {
  return { srcDir: join(root, 'test', 'libipt'), outDir: join(root, 'build', 'libipt') };
}
const CFLAGS = ['-O2', '-Wall', '-Wextra', '-std=gnu11'];
/** Headers every tool includes: a change rebuilds all of them. */
const SHARED_HEADERS = ['ptio.h'];

function mtimeMs(path: string): number {
  return statSync(path).mtimeMs;
}

function isStale(exe: string, sources: readonly string[]): boolean {
  if (!existsSync(exe)) return true;
  const built = mtimeMs(exe);
  return sources.some((s) => mtimeMs(s) > built);
}

function stderrOf(e: unknown): string {
  const s = (e as { readonly stderr?: unknown }).stderr;
  return typeof s === 'string' ? s : '';
}

/** Checks that gcc runs and that a program using libipt compiles and links. */
async function probe(cc: string, outDir: string): Promise<void> {
  try {
    await run(cc, ['--version']);
  } catch (e) {
    throw new LibiptToolsError('no-gcc', `cannot run the C compiler '${cc}' (install gcc)`, { argv: [cc, '--version'] }, { cause: e });
  }
  const src = join(outDir, `probe-${process.pid}.c`);
  const exe = join(outDir, `probe-${process.pid}`);
  writeFileSync(src, '#include <intel-pt.h>\nint main(void) { return pt_library_version().major == 0; }\n');
  const argv = [cc, src, '-o', exe, '-lipt'];
  try {
    await run(cc, argv.slice(1));
  } catch (e) {
    throw new LibiptToolsError(
      'no-libipt',
      `libipt is not usable (install Debian's libipt-dev: /usr/include/intel-pt.h and -lipt): ${stderrOf(e).trim()}`,
      { argv, stderr: stderrOf(e) },
      { cause: e },
    );
  } finally {
    rmSync(src, { force: true });
    rmSync(exe, { force: true });
  }
}

/**
 * Compiles every tool that is missing or older than its sources (gcc -O2 … -lipt) and
 * returns their paths. Each executable is written under a temporary name and renamed,
 * so concurrent builds never see a half-written file. Throws LibiptToolsError.
 */
export async function buildLibiptTools(dirs: ToolDirs = defaultToolDirs()): Promise<LibiptTools> {
  const paths = {} as Record<LibiptTool, string>;
  const stale: LibiptTool[] = [];
  for (const tool of LIBIPT_TOOLS) {
    const src = join(dirs.srcDir, `${tool}.c`);
    const headers = SHARED_HEADERS.map((h) => join(dirs.srcDir, h));
    for (const f of [src, ...headers]) {
      if (!existsSync(f)) throw new LibiptToolsError('no-sources', `missing C source ${f}`);
    }
    paths[tool] = join(dirs.outDir, tool);
    if (isStale(paths[tool], [src, ...headers])) stale.push(tool);
  }
  if (stale.length === 0) return paths;

  const cc = dirs.cc ?? process.env['CC'] ?? 'gcc';
  mkdirSync(dirs.outDir, { recursive: true });
  await probe(cc, dirs.outDir);
  await Promise.all(
    stale.map(async (tool) => {
      const tmp = `${paths[tool]}.tmp-${process.pid}`;
      const argv = [cc, ...CFLAGS, '-o', tmp, join(dirs.srcDir, `${tool}.c`), '-lipt'];
      try {
        await run(cc, argv.slice(1));
      } catch (e) {
        rmSync(tmp, { force: true });
        throw new LibiptToolsError('compile-failed', `compiling ${tool}.c failed:\n${stderrOf(e)}`, { argv, stderr: stderrOf(e) }, { cause: e });
      }
      renameSync(tmp, paths[tool]);
    }),
  );
  return paths;
}
