// Runs the libipt C tools (built by test/setup/global.ts) for the tests.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { LibiptTools } from '../../harness/bench/libipt-tools.js';

const run = promisify(execFile);
const MAX_OUTPUT = 512 * 1024 * 1024;

/** The built tools, or why they are missing (for describe.skipIf), and a suite title that says why it skips. */
export function libiptTools(): { tools: LibiptTools | undefined; skipReason: string; title: (name: string) => string } {
  const status = inject('libipt');
  return status.ok
    ? { tools: status.tools, skipReason: '', title: (name) => name }
    : { tools: undefined, skipReason: status.reason, title: (name) => `${name} (skipped: ${status.reason})` };
}

/**
 * libipt's packet-json lines for each file, keyed by path (one ptjson process
 * for all of them; `unknown` decodes the packets newer than libipt 2.0.5 as
 * "unknown" instead of bad_opc).
 */
export async function ptjson(
  tools: LibiptTools,
  files: readonly string[],
  opts: { unknown?: boolean } = {},
): Promise<Map<string, string[]>> {
  const args = [...(opts.unknown ? ['--unknown'] : []), ...files];
  const { stdout } = await run(tools.ptjson, args, { maxBuffer: MAX_OUTPUT });
  const out = new Map<string, string[]>();
  let lines: string[] = [];
  if (files.length === 1) out.set(files[0]!, lines);
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#file ')) {
      lines = [];
      out.set(line.slice('#file '.length), lines);
    } else {
      lines.push(line);
    }
  }
  return out;
}

/** Writes libipt-encoded streams DIR/ptgen-SEED.pt for seeds first..last; returns their paths. */
export async function ptgen(
  tools: LibiptTools,
  first: number,
  last: number,
  dir: string,
  size = 4096,
): Promise<string[]> {
  await run(tools.ptgen, ['--size', String(size), String(first), String(last), dir]);
  const paths: string[] = [];
  for (let seed = first; seed <= last; seed++) paths.push(`${dir}/ptgen-${seed}.pt`);
  return paths;
}

/**
 * libipt's packet-json lines for in-memory streams: writes them to a temporary
 * directory, runs one ptjson over all of them, removes the directory.
 */
export async function ptjsonOf(
  tools: LibiptTools,
  streams: ReadonlyMap<string, Uint8Array>,
  opts: { unknown?: boolean } = {},
): Promise<Map<string, string[]>> {
  const dir = mkdtempSync(join(tmpdir(), 'ptlab-ptjson-'));
  try {
    const names = [...streams.keys()];
    const files = names.map((_, i) => join(dir, `s${i}.pt`));
    names.forEach((name, i) => writeFileSync(files[i]!, streams.get(name)!));
    const byFile = await ptjson(tools, files, opts);
    return new Map(names.map((name, i) => [name, byFile.get(files[i]!) ?? []]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** libipt-encoded streams (ptgen) for seeds first..last, read back into memory, keyed by seed. */
export async function ptgenStreams(tools: LibiptTools, first: number, last: number, size = 4096): Promise<Map<number, Uint8Array>> {
  const dir = mkdtempSync(join(tmpdir(), 'ptlab-ptgen-'));
  try {
    const files = await ptgen(tools, first, last, dir, size);
    return new Map(files.map((f, i) => [first + i, new Uint8Array(readFileSync(f))]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
