// Corpus (a): every docs/sdm/packets.md §14 vector and every §2 malformed packet,
// wrapped as PSB + PSBEND + vector + PSBEND: our dump equals libipt's line for
// line, except the documented PWRE HW difference (compare.ts). The vectors of
// packets libipt does not know are in differences.test.ts.
import { beforeAll, describe, expect, test } from 'vitest';
import { libiptTools, ptjsonOf } from '../libipt/tools.js';
import { compareDumps, ourDump } from './compare.js';
import { ERROR_VECTORS, PSB, PSBEND, SPEC_VECTORS, wrapVector } from './spec-vectors.js';

const { tools, title } = libiptTools();

// Synchronisation edge cases (docs/formats/packet-json.md "Errors and resynchronisation"), with the
// lines written by hand from libipt 2.0.5's rules, which driver/decode/sync.ts follows: the
// initial/resync search takes the LAST 16 bytes of a run of `02 82` pairs (pt_find_psb), and
// after an error at X it starts at X - 15 (pt_pkt_sync_forward), so the PSB it resumes at may
// start BEFORE the error offset: packet offsets can go backwards after an error line.
const TSC_OF_PSB_BYTES = [0x19, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02]; // 8-byte TSC whose payload is PSB bytes
const SYNC_CASES = [
  {
    name: 'two PSBs in a row at the start: the dump starts at the second',
    bytes: [...PSB, ...PSB, ...PSBEND],
    lines: ['{"off":16,"size":16,"type":"psb"}', '{"off":32,"size":2,"type":"psbend"}'],
  },
  {
    name: 'an 18-byte run of PSB bytes: the PSB is its last 16 bytes',
    bytes: [0x02, 0x82, ...PSB, ...PSBEND],
    lines: ['{"off":2,"size":16,"type":"psb"}', '{"off":18,"size":2,"type":"psbend"}'],
  },
  {
    name: 'bytes before the first PSB are skipped silently',
    bytes: [0x00, 0x04, 0x19, ...PSB, ...PSBEND],
    lines: ['{"off":3,"size":16,"type":"psb"}', '{"off":19,"size":2,"type":"psbend"}'],
  },
  {
    name: 'after an error, decoding resumes at a PSB that starts before the error offset',
    // PSB PSBEND, TSC(7 PSB bytes), then `82` (TNT-8) and 9 more PSB bytes: the PSB read at 27
    // is cut off by the end (eos); the run of PSB bytes 19..34 holds the PSB decoding resumes at.
    bytes: [...PSB, ...PSBEND, ...TSC_OF_PSB_BYTES, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, ...PSBEND, 0x00],
    lines: [
      '{"off":0,"size":16,"type":"psb"}',
      '{"off":16,"size":2,"type":"psbend"}',
      '{"off":18,"size":8,"type":"tsc","tsc":"0x2820282028202"}',
      '{"off":26,"size":1,"type":"tnt.8","n":6,"bits":"000001"}',
      '{"off":27,"error":"eos"}',
      '{"off":19,"size":16,"type":"psb"}',
      '{"off":35,"size":2,"type":"psbend"}',
      '{"off":37,"size":1,"type":"pad"}',
    ],
  },
] as const;

const VECTORS = [
  ...SPEC_VECTORS.map((v) => ({ name: `§14 ${v.name}`, bytes: v.bytes })),
  ...ERROR_VECTORS.map((v) => ({ name: `§2 ${v.name}`, bytes: v.bytes })),
];

describe.skipIf(tools === undefined)(title('spec vectors: ptlab vs libipt'), () => {
  let libipt = new Map<string, string[]>();

  beforeAll(async () => {
    libipt = await ptjsonOf(tools!, new Map(VECTORS.map((v) => [v.name, wrapVector(v.bytes)])));
  });

  test.for(SYNC_CASES)('$name (ptlab and libipt)', async ({ bytes, lines }) => {
    const stream = Uint8Array.from(bytes);
    expect(ourDump(stream)).toEqual(lines);
    expect((await ptjsonOf(tools!, new Map([['s', stream]]))).get('s')).toEqual(lines);
  });

  test.for(VECTORS)('$name dumps the same as libipt', ({ name, bytes }) => {
    const stream = wrapVector(bytes);
    const result = compareDumps(ourDump(stream), libipt.get(name) ?? [], stream);
    expect(result.unexplained).toEqual([]);
    expect(result.known.map((k) => k.kind)).toEqual(name === '§14 pwre hw' ? ['pwre-hw'] : []);
  });
});
