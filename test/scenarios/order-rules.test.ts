// The SDM handler order rules read from a transcript (harness/scenarios/kit/order-rules.ts): each rule
// is broken once by a hand-made transcript, and a correct handler's transcript breaks none.
import { describe, expect, test } from 'vitest';
import type { TranscriptLine } from '../../harness/rundir/transcript-line.js';
import { handlerOrderProblems } from '../../harness/scenarios/kit/order-rules.js';

type L = Omit<TranscriptLine, 'seq' | 't_us' | 'cpu'>;
const pmi: L = { op: 'pmi', value: '0x80000000000000', result: 'ctl=0x2101 status=0x0 acked=false traceEnCleared=false' };
const stop: L = { op: 'wrmsr', msr: '0x570', value: '0x2100' };
const topa: L = { op: 'topa', addr: '0x100000', index: 3, value: '0x103014', entry: 'output 0x103000 4K STOP' };
const ack: L = { op: 'wrmsr', msr: '0x390', value: '0x80000000000000' };
const unmask: L = { op: 'pmi-enable' };
const restore: L = { op: 'wrmsr', msr: '0x570', value: '0x2101' };
const exit: L = { op: 'exit', value: '0' };

const lines = (...ls: L[]): TranscriptLine[] => ls.map((l, seq) => ({ seq, t_us: 0, cpu: l.op === 'topa' ? -1 : 0, ...l }));
const rules = (...ls: L[]): string[] => handlerOrderProblems(lines(...ls)).map((p) => p.rule);

describe('handler order rules', () => {
  test('a correct handler breaks none', () => {
    expect(rules(pmi, stop, topa, ack, unmask, restore, exit)).toEqual([]);
  });
  test('a ToPA entry written after CTL got TraceEn=1 back breaks "refill"', () => {
    expect(rules(pmi, stop, restore, topa, ack, unmask, exit)).toEqual(['refill']);
  });
  test('a PMI never acknowledged breaks "ack"', () => {
    expect(rules(pmi, stop, topa, unmask, restore, exit)).toEqual(['ack']);
  });
  test('a late acknowledgement, in a later handler, satisfies "ack"', () => {
    expect(rules(pmi, exit, stop, topa, ack, unmask)).toEqual([]);
  });
  test('an acknowledgement by the top half needs none from the driver', () => {
    expect(rules({ ...pmi, result: 'ctl=0x2101 status=0x0 acked=true traceEnCleared=false' }, stop, topa, unmask, restore, exit)).toEqual([]);
  });
  test('unmasking before the acknowledgement breaks "unmask"', () => {
    expect(rules(pmi, stop, topa, unmask, ack, restore, exit)).toEqual(['unmask']);
  });
  test('a STATUS write that only clears Stopped and PendTopaPMI keeps "status"', () => {
    expect(rules(pmi, stop, { op: 'rdmsr', msr: '0x571', result: '0x123400000a0' }, { op: 'wrmsr', msr: '0x571', value: '0x12340000000' }, ack, unmask, restore, exit)).toEqual([]);
  });
  test('a STATUS write that changes PacketByteCnt breaks "status", in a handler and at the final stop', () => {
    const read: L = { op: 'rdmsr', msr: '0x571', result: '0x123400000080' }, zero: L = { op: 'wrmsr', msr: '0x571', value: '0x0' };
    expect([rules(pmi, stop, read, zero, ack, unmask, restore, exit), rules(exit, stop, read, zero)]).toEqual([['status'], ['status']]);
  });
  test('a handler that writes back the CTL the PMI found, or the STATUS it read, breaks "needless"', () => {
    const off: L = { ...pmi, result: 'ctl=0x2100 status=0x0 acked=false traceEnCleared=true' };
    const read: L = { op: 'rdmsr', msr: '0x571', result: '0x80' }, same: L = { op: 'wrmsr', msr: '0x571', value: '0x80' };
    expect([rules(off, topa, ack, unmask, { ...restore, value: '0x2100' }, exit), rules(pmi, stop, read, same, ack, unmask, restore, exit)])
      .toEqual([['needless'], ['needless']]);
  });
  test('writes that change the MSR, a write after an XRSTORS loaded it, and the restore after a top half cleared TraceEn are not needless', () => {
    const read: L = { op: 'rdmsr', msr: '0x571', result: '0x80' }, cleared: L = { op: 'wrmsr', msr: '0x571', value: '0x0' };
    const topHalf: L = { ...pmi, result: 'ctl=0x2101 status=0x0 acked=false traceEnCleared=true' };
    expect([rules(pmi, stop, read, cleared, ack, unmask, restore, exit), rules(pmi, stop, { op: 'rdmsr', msr: '0x571', result: '0x0' }, { op: 'xrstors' }, { ...stop }, ack, unmask, restore, exit),
      rules(topHalf, topa, ack, unmask, restore, exit)]).toEqual([[], [], []]);
  });
  test('a component-8 MSR written just before the XRSTORS that loads it breaks "needless"; ADDR2 does not', () => {
    const xrstors: L = { op: 'xrstors' };
    const addr0: L = { op: 'wrmsr', msr: '0x580', value: '0x1000' }, addr2: L = { op: 'wrmsr', msr: '0x584', value: '0x1000' };
    expect([rules(addr2, addr0, xrstors), rules(addr2, xrstors), rules(addr0, { op: 'note', value: 'other context loaded' }, xrstors)])
      .toEqual([['needless'], [], []]);
  });
  test('a PMI without GLOBAL_STATUS[55] is not a ToPA PMI and is not checked', () => {
    expect(rules({ ...pmi, value: '0x1' }, exit)).toEqual([]);
  });
});
