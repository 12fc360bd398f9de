// perf.data files for the reader's tests, built with the writer's own encoders (harness/perf/):
// an intel_pt event, its AUXTRACE_INFO, a task's COMM and MMAP, and AUX data on one or more CPUs,
// each with the AUX records that say where it landed, their flags set as a test asks.
import { AUX_FLAG, SAMPLE } from '../../harness/perf/abi.js';
import { intelPtFlags } from '../../harness/perf/attr.js';
import { intelPtInfoOf, intelPtPrivWords } from '../../harness/perf/intel-pt-info.js';
import { perfDataFile } from '../../harness/perf/perf-data.js';
import { auxRecord, auxtraceInfoRecord, auxtraceRecord, commRecord, finishedRoundRecord, mmapRecord, type SampleId } from '../../harness/perf/records.js';

/** An AUX record's data, and the PERF_AUX_FLAG_* names it carries. */
export interface FixtureAux {
  readonly offset: number;
  readonly size: number;
  readonly flags?: readonly (keyof typeof AUX_FLAG)[];
}

/** One CPU's AUX data: its bytes in buffers (AUXTRACE records), and the AUX records about it. */
export interface FixtureCpu {
  readonly cpu: number;
  readonly buffers: readonly Uint8Array[];
  readonly aux?: readonly FixtureAux[];
}

const PID = 77;

/** PERF_RECORD_AUX with `flags` set (the encoder writes 0: the u64 at offset 24 is patched). */
function flaggedAux(a: FixtureAux, sid: SampleId): Uint8Array {
  const rec = auxRecord(BigInt(a.offset), BigInt(a.size), sid);
  const flags = (a.flags ?? []).reduce((f, n) => f | AUX_FLAG[n], 0n);
  new DataView(rec.buffer, rec.byteOffset, rec.byteLength).setBigUint64(24, flags, true);
  return rec;
}

/** A perf.data of an intel_pt session: `cpus` in order, each buffer after its CPU's AUX records; the code of `image` mapped at `base`. */
export function perfFixture(o: { cpus: readonly FixtureCpu[]; image: string; base: bigint; imageLen: bigint; withInfo?: boolean }): Uint8Array {
  const sid = (cpu: number): SampleId => ({ pid: PID, tid: PID, time: 0n, cpu, id: 1n });
  const info = intelPtInfoOf(0x2603n, { mtcFreq: 3, nomFreq: 32, cpuid15: { eax: 1, ebx: 2 } }, 8);
  const records: Uint8Array[] = [
    ...(o.withInfo === false ? [] : [auxtraceInfoRecord(intelPtPrivWords(info))]),
    commRecord(PID, PID, 'fixture', sid(o.cpus[0]?.cpu ?? 0)),
    mmapRecord({ pid: PID, tid: PID, start: o.base, len: o.imageLen, pgoff: 0n, filename: o.image }, sid(o.cpus[0]?.cpu ?? 0)),
  ];
  o.cpus.forEach((c, idx) => {
    const aux = c.aux ?? [{ offset: 0, size: c.buffers.reduce((n, b) => n + b.length, 0) }];
    for (const a of aux) records.push(flaggedAux(a, sid(c.cpu)));
    let offset = 0n;
    for (const data of c.buffers) {
      records.push(auxtraceRecord({ data, offset, idx, tid: -1, cpu: c.cpu }));
      offset += BigInt(data.length);
    }
  });
  records.push(finishedRoundRecord());
  return perfDataFile([{
    attr: { type: 8, config: info.config, sampleType: SAMPLE.IP | SAMPLE.TID | SAMPLE.TIME | SAMPLE.CPU | SAMPLE.IDENTIFIER, flags: intelPtFlags({ user: true, kernel: false }) },
    ids: [1n], name: 'intel_pt//u',
  }], records, {
    hostname: 'h', osrelease: 'r', version: 'ptlab test', arch: 'x86_64', nrCpus: { available: 4, online: 4 }, cpuDesc: 'd',
    cpuid: 'GenuineIntel,6,85,4', pmuMappings: [{ type: 8, name: 'intel_pt' }],
  });
}

/** The file offset of the first record of `type` in a perf.data's data section (stepping over AUXTRACE data by its size field). */
export function recordAt(file: Uint8Array, type: number): number {
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const dataAt = Number(v.getBigUint64(40, true)), dataEnd = dataAt + Number(v.getBigUint64(48, true));
  for (let at = dataAt; at < dataEnd;) {
    const t = v.getUint32(at, true), size = v.getUint16(at + 6, true);
    if (t === type) return at;
    at += size + (t === 71 ? Number(v.getBigUint64(at + 8, true)) : 0);
  }
  throw new Error(`no record of type ${type}`);
}
