// The model as unforgiving as a lab machine (harness/sim/realism.ts, `--realism lab`): the CPU runs
// on while a remote handler works unless the top half froze the task; other code runs on the
// traced CPU around the workload; a co-resident perf handler may unmask LVTPC at once.
import { describe, expect, test } from 'vitest';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { LVT_MASK } from '../../driver/hw/lvt.js';
import type { TargetEvent } from '../../driver/target.js';
import { PtError } from '../../driver/base/errors.js';
import { DEFAULT_CR3 } from '../../harness/sim/exec/engine.js';
import { OTHER_BASE } from '../../harness/sim/exec/other-code.js';
import { FROZEN, labRealism, type Realism } from '../../harness/sim/realism.js';
import { programTopa, runToExit, sim, USER, workload } from './rig.js';

const GLOBAL_STATUS_RESET = 0x390, TOPA_PMI = 1n << 55n, CTL = 0x570;

/** A trace with one INT region early in a 16-region ring, run to the exit; the PMI's handler only acks and unmasks. */
async function run(realism: Realism, ctl = USER) {
  const t = await sim({ realism, topa: { pmiSkid: 0 } });
  await programTopa(t, 16, { ints: [0], ctl });
  const seen: { ev: TargetEvent; branchesAtEvent: number; lvtMasked: boolean }[] = [];
  const w = workload(7, { branches: 40_000 });
  await runToExit(t, w, async (ev) => {
    seen.push({ ev, branchesAtEvent: t.retiredBranches(0), lvtMasked: (t.unit(0).lvtPmi & LVT_MASK) !== 0n });
    if (ev.kind === 'pmi') { await t.wrmsr(0, GLOBAL_STATUS_RESET, TOPA_PMI); await t.pmiEnable(0); }
  });
  return { t, seen, w };
}

describe('handler latency', () => {
  test('the default model stops while the driver thinks: the PMI arrives frozen', async () => {
    const { seen } = await run(FROZEN);
    const pmi = seen.find((s) => s.ev.kind === 'pmi')!;
    expect((pmi.ev as Extract<TargetEvent, { kind: 'pmi' }>).frozen).toBe(true);
  });

  test('without a freezing top half the workload runs on for the latency before the handler sees the PMI', async () => {
    const frozen = await run({ ...labRealism(2), otherCode: false });
    const unfrozen = await run({ ...labRealism(2), otherCode: false, topHalfFreezes: false });
    const at = (r: typeof frozen) => r.seen.find((s) => s.ev.kind === 'pmi')!;
    expect((at(unfrozen).ev as Extract<TargetEvent, { kind: 'pmi' }>).frozen).toBe(false);
    // A millisecond of model time is far more than the rest of this workload: it ran to its end.
    expect(at(unfrozen).branchesAtEvent).toBe(unfrozen.w.model.branchCount);
    expect(at(frozen).branchesAtEvent).toBeLessThan(frozen.w.model.branchCount / 2);
  });
});

describe('perf on the host', () => {
  test.for([
    { perf: true, masked: false },
    { perf: false, masked: true },
  ])('with perf unmasking LVTPC: $perf — the LVT entry is masked when the driver sees the PMI: $masked', async ({ perf, masked }) => {
    const { seen } = await run({ ...FROZEN, perfUnmasksLvt: perf });
    expect(seen.find((s) => s.ev.kind === 'pmi')!.lvtMasked).toBe(masked);
  });
});

