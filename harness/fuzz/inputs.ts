// The shapes a file argument takes when a user (or a script) gets it wrong: what the CLI fuzz puts
// where ptlab expects a trace, an image, a run directory's file, a sequence, an inventory or a
// key. Each is made on disk at the path the command will be given; `valid` is the right file.
import { execFileSync } from 'node:child_process';
import { mkdir, open, symlink, writeFile } from 'node:fs/promises';
import type { Rng } from '../sim/workload/prng.js';

/** What one file argument is. */
export type InputKind =
  | 'valid' | 'missing' | 'empty' | 'directory' | 'fifo' | 'dev-zero' | 'device-symlink'
  | 'huge-sparse' | 'random' | 'truncated';

export const INPUT_KINDS: readonly InputKind[] = [
  'valid', 'missing', 'empty', 'directory', 'fifo', 'dev-zero', 'device-symlink', 'huge-sparse', 'random', 'truncated',
];

/** Files are made private (a key must be: ssh refuses one that others can read). */
const PRIVATE = { mode: 0o600 } as const;

/** A sparse file this long: larger than every input bound ptlab has, costing no disk. */
export const HUGE_SPARSE_BYTES = 2 ** 31;

/** What was made: the path to give the command, and (for a FIFO) the bytes its writer feeds it. */
export interface MadeInput {
  readonly path: string;
  readonly fifoBytes?: Uint8Array;
}

/**
 * Makes `kind` at `path` from `valid` (the right file's bytes): `dev-zero` is /dev/zero itself
 * (a symlink to it where the path is fixed, inside a run directory), `device-symlink` a symlink
 * to /dev/urandom, `fifo` a FIFO that the caller feeds with `fifoBytes` (as `<(…)` would).
 */
export async function makeInput(kind: InputKind, path: string, valid: Uint8Array, rng: Rng, fixedPath: boolean): Promise<MadeInput> {
  switch (kind) {
    case 'valid': await writeFile(path, valid, PRIVATE); return { path };
    case 'missing': return { path };
    case 'empty': await writeFile(path, '', PRIVATE); return { path };
    case 'directory': await mkdir(path); return { path };
    case 'fifo':
      execFileSync('mkfifo', ['-m', '0600', path]);
      return { path, fifoBytes: randomBytes(rng, rng.int(0, 8192)) };
    case 'dev-zero':
      if (!fixedPath) return { path: '/dev/zero' };
      await symlink('/dev/zero', path);
      return { path };
    case 'device-symlink': await symlink('/dev/urandom', path); return { path };
    case 'huge-sparse': {
      const f = await open(path, 'w');
      await f.truncate(HUGE_SPARSE_BYTES);
      await f.close();
      return { path };
    }
    case 'random': await writeFile(path, randomBytes(rng, rng.int(1, 65536)), PRIVATE); return { path };
    case 'truncated': await writeFile(path, valid.subarray(0, rng.int(0, Math.max(0, valid.length - 1))), PRIVATE); return { path };
  }
}

/** `n` bytes from `rng` (a failing case is made again from its seed). */
export function randomBytes(rng: Rng, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rng.u32() & 0xff;
  return b;
}
