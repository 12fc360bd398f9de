// docs/sdm/packets.md §14 test vectors: bytes after a PSB → the packet-json line
// (docs/formats/packet-json.md), expected values written by hand from the spec text.
import { describe, expect, test } from 'vitest';
import { hex, jsonLines, PSB } from './helpers.js';

const PSB_LINE = '{"off":0,"size":16,"type":"psb"}';

const VECTORS: { bytes: string; want: string }[] = [
  { bytes: '00', want: '{"off":16,"size":1,"type":"pad"}' },
  { bytes: '04', want: '{"off":16,"size":1,"type":"tnt.8","n":1,"bits":"0"}' },
  { bytes: '06', want: '{"off":16,"size":1,"type":"tnt.8","n":1,"bits":"1"}' },
  { bytes: '80', want: '{"off":16,"size":1,"type":"tnt.8","n":6,"bits":"000000"}' },
  { bytes: 'FE', want: '{"off":16,"size":1,"type":"tnt.8","n":6,"bits":"111111"}' },
  { bytes: '02 A3 02 00 00 00 00 00', want: '{"off":16,"size":8,"type":"tnt.64","n":1,"bits":"0"}' },
  { bytes: '02 A3 00 00 00 00 00 80', want: `{"off":16,"size":8,"type":"tnt.64","n":47,"bits":"${'0'.repeat(47)}"}` },
  { bytes: '0D', want: '{"off":16,"size":1,"type":"tip","ipc":"suppressed"}' },
  { bytes: '2D 01 02', want: '{"off":16,"size":3,"type":"tip","ipc":"update-16","ip":"0x201"}' },
  { bytes: '4D 01 02 03 04', want: '{"off":16,"size":5,"type":"tip","ipc":"update-32","ip":"0x4030201"}' },
  { bytes: '6D 01 02 03 04 05 06', want: '{"off":16,"size":7,"type":"tip","ipc":"sext-48","ip":"0x60504030201"}' },
  { bytes: '8D 01 02 03 04 05 06', want: '{"off":16,"size":7,"type":"tip","ipc":"update-48","ip":"0x60504030201"}' },
  { bytes: 'CD 01 02 03 04 05 06 07 08', want: '{"off":16,"size":9,"type":"tip","ipc":"full","ip":"0x807060504030201"}' },
  { bytes: '11', want: '{"off":16,"size":1,"type":"tip.pge","ipc":"suppressed"}' },
  { bytes: '31 01 02', want: '{"off":16,"size":3,"type":"tip.pge","ipc":"update-16","ip":"0x201"}' },
  { bytes: '71 01 02 03 04 05 86', want: '{"off":16,"size":7,"type":"tip.pge","ipc":"sext-48","ip":"0x860504030201"}' },
  { bytes: '01', want: '{"off":16,"size":1,"type":"tip.pgd","ipc":"suppressed"}' },
  { bytes: '41 01 02 03 04', want: '{"off":16,"size":5,"type":"tip.pgd","ipc":"update-32","ip":"0x4030201"}' },
  { bytes: '1D', want: '{"off":16,"size":1,"type":"fup","ipc":"suppressed"}' },
  { bytes: 'DD 01 02 03 04 05 06 07 08', want: '{"off":16,"size":9,"type":"fup","ipc":"full","ip":"0x807060504030201"}' },
  { bytes: '02 43 02 04 06 08 0A 0C', want: '{"off":16,"size":8,"type":"pip","cr3":"0xc0a080604020","nr":false}' },
  { bytes: '02 43 03 04 06 08 0A 0C', want: '{"off":16,"size":8,"type":"pip","cr3":"0xc0a080604020","nr":true}' },
  { bytes: '99 00', want: '{"off":16,"size":2,"type":"mode.exec","csl":false,"csd":false,"mode":"16bit"}' },
  { bytes: '99 01', want: '{"off":16,"size":2,"type":"mode.exec","csl":true,"csd":false,"mode":"64bit"}' },
  { bytes: '99 02', want: '{"off":16,"size":2,"type":"mode.exec","csl":false,"csd":true,"mode":"32bit"}' },
  { bytes: '99 03', want: '{"off":16,"size":2,"type":"mode.exec","csl":true,"csd":true,"mode":"unknown"}' },
  { bytes: '99 20', want: '{"off":16,"size":2,"type":"mode.tsx","intx":false,"abrt":false}' },
  { bytes: '99 21', want: '{"off":16,"size":2,"type":"mode.tsx","intx":true,"abrt":false}' },
  { bytes: '99 22', want: '{"off":16,"size":2,"type":"mode.tsx","intx":false,"abrt":true}' },
  { bytes: '02 83', want: '{"off":16,"size":2,"type":"stop"}' },
  { bytes: '02 03 12 00', want: '{"off":16,"size":4,"type":"cbr","ratio":18}' },
  { bytes: '19 01 02 03 04 05 06 07', want: '{"off":16,"size":8,"type":"tsc","tsc":"0x7060504030201"}' },
  { bytes: '59 12', want: '{"off":16,"size":2,"type":"mtc","ctc":18}' },
  { bytes: '02 73 80 C0 00 FF 01', want: '{"off":16,"size":7,"type":"tma","ctc":49280,"fc":511}' },
  { bytes: '03', want: '{"off":16,"size":1,"type":"cyc","value":"0x0"}' },
  { bytes: '0B', want: '{"off":16,"size":1,"type":"cyc","value":"0x1"}' },
  { bytes: 'FB', want: '{"off":16,"size":1,"type":"cyc","value":"0x1f"}' },
  { bytes: '07 02', want: '{"off":16,"size":2,"type":"cyc","value":"0x20"}' },
  { bytes: 'FF FE', want: '{"off":16,"size":2,"type":"cyc","value":"0xfff"}' },
  { bytes: '07 01 02', want: '{"off":16,"size":3,"type":"cyc","value":"0x1000"}' },
  { bytes: '02 C8 01 02 03 04 05', want: '{"off":16,"size":7,"type":"vmcs","base":"0x504030201000"}' },
  { bytes: '02 F3', want: '{"off":16,"size":2,"type":"ovf"}' },
  { bytes: '02 23', want: '{"off":16,"size":2,"type":"psbend"}' },
  { bytes: '02 C3 88 01 02 03 04 05 06 07 08', want: '{"off":16,"size":11,"type":"mnt","payload":"0x807060504030201"}' },
  { bytes: '02 12 01 02 03 04', want: '{"off":16,"size":6,"type":"ptw","plc":0,"payload":"0x4030201","ip":false}' },
  { bytes: '02 32 01 02 03 04 05 06 07 08', want: '{"off":16,"size":10,"type":"ptw","plc":1,"payload":"0x807060504030201","ip":false}' },
  { bytes: '02 92 01 02 03 04', want: '{"off":16,"size":6,"type":"ptw","plc":0,"payload":"0x4030201","ip":true}' },
  { bytes: '02 B2 01 02 03 04 05 06 07 08', want: '{"off":16,"size":10,"type":"ptw","plc":1,"payload":"0x807060504030201","ip":true}' },
  { bytes: '02 62', want: '{"off":16,"size":2,"type":"exstop","ip":false}' },
  { bytes: '02 E2', want: '{"off":16,"size":2,"type":"exstop","ip":true}' },
  { bytes: '02 C2 01 02 03 04 05 06 07 08', want: '{"off":16,"size":10,"type":"mwait","hints":"0x4030201","ext":"0x8070605"}' },
  { bytes: '02 22 80 34', want: '{"off":16,"size":4,"type":"pwre","state":3,"sub_state":4,"hw":true}' },
  { bytes: '02 A2 01 02 03 04 05', want: '{"off":16,"size":7,"type":"pwrx","last":0,"deepest":1,"interrupt":false,"store":false,"autonomous":false}' },
  { bytes: '02 A2 21 0D 00 00 00', want: '{"off":16,"size":7,"type":"pwrx","last":2,"deepest":1,"interrupt":true,"store":true,"autonomous":true}' },
  { bytes: '02 63 00', want: '{"off":16,"size":3,"type":"bbp","sz":false,"block_type":0}' },
  { bytes: '02 63 80', want: '{"off":16,"size":3,"type":"bbp","sz":true,"block_type":0}' },
  { bytes: '02 63 9F', want: '{"off":16,"size":3,"type":"bbp","sz":true,"block_type":31}' },
  { bytes: '02 33', want: '{"off":16,"size":2,"type":"bep","ip":false}' },
  { bytes: '02 B3', want: '{"off":16,"size":2,"type":"bep","ip":true}' },
  { bytes: '02 13 01 03', want: '{"off":16,"size":4,"type":"cfe","ip":false,"cfe_type":1,"vector":3}' },
  { bytes: '02 13 81 03', want: '{"off":16,"size":4,"type":"cfe","ip":true,"cfe_type":1,"vector":3}' },
  { bytes: '02 53 09 01 02 03 04 05 06 07 00', want: '{"off":16,"size":11,"type":"evd","evd_type":9,"payload":"0x7060504030201"}' },
  { bytes: 'D9 80 05', want: '{"off":16,"size":3,"type":"trig","ip":true,"icntv":false,"mult":false,"trbv":5,"icnt":0}' },
  { bytes: 'D9 60 05 34 12', want: '{"off":16,"size":5,"type":"trig","ip":false,"icntv":true,"mult":true,"trbv":5,"icnt":4660}' },
];

