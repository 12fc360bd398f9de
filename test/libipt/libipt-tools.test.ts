// The C-tool builder (harness/bench/libipt-tools.ts): builds into a given
// directory, reuses executables that are newer than their sources, and says
// clearly which prerequisite is missing.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildLibiptTools, defaultToolDirs, LIBIPT_TOOLS, LibiptToolsError } from '../../harness/bench/libipt-tools.js';
import { libiptTools } from './tools.js';

const { tools, title } = libiptTools();
const { srcDir } = defaultToolDirs();
const dirs: string[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ptlab-tools-'));
  dirs.push(d);
  return d;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('libipt tool builder', () => {
  test('a missing C compiler is reported as no-gcc', async () => {
    const err = await buildLibiptTools({ srcDir, outDir: tempDir(), cc: '/nonexistent/cc' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LibiptToolsError);
    expect(err).toMatchObject({ reason: 'no-gcc', code: 'unsupported' });
  });

  test('missing C sources are reported as no-sources', async () => {
    const err = await buildLibiptTools({ srcDir: tempDir(), outDir: tempDir() }).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'no-sources' });
  });

  test.skipIf(tools === undefined)(title('builds every tool and reuses them while they are up to date'), async () => {
    const outDir = tempDir();
    const built = await buildLibiptTools({ srcDir, outDir });
    expect(Object.keys(built).sort()).toEqual([...LIBIPT_TOOLS].sort());
    const mtimes = LIBIPT_TOOLS.map((t) => statSync(built[t]).mtimeMs);
    // A second build with a compiler that does not exist succeeds only if nothing is rebuilt.
    const again = await buildLibiptTools({ srcDir, outDir, cc: '/nonexistent/cc' });
    expect(LIBIPT_TOOLS.map((t) => statSync(again[t]).mtimeMs)).toEqual(mtimes);
  });
});
