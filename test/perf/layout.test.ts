// The byte layouts of harness/perf against the structs they encode (tools/include/uapi/linux/
// perf_event.h, tools/perf/util/header.h, tools/lib/perf/include/perf/event.h,
// tools/perf/util/intel-pt.h), and the mapping of a true path to perf's branch samples.
import { describe, expect, test } from 'vitest';
import { perfFilterString } from '../../harness/perf/address-filters.js';
import { encodeAttr, intelPtFlags } from '../../harness/perf/attr.js';
import { intelPtConfig, intelPtInfoOf, intelPtPrivWords, timeConversion } from '../../harness/perf/intel-pt-info.js';
import { perfDataFile } from '../../harness/perf/perf-data.js';
import { enablingCtl } from '../../harness/perf/read-run.js';
import { auxRecord, auxtraceRecord, commRecord, itraceStartRecord, mmapRecord } from '../../harness/perf/records.js';
import { truthAsPerfBranches } from '../../harness/perf/truth-branches.js';

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
const sid = { pid: 7, tid: 8, time: 9n, cpu: 2, id: 1n };

describe('records', () => {
  test.for([
    ['COMM', commRecord(7, 8, 'a-very-long-scenario-name', sid), 3, 16 + 16 + 32],
    ['MMAP', mmapRecord({ pid: 7, tid: 8, start: 0x10000000n, len: 0x2000n, pgoff: 0n, filename: '/r/image.bin' }, sid), 1, 40 + 16 + 32],
    ['ITRACE_START', itraceStartRecord(7, 8, sid), 12, 16 + 32],
    ['AUX', auxRecord(0n, 100n, sid), 11, 32 + 32],
  ] as const)('%s has its type, its size in the header, a multiple of 8 bytes', ([, rec, type, size]) => {
    expect([view(rec).getUint32(0, true), view(rec).getUint16(6, true), rec.length]).toEqual([type, size, size]);
  });

  test('COMM keeps 15 characters of the name, as the kernel\'s TASK_COMM_LEN does', () => {
    const rec = commRecord(7, 8, 'a-very-long-scenario-name', sid);
    expect(Buffer.from(rec.subarray(16, 32)).toString('latin1')).toBe('a-very-long-sce\0');
  });

  test('the sample_id trailer is pid, tid, time, cpu, res, identifier', () => {
    const rec = itraceStartRecord(1, 1, sid), v = view(rec);
    expect([v.getInt32(16, true), v.getInt32(20, true), v.getBigUint64(24, true), v.getUint32(32, true), v.getBigUint64(40, true)]).toEqual([7, 8, 9n, 2, 1n]);
  });

  test('AUXTRACE counts only its 48-byte header in header.size; the data follows, padded to 8 with PAD bytes', () => {
    const rec = auxtraceRecord({ data: new Uint8Array([0x02, 0x82, 0x02]), offset: 0n, idx: 0, tid: 5, cpu: 1 });
    const v = view(rec);
    expect([v.getUint32(0, true), v.getUint16(6, true), v.getBigUint64(8, true), rec.length, [...rec.subarray(48)]]).toEqual([71, 48, 8n, 56, [2, 0x82, 2, 0, 0, 0, 0, 0]]);
  });
});

describe('the file', () => {
  const attr = { type: 8, config: 0x2603n, sampleType: 0x10087n, flags: intelPtFlags({ user: true, kernel: false }) };
  const file = perfDataFile([{ attr, ids: [1n], name: 'intel_pt//u' }], [itraceStartRecord(1, 1, sid)], {
    hostname: 'h', osrelease: 'r', version: 'v', arch: 'x86_64', nrCpus: { available: 1, online: 1 }, cpuDesc: 'd', cpuid: 'GenuineIntel,6,85,4',
    pmuMappings: [{ type: 8, name: 'intel_pt' }],
  });
  const v = view(file);

  test('starts with PERFILE2, a 104-byte header and attrs of 128 + 16 bytes', () => {
    expect([Buffer.from(file.subarray(0, 8)).toString('latin1'), v.getBigUint64(8, true), v.getBigUint64(16, true)]).toEqual(['PERFILE2', 104n, 144n]);
  });

  test('the attr section points at the ids; the data section at the records', () => {
    const attrsAt = Number(v.getBigUint64(24, true)), dataAt = Number(v.getBigUint64(40, true));
    const idsAt = Number(v.getBigUint64(attrsAt + 128, true));
    expect([v.getBigUint64(idsAt, true), v.getUint32(dataAt, true), Number(v.getBigUint64(48, true))]).toEqual([1n, 12, 48]);
  });

  test('the feature bitmap names the sections after the data, lowest id first', () => {
    const bitmap = v.getBigUint64(72, true);
    const ids = [...Array(64).keys()].filter((i) => (bitmap >> BigInt(i)) & 1n);
    const table = Number(v.getBigUint64(40, true) + v.getBigUint64(48, true));
    const hostname = Number(v.getBigUint64(table, true));
    expect([ids, v.getUint32(hostname, true), file[hostname + 4]]).toEqual([[3, 4, 5, 6, 7, 8, 9, 12, 16], 64, 'h'.charCodeAt(0)]);
  });

  test('perf_event_attr: type, size 128, config, sample_type and flags at their offsets', () => {
    const a = view(encodeAttr(attr));
    expect([a.byteLength, a.getUint32(0, true), a.getUint32(4, true), a.getBigUint64(8, true), a.getBigUint64(24, true), (a.getBigUint64(40, true) >> 5n) & 1n]).toEqual([128, 8, 128, 0x2603n, 0x10087n, 1n]);
  });
});

