// ToPA output: docs/sdm/output.md §4 (walk, END, STOP, INT, wrap, errors, single-entry CPUs, cache)
// and §7.4 (PMI preservation). Entries are built by hand from the §4.2 bit layout.
import { describe, expect, test } from 'vitest';
import { bytes, END, INT, R0, R1, R2, rig, SIZE_8K, STOP, stop, T, T2 } from './output-rig.js';

/** MASK_PTRS for entry index `i` and output offset `off` (docs/sdm/msrs.md §6). */
const mp = (i: bigint, off: bigint) => (off << 32n) | (i << 7n) | 0x7fn;
const ring = (): [bigint, bigint][] => [[T, R0], [T + 8n, R1], [T + 16n, T | END]];

describe('ToPA table walk (docs/sdm/output.md §4.3)', () => {
  test('a full region moves output to the next entry', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(4096 + 10));
    expect([r.mem.readNow(R0 + 4095n, 1)[0], r.mem.readNow(R1, 10)]).toEqual([4096 % 251, bytes(4106).subarray(4096)]);
  });
  test('TraceEn 1→0 writes back table base, entry index and output offset', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(4096 + 10));
    expect(stop(r).slice(0, 2)).toEqual([T, mp(1n, 10n)]);
  });
  test('an END entry is followed lazily: a full last region leaves the pointer at the END entry', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(8192));
    expect(stop(r).slice(0, 2)).toEqual([T, mp(2n, 0n)]);
  });
  test('END links to another table, which becomes OUTPUT_BASE', async () => {
    const r = rig('skylake', { entries: [[T, R0], [T + 8n, T2 | END], [T2, R1], [T2 + 8n, T | END]] });
    await r.out.writeBytes(bytes(4097));
    expect([r.mem.readNow(R1, 1)[0], ...stop(r).slice(0, 2)]).toEqual([4097 % 251, T2, mp(0n, 1n)]);
  });
  test('END back to the table base makes a circular buffer', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(8192 + 3));
    expect(r.mem.readNow(R0, 3)).toEqual(bytes(8195).subarray(8192));
  });
  test('re-enabling resumes at the written-back pointers', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(100));
    stop(r);
    r.f.write(0x570, 0x2105n);
    await r.out.writeBytes(new Uint8Array([0xee]));
    expect(r.mem.readNow(R0 + 100n, 1)[0]).toBe(0xee);
  });
  test('after the region at table offset 0x0FFF_FFF8 fills, output wraps to entry 0 of the same table', async () => {
    const r = rig('skylake', { entries: [[T + 0x0fff_fff8n, R0], [T, R1]], maskPtrs: mp(0x1ff_ffffn, 0n) });
    await r.out.writeBytes(bytes(4097));
    expect([r.mem.readNow(R1, 1)[0], ...stop(r).slice(0, 2)]).toEqual([4097 % 251, T, mp(0n, 1n)]);
  });
  test('written counts every byte written to memory', async () => {
    const r = rig('skylake', { entries: ring() });
    await r.out.writeBytes(bytes(3000));
    await r.out.writeBytes(bytes(3000));
    expect(r.out.written).toBe(6000);
  });
});

