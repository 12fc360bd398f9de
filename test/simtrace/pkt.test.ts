// The test-side packet lister against the spec's test vectors (docs/sdm/packets.md §14),
// so the generator tests rest on a checked oracle.
import { expect, test } from 'vitest';
import { tokens } from './pkt.js';

const h = (s: string): Uint8Array => Uint8Array.from(s.split(/\s+/).map((x) => parseInt(x, 16)));

test.for([
  ['04', 'tnt N'], ['06', 'tnt T'], ['80', 'tnt NNNNNN'], ['FE', 'tnt TTTTTT'], ['0A', 'tnt NT'],
  ['0D', 'tip 0'], ['2D 01 02', 'tip 1 0x201'], ['6D 01 02 03 04 05 06', 'tip 3 0x60504030201'],
  ['CD 01 02 03 04 05 06 07 08', 'tip 6 0x807060504030201'],
  ['02 43 02 04 06 08 0A 0C', 'pip 0xc0a080604020'], ['99 01', 'mode.exec 64'], ['99 02', 'mode.exec 32'],
  ['02 83', 'stop'], ['02 03 12 00', 'cbr 18'], ['19 01 02 03 04 05 06 07', 'tsc 0x7060504030201'],
  ['59 12', 'mtc 18'], ['02 73 80 C0 00 FF 01', 'tma 49280 511'], ['03', 'cyc 0'], ['FB', 'cyc 31'],
  ['07 02', 'cyc 32'], ['FF FE', 'cyc 4095'], ['07 01 02', 'cyc 4096'], ['02 F3', 'ovf'], ['02 23', 'psbend'],
  ['02 92 01 02 03 04', 'ptw 4 0x4030201 ip'],
] as const)('the lister reads %s as %s', ([bytes, tok]) => {
  expect(tokens(h(bytes))).toEqual([tok]);
});

test('the lister reads a PSB only in full', () => {
  expect(tokens(h('02 82 '.repeat(8).trim()))).toEqual(['psb']);
  expect(() => tokens(h('02 82 02 82 02 83 02 82 02 82 02 82 02 82 02 82'))).toThrow();
});
