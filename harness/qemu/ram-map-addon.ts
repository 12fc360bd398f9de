// The ram-map Node addon (harness/qemu/native/ram-map.c): mmap of the shared guest-RAM file.
// Built on first use with gcc against the running Node's own headers (no install script, no
// node-gyp, no download), into build/native/; loaded once per process. When it cannot be built
// or loaded, callers get the reason and fall back to pread (ram-file.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCTool, repoRoot } from '../native/c-tool.js';

/** What the addon exports (see the comment at the top of ram-map.c). */
export interface RamMapAddon {
  /** Maps [offset, offset+length) of the open file `fd`, shared and writable. */
  map(fd: number, offset: number, length: number): ArrayBuffer;
  /** Faults [offset, offset+length) of a window in, writable. */
  populate(window: ArrayBuffer, offset: number, length: number): void;
  /** Swaps a window for anonymous zero pages: the file is no longer referenced. */
  release(window: ArrayBuffer): void;
}

export type RamMapLoad = { readonly addon: RamMapAddon } | { readonly unavailable: string };

const HEADER = 'node_api.h';

/** Directories that may hold this Node's headers, most specific first. */
export function nodeHeaderCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const prefix = dirname(dirname(process.execPath));
  const nodedir = env['npm_config_nodedir'];
  return [
    ...(env['PTLAB_NODE_HEADERS'] ? [env['PTLAB_NODE_HEADERS']] : []),
    ...(nodedir ? [join(nodedir, 'include', 'node')] : []),
    join(prefix, 'include', 'node'),
    '/usr/include/node',
    '/usr/local/include/node',
    join(homedir(), '.cache', 'node-gyp', process.versions.node, 'include', 'node'),
  ];
}

/** The first candidate holding node_api.h, or undefined. */
export function findNodeHeaders(candidates: readonly string[] = nodeHeaderCandidates()): string | undefined {
  return candidates.find((dir) => existsSync(join(dir, HEADER)));
}

/** Builds (if stale) and loads the addon; never throws. */
async function load(): Promise<RamMapLoad> {
  const headers = findNodeHeaders();
  if (headers === undefined) {
    return { unavailable: `Node's headers (${HEADER}) were not found; set PTLAB_NODE_HEADERS to the directory holding them` };
  }
  try {
    const root = repoRoot();
    const source = join(root, 'harness', 'qemu', 'native', 'ram-map.c');
    const out = join(root, 'build', 'native', 'ram-map.node');
    await buildCTool({
      sources: [source, join(headers, HEADER)],
      exe: out,
      cflags: ['-O2', '-Wall', '-Wextra', '-std=gnu11', '-shared', '-fPIC', `-I${headers}`],
    });
    const addon = createRequire(import.meta.url)(out) as RamMapAddon;
    if (typeof addon.map !== 'function' || typeof addon.release !== 'function' || typeof addon.populate !== 'function') {
      return { unavailable: `${out} does not export map/populate/release` };
    }
    return { addon };
  } catch (e) {
    return { unavailable: `the ram-map addon could not be built or loaded: ${(e as Error).message}` };
  }
}

let loading: Promise<RamMapLoad> | undefined;

/** The addon, built and loaded once per process. */
export function loadRamMap(): Promise<RamMapLoad> {
  loading ??= load();
  return loading;
}