describe('ToPA STOP (docs/sdm/output.md §4.4)', () => {
  test('a full STOP region sets Stopped and clears TriggerEn', async () => {
    const r = rig('skylake', { entries: [[T, R0 | STOP], [T + 8n, R1], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(5000));
    expect(r.f.peek(0x571) & 0x34n).toBe(0x20n);
  });
  test('no byte is written after the STOP region fills', async () => {
    const r = rig('skylake', { entries: [[T, R0 | STOP], [T + 8n, R1], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(5000));
    expect([r.out.written, r.mem.readNow(R1, 1)[0]]).toEqual([4096, 0]);
  });
  test('the pointers name the STOP entry with OutputOffset = region size (Open Question 11)', async () => {
    const r = rig('skylake', { entries: [[T, R0], [T + 8n, R1 | STOP], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(9000));
    expect(stop(r).slice(0, 2)).toEqual([T, mp(1n, 4096n)]);
  });
  test('re-enabling with Stopped cleared but the same pointers is an operational error (illegal offset)', async () => {
    const r = rig('skylake', { entries: [[T, R0 | STOP], [T + 8n, T | END]] });
    await r.out.writeBytes(bytes(4096));
    stop(r);
    r.f.write(0x571, 0n);
    r.f.write(0x570, 0x2105n);
    await r.out.writeBytes(bytes(1));
    expect([r.f.peek(0x571) & 0x10n, r.out.topa.error]).toEqual([0x10n, '3-output-offset']);
  });
});

describe('ToPA PMI (docs/sdm/output.md §4.5)', () => {
  test('a full INT region sets GLOBAL_STATUS[55] and delivers a PMI', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(4096));
    expect([r.f.peek(0x38e), r.f.deliveredPmis]).toEqual([1n << 55n, 1]);
  });
  test('no PMI before the INT region is full', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(4095));
    expect([r.f.peek(0x38e), r.f.deliveredPmis]).toEqual([0n, 0]);
  });
  test('with a skid of 100 bytes the PMI comes after the 100th byte past the fill', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], topa: { pmiSkid: 100 } });
    await r.out.writeBytes(bytes(4096 + 99));
    const before = r.f.deliveredPmis;
    await r.out.writeBytes(bytes(1));
    expect([before, r.f.deliveredPmis]).toEqual([0, 1]);
  });
  test('a PMI still in its skid is raised when TraceEn is cleared', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], topa: { pmiSkid: 100 } });
    await r.out.writeBytes(bytes(4096 + 10));
    stop(r);
    expect(r.f.deliveredPmis).toBe(1);
  });
  test('a PMI still in its skid is raised at a TraceStop: no more bytes come (model choice, §4.5)', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1 | STOP], [T + 16n, T | END]], topa: { pmiSkid: 8192 } });
    await r.out.writeBytes(bytes(4096 + 10));
    const before = r.f.deliveredPmis;
    r.out.traceStopped();
    // The pointer stays where the last byte went: entry 1 (a STOP entry, not full), offset 10.
    expect([before, r.f.deliveredPmis, r.f.peek(0x38e)]).toEqual([0, 1, 1n << 55n]);
    r.out.traceStopped();
    expect(r.f.deliveredPmis).toBe(1);
    expect(stop(r).slice(0, 2)).toEqual([T, mp(1n, 10n)]);
  });
  test('a TraceStop without a PMI in its skid raises none', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], topa: { pmiSkid: 8192 } });
    await r.out.writeBytes(bytes(4000));
    r.out.traceStopped();
    expect([r.f.deliveredPmis, r.f.peek(0x38e)]).toEqual([0, 0n]);
  });
  test('INT and STOP on one entry: Stopped is set and the PMI still comes (STOP before INT)', async () => {
    const r = rig('skylake', { entries: [[T, R0 | INT | STOP], [T + 8n, R1], [T + 16n, T | END]], topa: { pmiSkid: 100 } });
    await r.out.writeBytes(bytes(5000));
    expect([r.f.peek(0x571) & 0x20n, r.f.deliveredPmis]).toEqual([0x20n, 1]);
  });
});