describe('intel_pt', () => {
  test('config keeps the IA32_RTIT_CTL bits the PMU exposes and drops OS, User, ToPA and ADDRn_CFG', () => {
    expect(intelPtConfig(0x1_0000_270bn)).toBe(0x2603n);
    expect(intelPtConfig((1n << 55n) | (3n << 14n) | (1n << 11n) | 1n)).toBe((1n << 55n) | (3n << 14n) | (1n << 11n) | 1n);
  });

  test('the private words are in intel-pt.h order, then the filter string', () => {
    const info = intelPtInfoOf(0x1_0000_270bn, { mtcFreq: 3, nomFreq: 32, cpuid15: { eax: 1, ebx: 2 } }, 8, 'filter 0x0/0x10@/x');
    const w = intelPtPrivWords(info);
    expect(w.slice(0, 17)).toEqual([8n, 31n, 671088640n, 0n, 0n, 0x400n, 0x800n, 0n, 0n, 0n, 0x200n, 0x3c000n, 2n, 1n, 0x2n, 32n, 18n]);
    expect(Buffer.concat(w.slice(17).map((x) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(x); return b; })).toString('latin1')).toBe('filter 0x0/0x10@/x\0\0\0\0\0\0');
  });

  test('time conversion: ns = tsc × mult >> shift, mult below 2^32', () => {
    const t = timeConversion(3_200_000_000);
    expect([t.shift, t.mult, (3_200_000_000n * t.mult) >> BigInt(t.shift)]).toEqual([31, 671088640n, 1_000_000_000n]);
  });

  test('filter ranges become file offsets of the image; TraceStop is tracestop; a range outside the image has no file', () => {
    const image = { base: 0x10000000n, size: 0x2000n, file: '/r/image.bin' };
    expect(perfFilterString([
      { n: 0, cfg: 1, a: 0x10000000n, b: 0x10000269n },
      { n: 1, cfg: 2, a: 0x100006c0n, b: 0x100006c0n },
      { n: 2, cfg: 1, a: 0x7000n, b: 0x7fffn },
    ], image)).toBe('filter 0x0/0x26a@/r/image.bin,tracestop 0x6c0/0x1@/r/image.bin,filter 0x7000/0x1000');
  });

  test('the enabling write is the first IA32_RTIT_CTL WRMSR with TraceEn, with the ranges written before it', () => {
    const t = [
      '{"op":"wrmsr","cpu":1,"msr":"0x570","value":"0x100002108"}',
      '{"op":"wrmsr","cpu":1,"msr":"0x580","value":"0x10000000"}',
      '{"op":"wrmsr","cpu":1,"msr":"0x581","value":"0x10000269"}',
      '{"op":"wrmsr","cpu":1,"msr":"0x570","value":"0x100002109"}',
    ].join('\n');
    expect(enablingCtl(t)).toEqual({ ctl: 0x100002109n, cpu: 1, ranges: [{ n: 0, cfg: 1, a: 0x10000000n, b: 0x10000269n }] });
  });

  test('an XRSTORS of PT state with TraceEn enables too, with the ranges of its area; a faulting write does not', () => {
    const t = [
      '{"op":"wrmsr","cpu":0,"msr":"0x570","value":"0x2109","fault":"#GP on WRMSR …"}',
      '{"op":"xrstors","cpu":0,"value":"0x100","area":{"IA32_RTIT_CTL":"0x200000270b","IA32_RTIT_ADDR0_A":"0x0","IA32_RTIT_ADDR0_B":"0x0","IA32_RTIT_ADDR1_A":"0x10000100","IA32_RTIT_ADDR1_B":"0x100001ff"}}',
    ].join('\n');
    expect(enablingCtl(t)).toEqual({ ctl: 0x200000270bn, cpu: 0, ranges: [{ n: 1, cfg: 2, a: 0x10000100n, b: 0x100001ffn }] });
  });
});

describe('the truth as perf\'s branch samples', () => {
  const lines = (...r: object[]): string => r.map((x) => JSON.stringify(x)).join('\n');

  test('enable is a trace start from 0; a jcc not taken is no sample', () => {
    expect(truthAsPerfBranches(lines({ kind: 'enable', ip: '0x10' }, { ip: '0x12', kind: 'jcc', taken: false, to: '0x14' }, { ip: '0x14', kind: 'jmp', to: '0x20' })))
      .toEqual([{ from: 0n, to: 0x10n }, { from: 0x14n, to: 0x20n }]);
  });

  test('a branch without "to" and the disable after it are one sample to 0', () => {
    expect(truthAsPerfBranches(lines({ ip: '0x9a', kind: 'far.call' }, { kind: 'disable' }))).toEqual([{ from: 0x9an, to: 0n }]);
  });

  test('a disable on its own ends the trace where the path stood (FUP, TIP.PGD)', () => {
    expect(truthAsPerfBranches(lines({ ip: '0x2', kind: 'jmp', to: '0x7' }, { kind: 'disable' }))).toEqual([{ from: 2n, to: 7n }, { from: 7n, to: 0n }]);
  });

  test('a disable at the target of the branch before it adds no sample (the branch is the trace\'s end)', () => {
    expect(truthAsPerfBranches(lines({ ip: '0x265', kind: 'call', to: '0x26a' }, { kind: 'disable', ip: '0x26a' }))).toEqual([{ from: 0x265n, to: 0x26an }]);
  });
});