describe('other code on the traced CPU', () => {
  test('unfiltered, the trace holds the other process\'s branches; an IP filter on the image keeps them out', async () => {
    const inOther = async (filtered: boolean): Promise<number> => {
      const t = await sim({ realism: { ...FROZEN, otherCode: true } });
      const w = workload(3, { branches: 4000 });
      if (filtered) {
        await t.wrmsr(0, 0x580, w.base);
        await t.wrmsr(0, 0x581, w.base + BigInt(w.image.length) - 1n);
      }
      await programTopa(t, 8, { ctl: { ...USER, ...(filtered ? { ADDR0_CFG: 1 } : {}) } });
      await runToExit(t, w);
      await t.wrmsr(0, CTL, (await t.rdmsr(0, CTL)) & ~1n);
      const log = t.truthLog(0)!;
      let n = 0;
      for (let i = 0; i < log.length; i++) if (log.isBranch(i) && log.ipOf(i)! >= OTHER_BASE && log.ipOf(i)! < OTHER_BASE + 0x1000) n++;
      return n;
    };
    expect(await inOther(false)).toBeGreaterThan(0);
    expect(await inOther(true)).toBe(0);
  });

  test('the default model runs the workload only', async () => {
    const t = await sim();
    await programTopa(t, 8);
    await runToExit(t, workload(3, { branches: 4000 }));
    const log = t.truthLog(0)!;
    const outside = Array.from({ length: log.length }, (_, i) => i).filter((i) => log.isBranch(i) && log.ipOf(i)! < 0x1000_0000);
    expect(outside).toEqual([]);
    expect(IA32_RTIT_CTL.decode(await t.rdmsr(0, CTL)).TraceEn).toBe(true);
  });
});

describe('the loader: the helper\'s own code in the workload\'s address space', () => {
  /** Branches of the truth outside the workload's image, with a CR3 filter on the workload's CR3 (Broadwell's only filter). */
  async function outsideImage(order: 'enable-then-start' | 'held'): Promise<{ outside: number; firstIp: number | undefined }> {
    const t = await sim({ realism: { ...FROZEN, otherCode: true } });
    const w = workload(3, { branches: 4000 });
    await t.wrmsr(0, 0x572, DEFAULT_CR3); // IA32_RTIT_CR3_MATCH
    const ctl = { ...USER, CR3Filter: true };
    if (order === 'enable-then-start') {
      await programTopa(t, 8, { ctl });
      await runToExit(t, w);
    } else {
      await using ex = t.start(w, 0, { held: true });
      expect(await ex.placed()).toEqual({ cr3: DEFAULT_CR3 });
      await programTopa(t, 8, { ctl });
      await ex.go();
      for await (const ev of ex.events) if (ev.kind === 'exit') break;
    }
    await t.wrmsr(0, CTL, (await t.rdmsr(0, CTL)) & ~1n);
    const log = t.truthLog(0)!;
    const lo = Number(w.base), hi = lo + w.image.length;
    let outside = 0, firstIp: number | undefined;
    for (let i = 0; i < log.length; i++) {
      if (!log.isBranch(i)) continue;
      firstIp ??= log.ipOf(i);
      if (log.ipOf(i)! < lo || log.ipOf(i)! >= hi) outside++;
    }
    return { outside, firstIp };
  }

  test('enabled before the start, a CR3 filter traces the loader: it runs under the workload\'s CR3', async () => {
    const r = await outsideImage('enable-then-start');
    expect(r.outside).toBeGreaterThan(0);
    expect(r.firstIp).toBeLessThan(0x1000_0000);
  });

  test('started held and enabled once it waits at its entry, the trace begins at the workload\'s first branch', async () => {
    const r = await outsideImage('held');
    expect(r.outside).toBe(0);
  });

  test('a held workload runs nothing until it is let go', async () => {
    const t = await sim({ realism: { ...FROZEN, otherCode: true } });
    await using ex = t.start(workload(3, { branches: 400 }), 0, { held: true });
    await ex.placed();
    await expect(ex.events[Symbol.asyncIterator]().next()).rejects.toThrow(/held at its entry/);
    expect(t.retiredBranches(0)).toBe(0);
  });

  test('placed() and go() of a workload not started held are refused', async () => {
    const t = await sim();
    await using ex = t.start(workload(3, { branches: 400 }), 0);
    await expect(ex.placed()).rejects.toBeInstanceOf(PtError);
    await expect(ex.go()).rejects.toMatchObject({ code: 'bad_state' });
  });

  test('a held workload is let go once: a second go() is refused', async () => {
    const t = await sim();
    await using ex = t.start(workload(3, { branches: 400 }), 0, { held: true });
    await ex.go();
    await expect(ex.go()).rejects.toMatchObject({ code: 'bad_state' });
  });
});