describe('ToPA operational errors (docs/sdm/output.md §4.7)', () => {
  test.for([
    { label: '1: reserved bit 1 in an entry', entries: [[T, R0 | 0x2n], [T + 8n, T | END]] as [bigint, bigint][], base: T, rule: '1-reserved' },
    { label: '1: reserved bit 11 in an entry', entries: [[T, R0 | 0x800n], [T + 8n, T | END]] as [bigint, bigint][], base: T, rule: '1-reserved' },
    { label: '1: base bit 39 with MAXPHYADDR 39', entries: [[T, R0 | (1n << 39n)], [T + 8n, T | END]] as [bigint, bigint][], base: T, rule: '1-reserved' },
    { label: '2a: table base not 4 KiB aligned (OUTPUT_BASE bits 11:7)', entries: [[T + 0x80n, R0]] as [bigint, bigint][], base: T + 0x80n, rule: '2a-table-alignment' },
    { label: '2b: an 8 KiB region at a 4 KiB-only aligned base', entries: [[T, R1 | SIZE_8K], [T + 8n, T | END]] as [bigint, bigint][], base: T, rule: '2b-region-alignment' },
    { label: '4b: END in entry 0', entries: [[T, T2 | END]] as [bigint, bigint][], base: T, rule: '4b-end-in-entry-0' },
  ])('$label stops tracing with STATUS.Error before any byte', async ({ entries, base, rule }) => {
    const r = rig('skylake', { entries, base });
    await r.out.writeBytes(bytes(10));
    expect([r.f.peek(0x571) & 0x14n, r.out.written, r.out.topa.error]).toEqual([0x10n, 0, rule]);
  });
  test('4a: END with INT is reported when reached, after the earlier region filled', async () => {
    const r = rig('skylake', { entries: [[T, R0], [T + 8n, T | END | INT]] });
    await r.out.writeBytes(bytes(5000));
    expect([r.out.written, r.out.topa.error, stop(r)[1]]).toEqual([4096, '4a-end-with-int-stop', mp(1n, 0n)]);
  });
  test('3: OutputOffset at the region size when Stopped=0', async () => {
    const r = rig('skylake', { entries: ring(), maskPtrs: mp(0n, 4096n) });
    await r.out.writeBytes(bytes(1));
    expect([r.f.peek(0x571) & 0x10n, r.out.topa.error]).toEqual([0x10n, '3-output-offset']);
  });
  test('an 8 KiB region on an 8 KiB boundary is legal', async () => {
    const r = rig('skylake', { entries: [[T, R2 | SIZE_8K], [T + 8n, T | END]] });
    await r.out.writeBytes(bytes(8192));
    expect([r.out.written, r.f.peek(0x571) & 0x10n]).toEqual([8192, 0n]);
  });
});

describe('single-entry ToPA, MENTRY=0 (docs/sdm/output.md §4.6; broadwell)', () => {
  const layout = (e0: bigint, e1: bigint): [bigint, bigint][] => [[T, e0], [T + 8n, e1]];
  test('[region, END→table] is a circular buffer', async () => {
    const r = rig('broadwell', { entries: layout(R0, T | END) });
    await r.out.writeBytes(bytes(4096 + 2));
    expect([r.mem.readNow(R0, 2), r.f.peek(0x571) & 0x10n]).toEqual([bytes(4098).subarray(4096), 0n]);
  });
  test('the PMI comes 512 bytes before the INT region is full', async () => {
    const r = rig('broadwell', { entries: layout(R0 | INT, T | END) });
    await r.out.writeBytes(bytes(3583));
    const before = r.f.deliveredPmis;
    await r.out.writeBytes(bytes(1));
    expect([before, r.f.deliveredPmis]).toEqual([0, 1]);
  });
  test('no second PMI when the region then fills', async () => {
    const r = rig('broadwell', { entries: layout(R0 | INT, T | END) });
    await r.out.writeBytes(bytes(4096));
    expect(r.f.deliveredPmis + r.f.maskedPmis).toBe(1);
  });
  test('the early margin is configurable (1024 bytes)', async () => {
    const r = rig('broadwell', { entries: layout(R0 | INT, T | END), topa: { earlyPmiMargin: 1024 } });
    await r.out.writeBytes(bytes(3072));
    expect(r.f.deliveredPmis).toBe(1);
  });
  test('INT|STOP: the early PMI, then Stopped when the region fills (Linux layout)', async () => {
    const r = rig('broadwell', { entries: layout(R0 | INT | STOP, T | END) });
    await r.out.writeBytes(bytes(5000));
    expect([r.f.deliveredPmis, r.f.peek(0x571) & 0x20n, r.out.written]).toEqual([1, 0x20n, 4096]);
  });
  test.for([
    { label: 'entry 1 with END=0', e1: R1, rule: '4c-single-entry-layout' },
    { label: 'entry 1 END to another table', e1: T2 | END, rule: '4c-single-entry-layout' },
  ])('4c: $label is an operational error when reached', async ({ e1, rule }) => {
    const r = rig('broadwell', { entries: layout(R0, e1) });
    await r.out.writeBytes(bytes(4097));
    expect([r.out.written, r.out.topa.error, r.f.peek(0x571) & 0x10n]).toEqual([4096, rule, 0x10n]);
  });
  test('4c: a table pointer beyond entry 1 is an operational error (model choice)', async () => {
    const r = rig('broadwell', { entries: [[T, R0], [T + 8n, T | END], [T + 16n, R1]], maskPtrs: mp(2n, 0n) });
    await r.out.writeBytes(bytes(1));
    expect(r.out.topa.error).toBe('4c-single-entry-layout');
  });
  test('the same multi-entry layout is legal on a MENTRY=1 CPU (skylake)', async () => {
    const r = rig('skylake', { entries: [[T, R0], [T + 8n, R1], [T + 16n, T | END]] });
    await r.out.writeBytes(bytes(4097));
    expect(r.out.topa.error).toBeUndefined();
  });
});

