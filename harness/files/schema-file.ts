// The JSON Schemas of ptlab's files (docs/schemas/), found from the sources (harness/<dir>/) and from
// the build (dist/harness/<dir>/) alike.
import { readFileSync } from 'node:fs';

/** docs/schemas/`name`, parsed. */
export function loadSchemaFile(name: string): Record<string, unknown> {
  for (const rel of [`../../docs/schemas/${name}`, `../../../docs/schemas/${name}`]) {
    try {
      return JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as Record<string, unknown>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw new Error(`docs/schemas/${name} is missing from this installation`);
}
