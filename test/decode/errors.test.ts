// Error classification (libipt 2.0.5's, as docs/sdm/packets.md §2 lists it) and
// resynchronisation (docs/formats/packet-json.md "Errors and resynchronisation").
import { describe, expect, test } from 'vitest';
import { hex, jsonLines, PSB } from './helpers.js';

const PSB_LINE = '{"off":0,"size":16,"type":"psb"}';

const CASES: { what: string; bytes: string; error: string }[] = [
  { what: 'an unknown first byte (05)', bytes: '05', error: 'bad_opc' },
  { what: 'an unknown x19 opcode (39)', bytes: '39 00', error: 'bad_opc' },
  { what: 'an unknown 02 xx (02 04)', bytes: '02 04', error: 'bad_opc' },
  { what: '02 C3 not followed by 88', bytes: '02 C3 89 00 00 00 00 00 00 00 00', error: 'bad_opc' },
  { what: 'IPBytes 101b', bytes: 'AD 01 02 03 04 05 06 07 08', error: 'bad_packet' },
  { what: 'IPBytes 111b', bytes: 'E1 01 02 03 04 05 06 07 08', error: 'bad_packet' },
  { what: 'IPBytes 101b cut short (checked before the length)', bytes: 'BD', error: 'bad_packet' },
  { what: 'PTW PayloadBytes 10b', bytes: '02 52 01 02 03 04 05 06 07 08', error: 'bad_packet' },
  { what: 'PTW PayloadBytes 11b', bytes: '02 72', error: 'bad_packet' },
  { what: 'MODE leaf 010b', bytes: '99 40', error: 'bad_packet' },
  { what: 'MODE leaf 111b', bytes: '99 E0', error: 'bad_packet' },
  { what: 'a TNT-64 payload of 0', bytes: '02 A3 00 00 00 00 00 00', error: 'bad_packet' },
  { what: 'a TNT-64 payload of 1 (stop bit only)', bytes: '02 A3 01 00 00 00 00 00', error: 'bad_packet' },
  { what: '02 82 not continuing as a full PSB', bytes: '02 82 02 82 00 00 00 00 00 00 00 00 00 00 00 00', error: 'bad_packet' },
  { what: 'a CYC needing a 10th byte', bytes: 'FF FF FF FF FF FF FF FF FF 0E', error: 'bad_packet' },
  { what: 'a TMA with a non-zero byte 4', bytes: '02 73 80 C0 01 FF 01', error: 'bad_packet' },
  { what: 'a TMA with non-zero bits 7:1 of byte 6', bytes: '02 73 80 C0 00 FF 03', error: 'bad_packet' },
  { what: 'a PIP cut short', bytes: '02 43 02 04', error: 'eos' },
  { what: 'a lone 02 at the end', bytes: '02', error: 'eos' },
  { what: '02 C3 at the end', bytes: '02 C3', error: 'eos' },
  { what: 'MODE cut short (eos before the leaf check)', bytes: '99', error: 'eos' },
  { what: 'a PSB shorter than 16 bytes (eos before the pattern check)', bytes: '02 82 00', error: 'eos' },
  { what: 'a CYC whose 9th byte still has Exp=1 at the end', bytes: 'FF FF FF FF FF FF FF FF FF', error: 'eos' },
];

describe('error classification', () => {
  // A PAD after the PSB keeps a leading `02 82` from extending the PSB run (libipt syncs on a run's last 16 bytes).
  test.for(CASES)('$what → $error at the packet offset', ({ bytes, error }) => {
    const lines = jsonLines([...PSB, 0x00, ...hex(bytes)]);
    expect(lines.slice(0, 3)).toEqual([PSB_LINE, '{"off":16,"size":1,"type":"pad"}', `{"off":17,"error":"${error}"}`]);
  });

  test('CYC of 9 bytes is the longest accepted (61 value bits)', () => {
    expect(jsonLines([...PSB, ...hex('FF FF FF FF FF FF FF FF FE')])[1]).toBe(
      '{"off":16,"size":9,"type":"cyc","value":"0x1fffffffffffffff"}',
    );
  });

  test('reserved bits libipt ignores raise no error (CBR byte 3, MODE.Exec bits 4:3)', () => {
    expect(jsonLines([...PSB, ...hex('02 03 12 FF 99 19')]).slice(1)).toEqual([
      '{"off":16,"size":4,"type":"cbr","ratio":18}',
      '{"off":20,"size":2,"type":"mode.exec","csl":true,"csd":false,"mode":"64bit"}',
    ]);
  });
});

