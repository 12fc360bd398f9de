// The documented differences between our decoder and libipt 2.0.5, each
// asserted on its own (the corpus tests allow exactly these and nothing else):
//
// 1. PWRE HW bit position. docs/sdm/packets.md §3.17: the SDM (Table 36-43, HW in
//    the bit-7 column of byte 2) and perf (`payload & 0x80`) put HW at byte-2
//    bit 7; libipt 2.0.5 reads (and writes) bit 3. We follow the SDM.
// 2. Packets newer than libipt 2.0.5 (BBP, BEP, CFE, EVD: docs/sdm/packets.md
//    §3.18-3.19; TRIG: §3.20): we decode them, libipt reports bad_opc and
//    resynchronises at the next PSB (docs/sdm/packets.md §2).
// 3. BIP (§3.18): only valid between BBP and BEP; there we decode a BIP.
//    libipt stops at the BBP; when made to skip it (ptjson --unknown, libipt's
//    unknown-packet callback), it decodes the BIP's first byte as a TNT-8.
//
// Checked and NOT a difference: where synchronisation lands in a run of PSB
// bytes longer than 16 (libipt takes the last 16 bytes of the run,
// pt_find_psb), and the resync search starting 15 bytes before an error
// (pt_pkt_sync_forward): driver/decode/sync.ts does the same; the sync
// cases of vectors.test.ts and the mutation corpus (mutations.test.ts) check it.
import { beforeAll, describe, expect, test } from 'vitest';
import { libiptTools, ptjsonOf } from '../libipt/tools.js';
import { ourDump } from './compare.js';
import { HEAD_LINES, NEW_PACKET_VECTORS, PSB, PSBEND, VECTOR_OFF, wrapVector } from './spec-vectors.js';

const { tools, title } = libiptTools();

// §3.20 layout: D9, byte 1 (bit 7 IP, bit 6 ICNTV, bit 5 MULT), byte 2 TRBV, [ICNT 2 bytes].
const TRIG_VECTORS = [
  { name: 'trig', type: 'trig', bytes: [0xd9, 0x00, 0x01] },
  { name: 'trig icnt', type: 'trig', bytes: [0xd9, 0x40, 0x01, 0x34, 0x12] },
] as const;
const NEW_VECTORS = [...NEW_PACKET_VECTORS, ...TRIG_VECTORS];

// PSB, PSBEND, BBP(SZ=1: 4-byte items), BIP(ID 0, 0x04030201), BEP, PSBEND.
const BLOCK = Uint8Array.from([...PSB, ...PSBEND, 0x02, 0x63, 0x80, 0x04, 0x01, 0x02, 0x03, 0x04, 0x02, 0x33, ...PSBEND]);

const PWRE = [
  { name: 'SDM HW bit 7 set', byte2: 0x80, ours: true, libipt: false },
  { name: 'libipt HW bit 3 set', byte2: 0x08, ours: false, libipt: true },
  { name: 'both set', byte2: 0x88, ours: true, libipt: true },
  { name: 'neither set', byte2: 0x00, ours: false, libipt: false },
] as const;

const pwreStream = (byte2: number): Uint8Array => wrapVector([0x02, 0x22, byte2, 0x34]);

describe.skipIf(tools === undefined)(title('documented differences with libipt 2.0.5'), () => {
  let libipt = new Map<string, string[]>();
  let libiptUnknown = new Map<string, string[]>();

  beforeAll(async () => {
    const streams = new Map<string, Uint8Array>([
      ...NEW_VECTORS.map((v) => [v.name, wrapVector(v.bytes)] as const),
      ...PWRE.map((p) => [`pwre ${p.name}`, pwreStream(p.byte2)] as const),
      ['block', BLOCK],
    ]);
    libipt = await ptjsonOf(tools!, streams);
    libiptUnknown = await ptjsonOf(tools!, new Map([['block', BLOCK]]), { unknown: true });
  });

  const pwreLine = (hw: boolean): string => `{"off":${VECTOR_OFF},"size":4,"type":"pwre","state":3,"sub_state":4,"hw":${hw}}`;

  test.for(PWRE)('PWRE with byte 2 = $byte2 ($name): we read HW=$ours from bit 7, libipt HW=$libipt from bit 3', ({ name, byte2, ours, libipt: theirs }) => {
    expect(ourDump(pwreStream(byte2))[2]).toBe(pwreLine(ours));
    expect(libipt.get(`pwre ${name}`)?.[2]).toBe(pwreLine(theirs));
  });

  test.for(NEW_VECTORS)('$name: we decode a $type packet, libipt reports bad_opc and finds no PSB after it', ({ name, type, bytes }) => {
    const ours = ourDump(wrapVector(bytes)).map((l) => JSON.parse(l) as { off: number; size?: number; type?: string });
    expect(ours.slice(2).map((j) => [j.off, j.size, j.type])).toEqual([
      [VECTOR_OFF, bytes.length, type],
      [VECTOR_OFF + bytes.length, 2, 'psbend'],
    ]);
    expect(libipt.get(name)).toEqual([...HEAD_LINES, `{"off":${VECTOR_OFF},"error":"bad_opc"}`]);
  });

  test('BBP, BIP, BEP: we decode the block; libipt stops at the BBP with bad_opc', () => {
    const types = ourDump(BLOCK).map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual(['psb', 'psbend', 'bbp', 'bip', 'bep', 'psbend']);
    expect(libipt.get('block')).toEqual([...HEAD_LINES, `{"off":${VECTOR_OFF},"error":"bad_opc"}`]);
  });

  test('a BIP byte is a TNT-8 to libipt once the BBP is skipped', () => {
    const bipOff = VECTOR_OFF + 3;
    expect(ourDump(BLOCK)[3]).toMatch(new RegExp(`^\\{"off":${bipOff},"size":5,"type":"bip"`));
    // 0x04 = 0b100: TNT-8 with one not-taken result (docs/sdm/packets.md §3.2).
    expect(libiptUnknown.get('block')?.[3]).toBe(`{"off":${bipOff},"size":1,"type":"tnt.8","n":1,"bits":"0"}`);
  });
});
