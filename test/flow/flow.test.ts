// Flow reconstruction on hand-assembled code and hand-made packet streams.
// Expected records are written from docs/sdm/packets.md and docs/formats/flow-json.md by hand.
import { describe, expect, test } from 'vitest';
import type { Packet } from '../../driver/decode/packet.js';
import { flow, images, ipPkt, MODE64, psbOn, psbThenPge, tnt, trace } from './helpers.js';

// 0x1000: je 0x1004 | 0x1002: nop | 0x1003: nop | 0x1004: jne 0x1000 | 0x1006: syscall
const LOOP = images([0x1000n, [0x74, 0x02, 0x90, 0x90, 0x75, 0xfa, 0x0f, 0x05]]);

// 0x1000: call 0x100a | 0x1005: jmp 0x100b | 0x1007: int3 ×3 | 0x100a: ret | 0x100b: syscall
const CALLRET = images([0x1000n, [0xe8, 0x05, 0, 0, 0, 0xeb, 0x04, 0xcc, 0xcc, 0xcc, 0xc3, 0x0f, 0x05]]);

// 0x1000: call rax | 0x1002: syscall | 0x1004: ret
const INDCALL = images([0x1000n, [0xff, 0xd0, 0x0f, 0x05, 0xc3]]);

// 0x1000: je 0x1004 | 0x1002: int3 ×2 | 0x1004: jmp rdx | 0x1006: int3 ×10 | 0x1010: jne 0x1014 | 0x1012: syscall | 0x1014: int3 ×2
const DEFERRED = images([0x1000n, [
  0x74, 0x02, 0xcc, 0xcc, 0xff, 0xe2, ...Array<number>(10).fill(0xcc), 0x75, 0x02, 0x0f, 0x05, 0xcc, 0xcc,
]]);

const END = [ipPkt('tip.pgd')];

/** 'branch' for branch records (they have an `ip` before `kind`), else the record's kind. */
function recordKind(line: string): string {
  const r = JSON.parse(line) as { ip?: string; kind: string };
  return line.startsWith('{"ip"') ? 'branch' : r.kind;
}

describe('conditional and direct branches', () => {
  test('a TNT gives a taken and a not-taken jcc, each with its destination', () => {
    expect(flow(LOOP, trace(psbOn(0x1000n), tnt('TN'), END))).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('direct JMP and CALL are listed although they produce no packet', () => {
    expect(flow(CALLRET, trace(psbOn(0x1000n), tnt('T'), END))).toEqual([
      '{"ip":"0x1000","kind":"call","to":"0x100a"}',
      '{"ip":"0x100a","kind":"ret","to":"0x1005"}',
      '{"ip":"0x1005","kind":"jmp","to":"0x100b"}',
      '{"ip":"0x100b","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('TNT-64 bits apply oldest first', () => {
    // 47 results would overrun the code; use 3: T N T over je/jne/je.
    const bytes = trace(psbOn(0x1000n), { type: 'tnt.64', n: 3, bits: 0b101n }, END);
    // je T → 0x1004; jne N → 0x1006 … syscall needs the TIP.PGD, the third bit is left: the PGD still binds to the syscall.
    expect(flow(LOOP, bytes).slice(0, 2)).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
    ]);
  });
});

describe('returns (spec §7)', () => {
  test('a compressed RET returns to the Next IP of its CALL', () => {
    expect(flow(CALLRET, trace(psbOn(0x1000n), tnt('T'), END))[1]).toBe('{"ip":"0x100a","kind":"ret","to":"0x1005"}');
  });

  test('an uncompressed RET goes where its TIP says', () => {
    expect(flow(CALLRET, trace(psbOn(0x1000n), ipPkt('tip', 0x100bn), END))).toEqual([
      '{"ip":"0x1000","kind":"call","to":"0x100a"}',
      '{"ip":"0x100a","kind":"ret","to":"0x100b"}',
      '{"ip":"0x100b","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a compressed RET with an empty return stack is an error record', () => {
    const out = flow(CALLRET, trace(psbOn(0x100an), tnt('T')));
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0]!)).toMatchObject({ kind: 'error', error: 'retstack_empty', ip: '0x100a' });
  });

  test('a not-taken bit at a RET is an error record', () => {
    const out = flow(CALLRET, trace(psbOn(0x1000n), tnt('N')));
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ kind: 'error', error: 'bad_query', ip: '0x100a' });
  });

  // call f; f: call g; g: ret → TIP(edited); then f's ret compressed (spec §7 probe).
  // 0x1000: call 0x1010 | 0x1005: syscall | 0x1007: int3×9 | 0x1010: call 0x1020 | 0x1015: ret | 0x1016: int3×10 | 0x1020: ret
  const NESTED = images([0x1000n, [
    0xe8, 0x0b, 0, 0, 0, 0x0f, 0x05, ...Array<number>(9).fill(0xcc),
    0xe8, 0x0b, 0, 0, 0, 0xc3, ...Array<number>(10).fill(0xcc), 0xc3,
  ]]);
  const edited = trace(psbOn(0x1000n), ipPkt('tip', 0x1015n), tnt('T'), END);

  test('the SDM pops on every near RET: after an uncompressed RET the next compressed RET returns to the outer caller', () => {
    expect(flow(NESTED, edited).slice(2, 4)).toEqual([
      '{"ip":"0x1020","kind":"ret","to":"0x1015"}',
      '{"ip":"0x1015","kind":"ret","to":"0x1005"}',
    ]);
  });

  test('libiptRetStack pops only on compressed RETs, so the compressed RET takes the stale entry', () => {
    expect(flow(NESTED, edited, { libiptRetStack: true })[3]).toBe('{"ip":"0x1015","kind":"ret","to":"0x1015"}');
  });
});