describe('ToPA entry cache knob (docs/sdm/output.md §4.8)', () => {
  test('topaCache=all-reachable-at-enable ignores a table change made while tracing', async () => {
    const r = rig('skylake', { entries: ring(), topa: { topaCache: 'all-reachable-at-enable' } });
    await r.out.writeBytes(bytes(1));
    r.mem.writeNow(T + 8n, new Uint8Array(new BigUint64Array([R2]).buffer));
    await r.out.writeBytes(bytes(4096));
    expect([r.mem.readNow(R1, 1)[0], r.mem.readNow(R2, 1)[0]]).toEqual([80 /* byte 4095 of the second call */, 0]);
  });
  test('topaCache=none sees a table change made while tracing', async () => {
    const r = rig('skylake', { entries: ring(), topa: { topaCache: 'none' } });
    await r.out.writeBytes(bytes(1));
    r.mem.writeNow(T + 8n, new Uint8Array(new BigUint64Array([R2]).buffer));
    await r.out.writeBytes(bytes(4096));
    expect([r.mem.readNow(R1, 1)[0], r.mem.readNow(R2, 1)[0]]).toEqual([0, 80 /* byte 4095 of the second call */]);
  });
  test('TraceEn 1→0 drops the cache: a change made while stopped takes effect', async () => {
    const r = rig('skylake', { entries: ring(), topa: { topaCache: 'all-reachable-at-enable' } });
    await r.out.writeBytes(bytes(1));
    stop(r);
    r.mem.writeNow(T + 8n, new Uint8Array(new BigUint64Array([R2]).buffer));
    r.f.write(0x570, 0x2105n);
    await r.out.writeBytes(bytes(4096));
    expect(r.mem.readNow(R2, 1)[0]).toBe(80 /* byte 4095 of the second call */);
  });
});

describe('PMI preservation (docs/sdm/output.md §7.4; full profile)', () => {
  const CTL_INJECT = 0x2105n | (1n << 56n);
  test('an INT fill with InjectPsbPmiOnEnable=1 sets PendTopaPMI', async () => {
    const r = rig('full', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], ctl: CTL_INJECT });
    await r.out.writeBytes(bytes(4096));
    expect(r.f.peek(0x571) & 0x80n).toBe(0x80n);
  });
  test('TraceEn 0→1 with PendTopaPMI still set raises the PMI again', async () => {
    const r = rig('full', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], ctl: CTL_INJECT });
    await r.out.writeBytes(bytes(4096));
    stop(r);
    r.f.unmaskPmi();
    r.f.write(0x390, 1n << 55n);
    r.f.write(0x570, CTL_INJECT);
    expect([r.f.deliveredPmis, r.f.peek(0x38e)]).toEqual([2, 1n << 55n]);
  });
  test('once the handler clears PendTopaPMI, TraceEn 0→1 raises nothing', async () => {
    const r = rig('full', { entries: [[T, R0 | INT], [T + 8n, R1], [T + 16n, T | END]], ctl: CTL_INJECT });
    await r.out.writeBytes(bytes(4096));
    stop(r);
    r.f.write(0x571, r.f.peek(0x571) & ~0x80n);
    r.f.unmaskPmi();
    r.f.write(0x570, CTL_INJECT);
    expect(r.f.deliveredPmis).toBe(1);
  });
});
