// The comparator itself: a difference it does not know about is reported,
// and the PWRE HW difference is accepted only where the bytes explain it.
import { describe, expect, test } from 'vitest';
import { compareDumps } from './compare.js';

const PSB = '{"off":0,"size":16,"type":"psb"}';
// 02 22 80 34 at offset 16: SDM HW (bit 7) = 1, libipt's bit 3 = 0 (docs/sdm/packets.md §3.17).
const STREAM = Uint8Array.from([...Array<number>(16).fill(0), 0x02, 0x22, 0x80, 0x34]);
const PWRE_SDM = '{"off":16,"size":4,"type":"pwre","state":3,"sub_state":4,"hw":true}';
const PWRE_LIBIPT = '{"off":16,"size":4,"type":"pwre","state":3,"sub_state":4,"hw":false}';

describe('compareDumps', () => {
  test('identical dumps have no differences', () => {
    expect(compareDumps([PSB, PWRE_SDM], [PSB, PWRE_SDM], STREAM)).toEqual({ known: [], unexplained: [] });
  });

  test('a changed line is unexplained', () => {
    const other = '{"off":0,"size":16,"type":"psbend"}';
    expect(compareDumps([other], [PSB], STREAM).unexplained).toEqual([`line 0: ours ${other} / libipt ${PSB}`]);
  });

  test('a missing line is unexplained', () => {
    expect(compareDumps([PSB], [PSB, PWRE_LIBIPT], STREAM).unexplained).toHaveLength(1);
  });

  test('the PWRE HW difference is known when byte 2 explains both readings', () => {
    expect(compareDumps([PWRE_SDM], [PWRE_LIBIPT], STREAM)).toEqual({ known: [{ kind: 'pwre-hw', off: 16 }], unexplained: [] });
  });

  test('a PWRE HW difference the bytes do not explain is unexplained', () => {
    expect(compareDumps([PWRE_LIBIPT], [PWRE_SDM], STREAM).unexplained).toHaveLength(1);
  });

  test('a PWRE that differs in another field is unexplained', () => {
    const state = PWRE_SDM.replace('"state":3', '"state":2');
    expect(compareDumps([state], [PWRE_LIBIPT], STREAM).unexplained).toHaveLength(1);
  });
});
