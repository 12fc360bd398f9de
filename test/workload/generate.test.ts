// generateWorkload: determinism, the path bound, the fast path generators against the plain
// reference interpretation, and coverage of the branch constructs a workload must contain.
import { describe, expect, test } from 'vitest';
import { DEFAULT_BASE, generateWorkload } from '../../harness/sim/workload/generate.js';
import { IrCursor } from '../../harness/sim/workload/interp.js';
import type { BranchEvent } from '../../harness/sim/workload/model.js';
import { KIND_NAMES } from '../../harness/sim/workload/ops.js';
import { referencePath, type RefBranch } from '../../harness/sim/workload/reference.js';

const SEEDS = [1, 2, 3, 7, 42, 1234, 99_999, 0xdead_beef];

function asRef(e: BranchEvent): RefBranch {
  const kind = KIND_NAMES[e.kind]!;
  return {
    ip: BigInt(e.ip), kind, ...(kind === 'jcc' ? { taken: e.taken } : {}), ...(e.to < 0 ? {} : { to: BigInt(e.to) }),
    indirect: e.indirect, zeroLength: e.zeroLength, retMatched: e.retMatched,
  };
}

describe('determinism', () => {
  test.for(SEEDS)('seed %i gives the same bytes, IR and path twice', (seed) => {
    const a = generateWorkload(seed, { branches: 20_000 });
    const b = generateWorkload(seed, { branches: 20_000 });
    expect(Buffer.from(b.image).equals(Buffer.from(a.image))).toBe(true);
    expect(b.entry).toBe(a.entry);
    expect([...b.model.code]).toEqual([...a.model.code]);
    expect(Buffer.from(b.model.path.buffer).equals(Buffer.from(a.model.path.buffer))).toBe(true);
  });

  test('different seeds give different images', () => {
    const images = new Set(SEEDS.map((s) => Buffer.from(generateWorkload(s, { branches: 5000 }).image).toString('hex')));
    expect(images.size).toBe(SEEDS.length);
  });
});

describe('placement', () => {
  test('the default base is 0x10000000, clear of static binaries at 0x400000', () => {
    const w = generateWorkload(1);
    expect(w.base).toBe(0x1000_0000n);
    expect(DEFAULT_BASE).toBe(0x1000_0000n);
  });

  test('another base moves the entry point with it', () => {
    const w = generateWorkload(5, { base: 0x2000_0000n });
    expect(w.entry - w.base).toBe(generateWorkload(5).entry - DEFAULT_BASE);
  });
});

describe('path length', () => {
  test.for([
    [1, 1000], [2, 1000], [3, 10_000], [4, 10_000], [5, 100_000], [6, 100_000], [7, 1_000_000],
  ] as const)('seed %i with branches=%i stays within the bound and uses a fair share of it', ([seed, n]) => {
    const w = generateWorkload(seed, { branches: n });
    expect(w.model.branchCount).toBeLessThanOrEqual(n);
    expect(w.model.branchCount).toBeGreaterThan(n / 20);
  });
});

describe('fast path generators equal the reference interpretation', () => {
  test.for(SEEDS.flatMap((s, i) => [[s, [500, 3000, 15_000][i % 3]!] as const]))('seed %i, %i branches', ([seed, n]) => {
    const w = generateWorkload(seed, { branches: n });
    const ref = [...referencePath(w.model)];
    const replay: RefBranch[] = [];
    w.model.forEachBranch((e) => replay.push(asRef(e)));
    const interp: RefBranch[] = [];
    const c = new IrCursor(w.model);
    while (c.next()) interp.push(asRef(c));
    expect(replay).toEqual(ref);
    expect(interp).toEqual(ref);
  });

  test('every branch event names its site: same ip and kind as the static branch list', () => {
    const w = generateWorkload(11, { branches: 5000 });
    const sites = new Map(w.model.sites().map((s) => [s.ip, s]));
    let checked = 0;
    w.model.forEachBranch((e) => {
      const s = sites.get(BigInt(e.ip));
      expect(s?.kind).toBe(KIND_NAMES[e.kind]);
      expect(BigInt(e.nextIp)).toBe(BigInt(e.ip) + BigInt(s!.length));
      checked++;
    });
    expect(checked).toBe(w.model.branchCount);
  });

  test('a cursor resumes where it stopped (the sim pulls branches in slices)', () => {
    const w = generateWorkload(3, { branches: 2000 });
    const c = w.model.cursor();
    const firstTen: number[] = [];
    for (let i = 0; i < 10 && c.next(); i++) firstTen.push(c.to);
    const rest: number[] = [];
    while (c.next()) rest.push(c.to);
    const all: number[] = [];
    w.model.forEachBranch((e) => all.push(e.to));
    expect([...firstTen, ...rest]).toEqual(all);
  });
});

