// The oracle checks itself: libipt's dump (test/libipt/ptjson.c) of every
// docs/sdm/packets.md §14 vector and §2 error case equals the line written by
// hand from the spec, so a disagreement in the cross-check tests points at
// our decoder, not at the tool. PWRE is the one documented exception.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { libiptTools, ptjson } from '../libipt/tools.js';
import { ERROR_VECTORS, HEAD_LINES, SPEC_VECTORS, VECTOR_OFF, psbendLine, wrapVector } from './spec-vectors.js';

const { tools, title } = libiptTools();

describe.skipIf(tools === undefined)(title('libipt oracle (ptjson)'), () => {
  let dir = '';
  let dumps = new Map<string, string[]>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ptlab-oracle-'));
    const files: string[] = [];
    [...SPEC_VECTORS, ...ERROR_VECTORS].forEach((v, i) => {
      const file = join(dir, `v${i}.pt`);
      writeFileSync(file, wrapVector(v.bytes));
      files.push(file);
    });
    dumps = await ptjson(tools!, files);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const dumpOf = (i: number): string[] => dumps.get(join(dir, `v${i}.pt`)) ?? [];

  // docs/sdm/packets.md §3.17: libipt 2.0.5 reads PWRE HW from byte-2 bit 3, the SDM from bit 7.
  const LIBIPT_READS = new Map([['pwre hw', `{"off":${VECTOR_OFF},"size":4,"type":"pwre","state":3,"sub_state":4,"hw":false}`]]);

  test.for(SPEC_VECTORS.map((v, i) => ({ ...v, i })))('libipt decodes the §14 vector "$name" as the spec says', ({ name, bytes, line, i }) => {
    expect(dumpOf(i)).toEqual([...HEAD_LINES, LIBIPT_READS.get(name) ?? line, psbendLine(bytes)]);
  });

  test.for(ERROR_VECTORS.map((v, i) => ({ ...v, i: SPEC_VECTORS.length + i })))(
    'libipt reports "$name" as $error at the bad packet',
    ({ error, i }) => {
      expect(dumpOf(i)).toEqual([...HEAD_LINES, `{"off":${VECTOR_OFF},"error":"${error}"}`]);
    },
  );
});
