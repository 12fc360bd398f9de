// The packet-stream errata of driver/hw/errata.ts against libipt's own table: for every Intel
// family 6 model, the rows with a `decoding` effect that errataOf assigns must be exactly the
// struct pt_errata bits pt_cpu_errata sets (test/libipt/pterrata.c prints them).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { ERRATA, erratum, errataOf, type Erratum } from '../../driver/hw/errata.js';
import { buildCTool, repoRoot } from '../../harness/native/c-tool.js';
import { libiptTools } from './tools.js';

const run = promisify(execFile);
const { tools, title } = libiptTools();
const ROOT = repoRoot();
const HEADER = '/usr/include/intel-pt.h';

/** libipt's errata for family 6 models 0..255 at `stepping`: model → pt_errata field names. */
async function libiptErrata(exe: string, stepping: number): Promise<Map<number, string[]>> {
  const { stdout } = await run(exe, [String(stepping)]);
  const out = new Map<number, string[]>();
  for (const line of stdout.trim().split('\n')) {
    const [model, ...names] = line.split(' ');
    // "0x00 error unknown cpu": libipt does not know the model, so it applies no erratum.
    out.set(Number(model), names[0] === 'error' ? [] : names);
  }
  return out;
}

/** Ours, as libipt field names, in libipt's header order. */
function ours(model: number, stepping: number, order: readonly string[]): string[] {
  return [...errataOf({ family: 6, model, stepping })].map((id) => erratum(id) as Erratum)
    .filter((e) => e.effect.kind === 'decoding').map((e) => e.source.libipt!)
    .sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/** The struct pt_errata field order of pterrata.c's output (the header's). */
const ORDER = ['bdm70', 'bdm64', 'skd007', 'skd022', 'skd010', 'skl014', 'apl12', 'apl11', 'skl168', 'skz84'];

describe.skipIf(tools === undefined)(title('errata: driver/hw/errata.ts equals libipt pt_cpu_errata'), () => {
  let exe: string;
  beforeAll(async () => {
    exe = await buildCTool({
      sources: [join(ROOT, 'test', 'libipt', 'pterrata.c')], exe: join(ROOT, 'build', 'libipt', 'pterrata'),
      cflags: ['-O2', '-Wall', '-Wextra', '-Werror', '-std=gnu11'], libs: ['-lipt'],
    });
  });

  test.for([0, 1, 9])('every family 6 model, stepping %i', async (stepping) => {
    const theirs = await libiptErrata(exe, stepping);
    expect(theirs.size).toBe(256);
    const differ: string[] = [];
    for (let model = 0; model < 256; model++) {
      const a = ours(model, stepping, ORDER).join(' '), b = theirs.get(model)!.join(' ');
      if (a !== b) differ.push(`06_${model.toString(16).padStart(2, '0')}: ptlab [${a}], libipt [${b}]`);
    }
    expect(differ).toEqual([]);
  });

  test.skipIf(!existsSync(HEADER))('the table knows every field of libipt\'s struct pt_errata', () => {
    const struct = /struct pt_errata \{([\s\S]*?)\n\};/.exec(readFileSync(HEADER, 'utf8'))?.[1] ?? '';
    const fields = [...struct.matchAll(/uint32_t (\w+):1;/g)].map((m) => m[1]);
    expect(fields).toEqual(ORDER);
    expect(ERRATA.flatMap((e: Erratum) => (e.source.libipt ? [e.source.libipt] : [])).sort()).toEqual([...ORDER].sort());
  });
});
