// The perf.data reader (harness/perf/perf-file.ts, read-records.ts, read-intel-pt-info.ts,
// aux-streams.ts, perf-input.ts) on files the writer's encoders build: what it reads back, the
// AUX streams and their losses, and a truncated or corrupt file as one PerfDataError each.
import { describe, expect, test } from 'vitest';
import { PtError } from '../../driver/base/errors.js';
import { lossLine } from '../../harness/perf/aux-streams.js';
import { perfInputOf } from '../../harness/perf/perf-input.js';
import { perfFixture, recordAt as recordOf } from './perf-fixture.js';

const PSBISH = Uint8Array.from({ length: 21 }, (_, i) => i + 1);
const base = { image: '/r/image.bin', base: 0x10000000n, imageLen: 0x2000n };
const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof PtError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'no error';
};

describe('reading a perf.data', () => {
  const file = perfFixture({ ...base, cpus: [{ cpu: 3, buffers: [PSBISH] }] });
  const input = perfInputOf('f.data', file);

  test('reads the attr with its EVENT_DESC name, the intel_pt session and the MMAP back', () => {
    const m = input.mmaps[0]!;
    expect([input.attrs.map((a) => [a.type, a.name, a.ids]), [m.filename, m.start, m.len, m.pgoff, m.sid?.cpu], input.comms.map((c) => c.comm)]).toEqual([
      [[8, 'intel_pt//u', [1n]]], ['/r/image.bin', 0x10000000n, 0x2000n, 0n, 3], ['fixture'],
    ]);
  });

  test('reads the intel_pt private words: the bits, the MTC period mask, TSC:CTC, the non-turbo ratio, per-thread', () => {
    const s = input.session;
    expect([s.pmuType, s.bits, s.tscCtc, s.maxNonTurboRatio, s.perCpuMmaps, s.snapshotMode, s.filter]).toEqual([
      8, { tsc: 0x400n, noretcomp: 0x800n, mtc: 0x200n, mtcFreq: 0x3c000n, cyc: 0x2n }, { n: 2, d: 1 }, 32, false, false, '',
    ]);
  });

  test('an AUX buffer is its bytes without the zeros perf pads it with to 8 bytes', () => {
    const s = input.streams[0]!;
    expect([s.cpu, s.bytes, [...file.subarray(s.chunks[0]!.at, s.chunks[0]!.at + s.bytes)]]).toEqual([3, 21, [...PSBISH]]);
  });

  test('each CPU is one stream, in the order of its first buffer; its buffers follow one another', () => {
    const two = perfInputOf('f.data', perfFixture({ ...base, cpus: [{ cpu: 2, buffers: [PSBISH, PSBISH] }, { cpu: 0, buffers: [PSBISH.subarray(0, 5)] }] }));
    expect(two.streams.map((s) => [s.cpu, s.bytes, s.chunks.map((c) => c.length)])).toEqual([[2, 42, [21, 21]], [0, 5, [5]]]);
  });
});

describe('AUX flags', () => {
  test.for([
    { flags: ['TRUNCATED'], reason: 'stop' },
    { flags: ['PARTIAL'], reason: 'error' },
    { flags: ['COLLISION'], reason: 'error' },
    { flags: ['TRUNCATED', 'COLLISION'], reason: 'stop' },
  ] as const)('$flags is a loss where the flagged AUX data ends ($reason)', ({ flags, reason }) => {
    const f = perfFixture({ ...base, cpus: [{ cpu: 1, buffers: [PSBISH], aux: [{ offset: 0, size: 8, flags }, { offset: 8, size: 13 }] }] });
    const s = perfInputOf('f.data', f).streams[0]!;
    expect([s.bytes, s.losses.map((l) => [l.at, l.flags, l.reason])]).toEqual([21, [[8, flags, reason]]]);
    expect(lossLine(s, s.losses[0]!)).toBe(`cpu 1: AUX data lost at byte 8 of the stream (${reason}): the AUX record of bytes 0-8 of the AUX area is flagged ${flags.join(', ')}; how many bytes were lost is not recorded`);
  });

  test('OVERWRITE alone (snapshot mode) is no loss', () => {
    const f = perfFixture({ ...base, cpus: [{ cpu: 0, buffers: [PSBISH], aux: [{ offset: 0, size: 21, flags: ['OVERWRITE'] }] }] });
    expect(perfInputOf('f.data', f).streams[0]!.losses).toEqual([]);
  });
});

describe('a perf.data that cannot be read is one error line', () => {
  const good = perfFixture({ ...base, cpus: [{ cpu: 0, buffers: [PSBISH] }] });
  const recordAt = (type: number): number => recordOf(good, type);
  const patched = (f: (w: DataView) => void): Uint8Array => {
    const b = good.slice();
    f(new DataView(b.buffer));
    return b;
  };

  test.for([8, 50, 104, 200, 400, good.length - 300, good.length - 1])('cut at %i bytes', (n) => {
    expect(message(() => perfInputOf('f.data', good.subarray(0, n)))).toMatch(/^bad_config: .*(past the end of the file|cut off by)/);
  });

  test('a record whose size is 0', () => {
    const at = recordAt(3);
    expect(message(() => perfInputOf('f.data', patched((w) => w.setUint16(at + 6, 0, true))))).toBe(`bad_config: a record of type 3 whose size is 0, less than its own 8-byte header (at byte ${at})`);
  });

  test('an AUXTRACE record that says 2^60 bytes follow', () => {
    const at = recordAt(71);
    expect(message(() => perfInputOf('f.data', patched((w) => w.setBigUint64(at + 8, 1n << 60n, true))))).toMatch(
      new RegExp(`^bad_config: an AUXTRACE record says ${1n << 60n} bytes of AUX data follow it, but the data section has \\d+ bytes left \\(at byte ${at}\\)$`));
  });

  test('a record that runs past the data section', () => {
    const at = recordAt(1);
    expect(message(() => perfInputOf('f.data', patched((w) => w.setUint16(at + 6, 0xfff8, true))))).toMatch(/^bad_config: a record of type 1 and 65528 bytes runs past the end of the data section/);
  });

  test('a perf.data without an intel_pt AUXTRACE_INFO names its events', () => {
    const f = perfFixture({ ...base, cpus: [{ cpu: 0, buffers: [PSBISH] }], withInfo: false });
    expect(message(() => perfInputOf('f.data', f))).toBe('bad_config: f.data: a perf.data without Intel PT data (its events: intel_pt//u)');
  });
});
