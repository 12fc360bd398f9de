// The ptlab version, read from package.json (`ptlab --version`; shard.json records it: shards cut by two versions are
// two matrices, docs/sharding.md).
import { readFile } from 'node:fs/promises';

let cached: Promise<string> | undefined;

/** package.json's version (two levels above harness/runner and dist/harness/runner alike), or 'unknown'. */
export function ptlabVersion(): Promise<string> {
  return (cached ??= (async () => {
    for (const rel of ['../../../package.json', '../../package.json']) {
      try {
        const pkg = JSON.parse(await readFile(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'ptlab' && typeof pkg.version === 'string') return pkg.version;
      } catch { /* not at this level */ }
    }
    return 'unknown';
  })());
}