describe('indirect branches and deferred TIPs (spec §6)', () => {
  test('an indirect CALL takes its target from a TIP and pushes its Next IP', () => {
    expect(flow(INDCALL, trace(psbOn(0x1000n), ipPkt('tip', 0x1004n), tnt('T'), END))).toEqual([
      '{"ip":"0x1000","kind":"call","to":"0x1004"}',
      '{"ip":"0x1004","kind":"ret","to":"0x1002"}',
      '{"ip":"0x1002","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a TIP deferred behind a TNT binds to the indirect branch reached with bits pending', () => {
    // SDM Table 36-19 style: TNT(T,N), TIP(0x1010) where the jmp comes between the two jcc.
    expect(flow(DEFERRED, trace(psbOn(0x1000n), tnt('TN'), ipPkt('tip', 0x1010n), END))).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"ip":"0x1004","kind":"jmp","to":"0x1010"}',
      '{"ip":"0x1010","kind":"jcc","taken":false,"to":"0x1012"}',
      '{"ip":"0x1012","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('the same path without deferral decodes the same', () => {
    expect(flow(DEFERRED, trace(psbOn(0x1000n), tnt('T'), ipPkt('tip', 0x1010n), tnt('N'), END))).toEqual(
      flow(DEFERRED, trace(psbOn(0x1000n), tnt('TN'), ipPkt('tip', 0x1010n), END)),
    );
  });

  test('libipt call_indirect_deferred-ret_compressed: TNT(T,T) then the TIP of the CALL before them', () => {
    // 0x1000: call rbx | 0x1002: je 0x1006 | 0x1004: int3 ×2 | 0x1006: syscall | 0x1008: ret
    const set = images([0x1000n, [0xff, 0xd3, 0x74, 0x02, 0xcc, 0xcc, 0x0f, 0x05, 0xc3]]);
    expect(flow(set, trace(psbOn(0x1000n), tnt('TT'), ipPkt('tip', 0x1008n), END))).toEqual([
      '{"ip":"0x1000","kind":"call","to":"0x1008"}',
      '{"ip":"0x1008","kind":"ret","to":"0x1002"}',
      '{"ip":"0x1002","kind":"jcc","taken":true,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a TIP where the code needs a TNT bit is an error record at that jcc', () => {
    const out = flow(LOOP, trace(psbOn(0x1000n), ipPkt('tip', 0x1004n)));
    expect(JSON.parse(out[0]!)).toMatchObject({ kind: 'error', error: 'bad_query', ip: '0x1000' });
  });
});

describe('enable and disable (spec §3.3, §10)', () => {
  // 0x1000: je 0x1012 | 0x1002: jmp 0x1012 | 0x1004: mov cr3, rax
  const PGD = images([0x1000n, [0x74, 0x10, 0xeb, 0x0e, 0x0f, 0x22, 0xd8]]);
  const on = psbThenPge(0x1000n);

  test('TIP.PGE gives an enable record at its IP', () => {
    expect(flow(PGD, trace(on))).toEqual(['{"kind":"enable","ip":"0x1000"}']);
  });

  test('a suppressed TIP.PGD after a jcc: the jcc was taken, its destination comes from the instruction', () => {
    expect(flow(PGD, trace(on, ipPkt('tip.pgd')))).toEqual([
      '{"kind":"enable","ip":"0x1000"}',
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1012"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a TIP.PGD with the target IP after a jcc (libipt tip_pgd-tnt_taken)', () => {
    expect(flow(PGD, trace(on, ipPkt('tip.pgd', 0x1012n))).slice(1)).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1012"}',
      '{"kind":"disable","ip":"0x1012"}',
    ]);
  });

  test('a TIP.PGD with the fall-through IP after a jcc means not taken (libipt tip_pgd-tnt_not_taken)', () => {
    expect(flow(PGD, trace(on, ipPkt('tip.pgd', 0x1002n))).slice(1)).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":false,"to":"0x1002"}',
      '{"kind":"disable","ip":"0x1002"}',
    ]);
  });

  test('a TIP.PGD with an IP binds to the direct JMP whose target it is', () => {
    expect(flow(PGD, trace(on, tnt('N'), ipPkt('tip.pgd', 0x1012n))).slice(1)).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":false,"to":"0x1002"}',
      '{"ip":"0x1002","kind":"jmp","to":"0x1012"}',
      '{"kind":"disable","ip":"0x1012"}',
    ]);
  });

  test('a TIP.PGD binds to MOV CR3 without a branch record', () => {
    // 0x1000: nop | 0x1001: mov cr3, rax | 0x1004: nop
    const set = images([0x1000n, [0x90, 0x0f, 0x22, 0xd8, 0x90]]);
    expect(flow(set, trace(psbThenPge(0x1000n), ipPkt('tip.pgd', 0x1004n)))).toEqual([
      '{"kind":"enable","ip":"0x1000"}',
      '{"kind":"disable","ip":"0x1004"}',
    ]);
  });

  test('FUP + TIP.PGD() (TraceEn cleared by WRMSR) is a disable without a branch', () => {
    expect(flow(LOOP, trace(psbOn(0x1000n), tnt('T'), ipPkt('fup', 0x1004n), ipPkt('tip.pgd')))).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"kind":"disable"}',
    ]);
  });

  test('trace re-enabled after a disable continues with an enable record', () => {
    const bytes = trace(psbOn(0x1000n), ipPkt('fup', 0x1000n), ipPkt('tip.pgd'), MODE64, ipPkt('tip.pge', 0x1004n), tnt('N'), END);
    expect(flow(LOOP, bytes)).toEqual([
      '{"kind":"disable"}',
      '{"kind":"enable","ip":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });
});

describe('asynchronous events (spec §9, §11)', () => {
  const TWO = images([0x1000n, [0x74, 0x02, 0x90, 0x90, 0x75, 0xfa, 0x0f, 0x05]], [0x2000n, [0x90, 0x0f, 0x05]]);

  test('FUP + TIP is an async record from the FUP to the TIP', () => {
    expect(flow(TWO, trace(psbOn(0x1000n), tnt('T'), ipPkt('fup', 0x1004n), ipPkt('tip', 0x2000n), END))).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"kind":"async","from":"0x1004","to":"0x2000"}',
      '{"ip":"0x2001","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('PIP and MODE.Exec between the FUP and the TIP do not break the pair', () => {
    const bytes = trace(psbOn(0x1000n), ipPkt('fup', 0x1000n), { type: 'pip', cr3: 0x1000n, nr: false }, MODE64, ipPkt('tip', 0x2000n));
    expect(flow(TWO, bytes)).toEqual(['{"kind":"async","from":"0x1000","to":"0x2000"}']);
  });

  test('FUP + TIP.PGD with an IP: async into a region not traced, then a disable at the target', () => {
    expect(flow(TWO, trace(psbOn(0x1000n), ipPkt('fup', 0x1000n), ipPkt('tip.pgd', 0x9000n)))).toEqual([
      '{"kind":"async","from":"0x1000","to":"0x9000"}',
      '{"kind":"disable","ip":"0x9000"}',
    ]);
  });

  test('an async transfer to a kernel address keeps the full 64-bit IP', () => {
    const bytes = trace(psbOn(0x1000n), ipPkt('fup', 0x1000n), { type: 'tip', ipc: 'full', ip: 0xffffffff81000000n });
    expect(flow(TWO, bytes)).toEqual(['{"kind":"async","from":"0x1000","to":"0xffffffff81000000"}']);
  });
});

describe('overflow (spec §12)', () => {
  test('OVF then FUP: an overflow record with the IP where tracing resumed', () => {
    expect(flow(LOOP, trace(psbOn(0x1000n), { type: 'ovf' }, { type: 'tsc', tsc: 5n }, ipPkt('fup', 0x1004n), tnt('N'), END))).toEqual([
      '{"kind":"overflow","ip":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('OVF then TIP.PGE: an overflow record without IP, then the enable', () => {
    expect(flow(LOOP, trace(psbOn(0x1000n), { type: 'ovf' }, MODE64, ipPkt('tip.pge', 0x1004n)))).toEqual([
      '{"kind":"overflow"}',
      '{"kind":"enable","ip":"0x1004"}',
    ]);
  });

  test('OVF drops pending TNT bits and the return stack', () => {
    // The compressed RET after the overflow has nothing to pop.
    const bytes = trace(psbOn(0x1000n), { type: 'ovf' }, ipPkt('fup', 0x100an), tnt('T'));
    const out = flow(CALLRET, bytes);
    expect(out[0]).toBe('{"kind":"overflow","ip":"0x100a"}');
    expect(JSON.parse(out[1]!)).toMatchObject({ kind: 'error', error: 'retstack_empty' });
  });
});

describe('synchronisation and errors', () => {
  test('a trace that starts enabled (PSB+ with FUP) has no enable record', () => {
    expect(flow(LOOP, trace(psbOn(0x1000n), tnt('T')))[0]).toBe('{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}');
  });

  test('a PSB+ FUP later in the trace walks the direct branches up to it', () => {
    expect(flow(CALLRET, trace(psbOn(0x1005n), psbOn(0x100bn)))).toEqual(['{"ip":"0x1005","kind":"jmp","to":"0x100b"}']);
  });

  test('after an error decoding resumes at the next PSB', () => {
    const bytes = trace(psbOn(0x1000n), ipPkt('tip', 0x1004n), tnt('T'), psbOn(0x1004n), tnt('N'));
    const out = flow(LOOP, bytes);
    expect(out.map(recordKind)).toEqual(['error', 'branch']);
    expect(out[1]).toBe('{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}');
  });

  test('the error record names the packet offset and the IP the walk stood at', () => {
    const head = trace(psbOn(0x1000n));
    const out = flow(LOOP, trace(psbOn(0x1000n), ipPkt('tip', 0x1004n)));
    expect(out[0]).toBe(`{"kind":"error","error":"bad_query","off":${head.length},"ip":"0x1000"}`);
  });

  test('walking to an IP outside every image is a nomap error record, not a throw', () => {
    const out = flow(LOOP, trace(psbOn(0x9000n), tnt('T')));
    expect(out).toEqual([`{"kind":"error","error":"nomap","off":${trace(psbOn(0x9000n)).length},"ip":"0x9000"}`]);
  });

  test('a direct branch out of the image is recorded, the walk then fails with nomap', () => {
    // 0x1000: jmp 0x2000 (rel32)
    const set = images([0x1000n, [0xe9, 0xfb, 0x0f, 0, 0]]);
    const out = flow(set, trace(psbOn(0x1000n), tnt('T')));
    expect(out[0]).toBe('{"ip":"0x1000","kind":"jmp","to":"0x2000"}');
    expect(JSON.parse(out[1]!)).toMatchObject({ kind: 'error', error: 'nomap', ip: '0x2000' });
  });

  test('tracing enabled in 32-bit code is a bad_mode error record at its TIP.PGE', () => {
    const bytes = trace({ type: 'psb' }, { type: 'psbend' }, { type: 'mode.exec', csl: false, csd: true, if: false }, ipPkt('tip.pge', 0x1000n), tnt('T'));
    expect(flow(LOOP, bytes).map((l) => JSON.parse(l) as { error?: string })).toEqual([{ kind: 'error', error: 'bad_mode', off: 20 }]);
  });

  test('a packet-layer error becomes an error record with the packet layer name', () => {
    const bytes = trace(psbOn(0x1000n));
    const bad = new Uint8Array([...bytes, 0x02, 0xff]);
    expect(flow(LOOP, bad)).toEqual([`{"kind":"error","error":"bad_opc","off":${bytes.length},"ip":"0x1000"}`]);
  });

  test('bytes without any PSB are a nosync error record', () => {
    expect(flow(LOOP, new Uint8Array([0x04, 0x06]))).toEqual(['{"kind":"error","error":"nosync","off":0}']);
  });

  test('an empty trace gives no records', () => {
    expect(flow(LOOP, new Uint8Array(0))).toEqual([]);
  });
});

describe('gaps from the loss ledger', () => {
  test('a wrap loss splits the trace: records, a gap record, then records after the next PSB', () => {
    const a = trace(psbOn(0x1000n), tnt('T'));
    const b = trace(psbOn(0x1004n), tnt('N'), END);
    const bytes = new Uint8Array([...a, ...b]);
    expect(flow(LOOP, bytes, { ledger: [{ at: a.length, bytes: 4096, reason: 'wrap' }] })).toEqual([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"kind":"gap","bytes":4096,"reason":"wrap"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a packet cut by the loss is explained by the gap, not reported as eos', () => {
    const a = trace(psbOn(0x1000n), tnt('T'));
    const cut = trace(ipPkt('tip', 0x1004n)).subarray(0, 3);
    const b = trace(psbOn(0x1004n), tnt('N'));
    const bytes = new Uint8Array([...a, ...cut, ...b]);
    const out = flow(LOOP, bytes, { ledger: [{ at: a.length + cut.length, bytes: null, reason: 'stop' }] });
    expect(out.map(recordKind)).toEqual(['branch', 'gap', 'branch']);
  });

  test('an OVF ledger entry becomes a gap record just before the overflow record', () => {
    const head = trace(psbOn(0x1000n));
    const bytes = trace(psbOn(0x1000n), { type: 'ovf' }, ipPkt('fup', 0x1004n));
    expect(flow(LOOP, bytes, { ledger: [{ at: head.length, bytes: null, reason: 'ovf' }] })).toEqual([
      '{"kind":"gap","bytes":null,"reason":"ovf"}',
      '{"kind":"overflow","ip":"0x1004"}',
    ]);
  });

  test('a loss at the end of the trace gives a final gap record', () => {
    const bytes = trace(psbOn(0x1000n), tnt('T'));
    expect(flow(LOOP, bytes, { ledger: [{ at: bytes.length, bytes: 100, reason: 'stop' }] }).at(-1)).toBe(
      '{"kind":"gap","bytes":100,"reason":"stop"}',
    );
  });
});

// Defects found against an external test suite: each trace and image as reported.
describe('defects found against an external suite', () => {
  const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/../g)!.map((b) => Number.parseInt(b, 16)));

  test('a FUP after a MODE.Exec (Event Trace IF change) binds to it, so the indirect CALL after STI is kept (spec §3.5)', () => {
    // 0x1000: sti | nop | call rax | hlt | nop | hlt
    const set = images([0x1000n, [0xfb, 0x90, 0xff, 0xd0, 0xf4, 0x90, 0xf4]]);
    const bytes = hex('028202820282028202820282028202829901022399017100100000000099053d01102d05103d061001');
    expect(flow(set, bytes)).toEqual([
      '{"kind":"enable","ip":"0x1000"}',
      '{"ip":"0x1002","kind":"call","to":"0x1005"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a MODE.Exec before a far branch binds to its TIP: a later FUP+TIP is still an interrupt', () => {
    // 0x1000: syscall | 0x1002: nop ×4 | 0x1006: hlt
    const set = images([0x1000n, [0x0f, 0x05, 0x90, 0x90, 0x90, 0x90, 0xf4]]);
    const bytes = trace(psbOn(0x1000n), MODE64, ipPkt('tip', 0x1002n), ipPkt('fup', 0x1004n), ipPkt('tip', 0x1006n), ipPkt('fup', 0x1006n), ipPkt('tip.pgd'));
    expect(flow(set, bytes).map(recordKind)).toEqual(['branch', 'async', 'disable']);
  });

  test('a 32-bit MODE.Exec in a PSB+ with tracing off does not stop the flow once 64-bit code is enabled', () => {
    const mode32 = { type: 'mode.exec', csl: false, csd: true, if: false } as const;
    const bytes = trace({ type: 'psb' }, mode32, { type: 'psbend' }, MODE64, ipPkt('tip.pge', 0x1000n), tnt('TN'), END);
    expect(flow(LOOP, bytes)).toEqual([
      '{"kind":"enable","ip":"0x1000"}',
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
    ]);
  });

  test('a 32-bit MODE.Exec in a PSB+ with tracing on (a FUP) is one bad_mode error record', () => {
    const mode32 = { type: 'mode.exec', csl: false, csd: true, if: false } as const;
    const bytes = trace({ type: 'psb' }, mode32, ipPkt('fup', 0x1000n), { type: 'psbend' }, tnt('TN'), END);
    expect(flow(LOOP, bytes).map((l) => (JSON.parse(l) as { error?: string }).error ?? 'record')).toEqual(['bad_mode']);
  });

  test('a PSB+ that never ends is an eos error record, not silence', () => {
    const bytes = trace({ type: 'psb' }, MODE64, ipPkt('fup', 0x1000n), ...Array<Packet>(64).fill({ type: 'pad' }));
    expect(flow(LOOP, bytes).map((l) => (JSON.parse(l) as { error?: string }).error)).toEqual(['eos']);
  });

  test('VMLAUNCH is a far return (libipt ptic_far_return), to the IP its TIP.PGD gives', () => {
    // 0x1000: vmlaunch | hlt | nop
    const set = images([0x1000n, [0x0f, 0x01, 0xc2, 0xf4, 0x90]]);
    const bytes = hex('0282028202820282028202820282028299017d00100000000002230243dcdc0c00000002c8dcdc0c000061041000000000');
    expect(flow(set, bytes)[0]).toBe('{"ip":"0x1000","kind":"far.ret","to":"0x1004"}');
  });

  test('VMRESUME is a far return and VMCALL a far call', () => {
    // 0x1000: vmresume | 0x1003: vmcall
    const set = images([0x1000n, [0x0f, 0x01, 0xc3, 0x0f, 0x01, 0xc1]]);
    expect(flow(set, trace(psbOn(0x1000n), ipPkt('tip', 0x1003n), ipPkt('tip', 0x1000n), END)).slice(0, 2)).toEqual([
      '{"ip":"0x1000","kind":"far.ret","to":"0x1003"}',
      '{"ip":"0x1003","kind":"far.call","to":"0x1000"}',
    ]);
  });
});