describe('constructs on the path (over 20 seeds)', () => {
  const events: RefBranch[] = [];
  for (let seed = 100; seed < 120; seed++) {
    generateWorkload(seed, { branches: 3000 }).model.forEachBranch((e) => events.push(asRef(e)));
  }
  test.for([
    { what: 'a taken conditional branch', pred: (e: RefBranch) => e.kind === 'jcc' && e.taken === true },
    { what: 'a not-taken conditional branch', pred: (e: RefBranch) => e.kind === 'jcc' && e.taken === false },
    { what: 'a direct JMP', pred: (e: RefBranch) => e.kind === 'jmp' && !e.indirect },
    { what: 'an indirect JMP', pred: (e: RefBranch) => e.kind === 'jmp' && e.indirect },
    { what: 'a direct CALL', pred: (e: RefBranch) => e.kind === 'call' && !e.indirect && !e.zeroLength },
    { what: 'an indirect CALL', pred: (e: RefBranch) => e.kind === 'call' && e.indirect },
    { what: 'a zero-length CALL', pred: (e: RefBranch) => e.kind === 'call' && e.zeroLength },
    { what: 'a matched RET', pred: (e: RefBranch) => e.kind === 'ret' && e.retMatched },
    { what: 'an unmatched RET', pred: (e: RefBranch) => e.kind === 'ret' && !e.retMatched },
    { what: 'the exit SYSCALL (far.call)', pred: (e: RefBranch) => e.kind === 'far.call' && e.to === undefined },
  ])('the path contains $what', ({ pred }) => {
    expect(events.some(pred)).toBe(true);
  });

  test('a zero-length CALL goes to its own Next IP (docs/sdm/packets.md §7)', () => {
    const w = generateWorkload(101, { branches: 3000 });
    w.model.forEachBranch((e) => {
      if (e.zeroLength) expect(e.to).toBe(e.nextIp);
    });
  });
});

describe('annotations', () => {
  const w = generateWorkload(9, { branches: 5000, interrupts: 3, cr3Switches: 2, ptwrites: 4, modeChanges: 2 });
  const ann = w.model.annotations;

  test('the requested number of each kind is placed', () => {
    const count = (k: string): number => ann.filter((a) => a.kind === k).length;
    expect([count('interrupt'), count('cr3'), count('ptwrite'), count('mode')]).toEqual([3, 2, 4, 4]);
  });

  test('annotations are sorted by branch index and lie before the exit', () => {
    const ats = ann.map((a) => a.at);
    expect(ats).toEqual([...ats].sort((x, y) => x - y));
    expect(Math.max(...ats)).toBeLessThanOrEqual(w.model.branchCount - 2);
    expect(Math.min(...ats)).toBeGreaterThanOrEqual(0);
  });

  test('mode changes come in 64→32→64 pairs', () => {
    expect(ann.flatMap((a) => (a.kind === 'mode' ? [a.exec] : []))).toEqual([32, 64, 32, 64]);
  });

  test('annotations do not change the image or the path', () => {
    const plain = generateWorkload(9, { branches: 5000 });
    expect(Buffer.from(plain.image).equals(Buffer.from(w.image))).toBe(true);
    expect([...plain.model.path]).toEqual([...w.model.path]);
  });
});
