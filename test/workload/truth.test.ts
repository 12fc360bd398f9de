// flow-json record formatting (docs/formats/flow-json.md): expected lines are the spec's own examples.
import { describe, expect, test } from 'vitest';
import { generateWorkload } from '../../harness/sim/workload/generate.js';
import {
  asyncRecord, branchRecord, disableRecord, enableRecord, gapRecord, overflowRecord, truthLines,
} from '../../harness/sim/workload/truth.js';

describe('records', () => {
  test.for([
    { line: branchRecord(0x400010, 'jcc', true, 0x400004), want: '{"ip":"0x400010","kind":"jcc","taken":true,"to":"0x400004"}' },
    { line: branchRecord(0x400010n, 'jcc', false, 0x400016n), want: '{"ip":"0x400010","kind":"jcc","taken":false,"to":"0x400016"}' },
    { line: branchRecord(0x400020, 'call', undefined, 0x400100), want: '{"ip":"0x400020","kind":"call","to":"0x400100"}' },
    { line: branchRecord(0x400130, 'ret', undefined, 0x400025), want: '{"ip":"0x400130","kind":"ret","to":"0x400025"}' },
    { line: branchRecord(0x400200, 'far.call', undefined, undefined), want: '{"ip":"0x400200","kind":"far.call"}' },
    { line: asyncRecord(0x400040, 0xffffffff81000000n), want: '{"kind":"async","from":"0x400040","to":"0xffffffff81000000"}' },
    { line: enableRecord(0x400000), want: '{"kind":"enable","ip":"0x400000"}' },
    { line: disableRecord(), want: '{"kind":"disable"}' },
    { line: disableRecord(0x400abc), want: '{"kind":"disable","ip":"0x400abc"}' },
    { line: overflowRecord(0x400010), want: '{"kind":"overflow","ip":"0x400010"}' },
    { line: gapRecord(4096, 'wrap'), want: '{"kind":"gap","bytes":4096,"reason":"wrap"}' },
  ])('$want', ({ line, want }) => {
    expect(line).toBe(want);
  });
});

describe('the filters-off reference path', () => {
  const w = generateWorkload(21, { branches: 2000 });
  const lines = truthLines(w.model);

  test('has one record per branch', () => {
    expect(lines.length).toBe(w.model.branchCount);
  });

  test('ends with the exit SYSCALL as far.call without a destination', () => {
    expect(lines.at(-1)).toMatch(/^\{"ip":"0x[0-9a-f]+","kind":"far\.call"\}$/);
  });

  test('every other record is a near branch with a destination inside the image', () => {
    const end = w.base + BigInt(w.image.length);
    for (const l of lines.slice(0, -1)) {
      const r = JSON.parse(l) as { to: string; kind: string };
      expect(['jcc', 'jmp', 'call', 'ret']).toContain(r.kind);
      expect(BigInt(r.to) >= w.base && BigInt(r.to) < end).toBe(true);
    }
  });
});
