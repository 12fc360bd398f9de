// Where a worker thread's module is: a worker runs JavaScript, so from the compiled tree it is
// the file beside its caller, and from the TypeScript sources (vitest) the same file in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The first of `paths` (relative to the module at `from`, e.g. import.meta.url) that is a file, or undefined. */
export function firstBuilt(from: string, ...paths: readonly string[]): URL | undefined {
  for (const p of paths) {
    const url = new URL(p, from);
    if (existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}
