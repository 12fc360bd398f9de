// The recorder keeps truth records as numbers: what it writes back must be the flow-json text
// of each record, its selections must pick a workload's records by IP as numbers (several
// digit counts, kernel addresses) and carry ownership over IP-less records, and truth.jsonl's
// bytes must be the lines, newline-terminated.
import { describe, expect, it } from 'vitest';
import { TruthRecorder } from '../../harness/sim/trace/truth.js';
import { ipFromBigInt, ipHex } from '../../harness/sim/trace/events.js';

function recording(): TruthRecorder {
  const r = new TruthRecorder();
  r.branch(0xfff, 'jmp', undefined, 0x1000); // 0: below the image
  r.enable(0x1000); // 1: the first byte: in
  r.branch(0x1ffe, 'jcc', false, 0x2000); // 2: in
  r.async(0x1fff, 0x5000); // 3: no ip: the owner of the line before
  r.disable(); // 4: no ip
  r.branch(0x2000, 'call', undefined, undefined); // 5: the end: out
  r.disable(); // 6: follows an outside record: out
  r.branch(0x10000, 'jcc', true, 0x10002); // 7: more digits: out
  return r;
}

describe('TruthRecorder', () => {
  it('writes each record as flow-json text', () => {
    expect(recording().lines()).toEqual([
      '{"ip":"0xfff","kind":"jmp","to":"0x1000"}',
      '{"kind":"enable","ip":"0x1000"}',
      '{"ip":"0x1ffe","kind":"jcc","taken":false,"to":"0x2000"}',
      '{"kind":"async","from":"0x1fff","to":"0x5000"}',
      '{"kind":"disable"}',
      '{"ip":"0x2000","kind":"call"}',
      '{"kind":"disable"}',
      '{"ip":"0x10000","kind":"jcc","taken":true,"to":"0x10002"}',
    ]);
  });

  it('selects the records of one image, IP-less ones going with the record before', () => {
    const r = recording();
    expect([...r.select({ owner: { base: 0x1000, bytes: 0x1000 } })]).toEqual([1, 2, 3, 4]);
    expect(r.branches({ owner: { base: 0x1000, bytes: 0x1000 } })).toBe(1);
    expect([...r.select({ from: 5 })]).toEqual([5, 6, 7]);
    expect([...r.select({ from: 2, owner: { base: 0x1000, bytes: 0x1000 } })]).toEqual([2, 3, 4]);
    expect(r.branches()).toBe(4);
  });

  it('orders 64-bit kernel addresses exactly', () => {
    const r = new TruthRecorder();
    for (const a of [0xffffffff80ffffffn, 0xffffffff81000000n, 0xffffffff81000fffn, 0xffffffff81001000n]) r.branch(ipFromBigInt(a), 'ret', undefined, 0x10);
    expect([...r.select({ owner: { base: ipFromBigInt(0xffffffff81000000n), bytes: 0x1000 } })]).toEqual([1, 2]);
    expect(r.line(1)).toBe('{"ip":"0xffffffff81000000","kind":"ret","to":"0x10"}');
  });

  it('writes truth.jsonl bytes as the selected lines, newline-terminated, past its first buffer', () => {
    const r = new TruthRecorder();
    for (let i = 0; i < 5000; i++) r.branch(0x400000 + i, 'jcc', (i & 1) === 1, 0x400000 + i + 2);
    const text = Buffer.from(r.jsonl({ from: 10 })).toString('latin1');
    expect(text).toBe(`${r.lines(10).join('\n')}\n`);
    expect(text.length).toBeGreaterThan(64 * 1024);
    expect(r.jsonl({ from: 5000 }).length).toBe(0);
    expect(r.text()).toBe(`${r.lines().join('\n')}\n`);
  });

  it('writes every IP as ipHex does: user, kernel and the edges of each 32-bit half', () => {
    const edges = [0, 1, 0xf, 0x10, 0xffffffff, 0x100000000, 0x1_0000_0001, 2 ** 47 - 1, 2 ** 52, 2 ** 53 - 1,
      -1, -(2 ** 32), -(2 ** 32) - 1, -(2 ** 47), -(2 ** 56), ipFromBigInt(0xffffffff81000000n), ipFromBigInt(0xfffff00000001000n)];
    let x = 12345;
    const random = Array.from({ length: 200 }, () => { x = (x * 1103515245 + 12345) % 2 ** 31; return (x - 2 ** 30) * 2 ** 22 + x; });
    const r = new TruthRecorder();
    for (const ip of [...edges, ...random]) r.enable(ip);
    expect(r.lines()).toEqual([...edges, ...random].map((ip) => `{"kind":"enable","ip":"${ipHex(ip)}"}`));
  });
});
