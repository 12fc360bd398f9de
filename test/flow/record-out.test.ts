// writeFlowJson (driver/decode/flow/record-out.ts) writes flowJsonLine's line, byte for byte, for
// every kind of flow record with arbitrary fields.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { AsciiOut } from '../../driver/decode/ascii-out.js';
import { FlowRecord, flowJsonLine, type FlowErrorCode, type FlowRecordKind, type GapReason } from '../../driver/decode/flow/record.js';
import { writeFlowJson } from '../../driver/decode/flow/record-out.js';
import type { BranchKind } from '../../driver/decode/flow/insn-class.js';

const KINDS: FlowRecordKind[] = ['branch', 'async', 'enable', 'disable', 'overflow', 'gap', 'error'];
const BRANCHES: BranchKind[] = ['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.ret', 'far.jmp'];
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });

const record = fc.record({
  kind: fc.constantFrom(...KINDS), branch: fc.constantFrom(...BRANCHES), taken: fc.boolean(),
  ipLo: u32, ipHi: u32, hasIp: fc.boolean(), toLo: u32, toHi: u32, hasTo: fc.boolean(),
  bytes: fc.option(fc.nat()), reason: fc.constantFrom<GapReason>('stop', 'wrap', 'error', 'ovf'),
  error: fc.constantFrom<FlowErrorCode>('nomap', 'bad_query', 'runaway', 'eos'), offset: fc.nat(),
}).map((f) => Object.assign(new FlowRecord(), f));

test('writeFlowJson writes flowJsonLine for every record kind', () => {
  fc.assert(fc.property(fc.array(record, { maxLength: 30 }), (records) => {
    let got = '';
    const o = new AsciiOut((b) => { got += Buffer.from(b).toString('latin1'); }, 512);
    for (const r of records) writeFlowJson(o, r);
    o.flush();
    return got === records.map((r) => `${flowJsonLine(r)}\n`).join('');
  }), { numRuns: 500 });
});

test('the records it writes itself cover the kinds a trace is made of', () => {
  const r = Object.assign(new FlowRecord(), { kind: 'branch', branch: 'jcc', taken: true, ipLo: 0x1000, hasTo: true, toLo: 0x1004 });
  let got = '';
  const o = new AsciiOut((b) => { got += Buffer.from(b).toString('latin1'); });
  writeFlowJson(o, r);
  o.flush();
  expect(got).toBe('{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}\n');
});