describe('resynchronisation', () => {
  test('a stream with no PSB gives one eos at offset 0', () => {
    expect(jsonLines(hex('00 04 06 19 01'))).toEqual(['{"off":0,"error":"eos"}']);
  });

  test('an empty stream gives one eos at offset 0', () => {
    expect(jsonLines([])).toEqual(['{"off":0,"error":"eos"}']);
  });

  test('bytes before the first PSB are skipped silently', () => {
    expect(jsonLines([...hex('05 05 99'), ...PSB, 0x00])).toEqual([
      '{"off":3,"size":16,"type":"psb"}',
      '{"off":19,"size":1,"type":"pad"}',
    ]);
  });

  test('a stream that ends on a packet boundary ends without a line', () => {
    expect(jsonLines([...PSB, ...hex('02 23')])).toEqual([PSB_LINE, '{"off":16,"size":2,"type":"psbend"}']);
  });

  test('after an error decoding resumes at the next PSB', () => {
    expect(jsonLines([...PSB, ...hex('05 00 00'), ...PSB, ...hex('02 23')])).toEqual([
      PSB_LINE,
      '{"off":16,"error":"bad_opc"}',
      '{"off":19,"size":16,"type":"psb"}',
      '{"off":35,"size":2,"type":"psbend"}',
    ]);
  });

  test('after an error with no later PSB the dump ends', () => {
    expect(jsonLines([...PSB, ...hex('05 00 00 00')])).toEqual([PSB_LINE, '{"off":16,"error":"bad_opc"}']);
  });

  test('a run of nine 02 82 pairs syncs on its last 16 bytes, as libipt does', () => {
    expect(jsonLines([...hex('02 82'), ...PSB, 0x00])).toEqual([
      '{"off":2,"size":16,"type":"psb"}',
      '{"off":18,"size":1,"type":"pad"}',
    ]);
  });

  test('the resync search looks back 15 bytes, like libipt pt_pkt_sync_forward', () => {
    // A TSC whose payload starts a PSB that continues after it: the 02 82 … at
    // offset 24 is a bad PSB (too short a run from there), and the search from
    // 24-15 finds the PSB that began inside the TSC at offset 18.
    const bytes = [...PSB, ...hex('19 00 02 82 02 82 02 82'), ...hex('02 82 02 82 02 82 02 82 02 82 00 00 00 00 00 00'), ...hex('02 23')];
    expect(jsonLines(bytes)).toEqual([
      PSB_LINE,
      '{"off":16,"size":8,"type":"tsc","tsc":"0x82028202820200"}',
      '{"off":24,"error":"bad_packet"}',
      '{"off":18,"size":16,"type":"psb"}',
      '{"off":34,"size":1,"type":"pad"}',
      '{"off":35,"size":1,"type":"pad"}',
      '{"off":36,"size":1,"type":"pad"}',
      '{"off":37,"size":1,"type":"pad"}',
      '{"off":38,"size":1,"type":"pad"}',
      '{"off":39,"size":1,"type":"pad"}',
      '{"off":40,"size":2,"type":"psbend"}',
    ]);
  });

  test('a PSB followed by 7 more 02 82 pairs and a 02 syncs on the run end, then the 02 is eos', () => {
    // 02 82 x 15 then 02: the run ends at 30, so libipt syncs at 14 (probed with libipt 2.0.5).
    expect(jsonLines([...PSB, ...PSB.slice(0, 15)])).toEqual(['{"off":14,"size":16,"type":"psb"}', '{"off":30,"error":"eos"}']);
  });

  test('a PSB cut short after other packets is eos, and the lookback finds no PSB in it', () => {
    expect(jsonLines([...PSB, 0x00, ...PSB.slice(0, 15)])).toEqual([
      PSB_LINE,
      '{"off":16,"size":1,"type":"pad"}',
      '{"off":17,"error":"eos"}',
    ]);
  });
});