describe('docs/sdm/packets.md §14 test vectors', () => {
  test.for(VECTORS)('$bytes decodes to its packet-json line', ({ bytes, want }) => {
    expect(jsonLines([...PSB, ...hex(bytes)])).toEqual([PSB_LINE, want]);
  });

  test('a PSB decodes as one 16-byte psb packet', () => {
    expect(jsonLines(PSB)).toEqual([PSB_LINE]);
  });

  test('a BIP inside a 4-byte block carries its ID and a 4-byte value', () => {
    expect(jsonLines([...PSB, ...hex('02 63 80'), ...hex('04 01 02 03 04')])).toEqual([
      PSB_LINE,
      '{"off":16,"size":3,"type":"bbp","sz":true,"block_type":0}',
      '{"off":19,"size":5,"type":"bip","id":0,"value":"0x4030201"}',
    ]);
  });

  test('a BIP inside an 8-byte block carries an 8-byte value', () => {
    expect(jsonLines([...PSB, ...hex('02 63 04'), ...hex('1C 01 02 03 04 05 06 07 08')])).toEqual([
      PSB_LINE,
      '{"off":16,"size":3,"type":"bbp","sz":false,"block_type":4}',
      '{"off":19,"size":9,"type":"bip","id":3,"value":"0x807060504030201"}',
    ]);
  });

  test('after BEP the same byte is a TNT-8 again (spec §3.18)', () => {
    expect(jsonLines([...PSB, ...hex('02 63 80 04 01 02 03 04 02 33 04')]).slice(-2)).toEqual([
      '{"off":24,"size":2,"type":"bep","ip":false}',
      '{"off":26,"size":1,"type":"tnt.8","n":1,"bits":"0"}',
    ]);
  });

  test('a TNT-8 ends the block like perf does, so a later BIP byte is a TNT-8', () => {
    expect(jsonLines([...PSB, ...hex('02 63 80 06 04')]).slice(-2)).toEqual([
      '{"off":19,"size":1,"type":"tnt.8","n":1,"bits":"1"}',
      '{"off":20,"size":1,"type":"tnt.8","n":1,"bits":"0"}',
    ]);
  });
});
