// A run directory as a perf.data that `perf script --itrace=b` decodes (docs/perf.md): one intel_pt
// event, the intel_pt AUXTRACE_INFO, the workload as one task (COMM) with its code mapped from the
// run's image.bin (MMAP), the start of its trace (ITRACE_START), and trace.pt as one AUX buffer
// (AUX, then AUXTRACE with the bytes), in the order `perf record --per-thread` leaves them.
import { hostname, release } from 'node:os';
import { hex } from '../../driver/base/hex.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { SAMPLE } from './abi.js';
import { perfFilterString } from './address-filters.js';
import { intelPtFlags } from './attr.js';
import { intelPtInfoOf, intelPtPrivWords } from './intel-pt-info.js';
import { perfDataFile, type PerfEvent } from './perf-data.js';
import type { RunForPerf } from './read-run.js';
import {
  auxRecord, auxtraceInfoRecord, auxtraceRecord, commRecord, finishedRoundRecord, itraceStartRecord, mmapRecord, type SampleId,
} from './records.js';

/**
 * The intel_pt PMU's type number. The kernel hands it out at boot (/sys/bus/event_source/devices/
 * intel_pt/type); 8 is a usual value on x86 machines. perf script matches the event to the
 * AUXTRACE_INFO by this number only, and the PMU_MAPPINGS feature names it.
 */
export const INTEL_PT_PMU_TYPE = 8;

/** The workload's pid and tid in the file: a task of its own, since the model runs no Linux process. */
export const WORKLOAD_PID = 4242;

/** The id of the intel_pt event (the attr's one id, and each record's sample_id IDENTIFIER). */
const EVENT_ID = 1n;

/** What perf record's intel_pt event samples: IP, TID, TIME, CPU and IDENTIFIER, every record carrying sample_id. */
const SAMPLE_TYPE = SAMPLE.IP | SAMPLE.TID | SAMPLE.TIME | SAMPLE.CPU | SAMPLE.IDENTIFIER;

/** Pages of 4 KiB: an mmap's length is whole pages. */
const PAGE = 4096n;

/** An export: the file's bytes, and what a user should know about how perf will read it. */
export interface PerfExport {
  readonly bytes: Uint8Array;
  readonly notes: readonly string[];
}

/**
 * perf's filter parser ends a file name at a space or a comma (auxtrace.c `parse_one_filter()`):
 * with one in the image's path the filters cannot name it, so none are written.
 */
const FILTER_UNSAFE = /[ ,]/;

/** The perf.data of a run (read-run.ts). */
export function perfDataOfRun(run: RunForPerf, version: string): PerfExport {
  const notes: string[] = [];
  const ctl = IA32_RTIT_CTL.decode(run.ctl);
  const len = (BigInt(run.imageBytes) + PAGE - 1n) / PAGE * PAGE;
  let filter = perfFilterString(run.ranges, { base: run.base, size: len, file: run.imagePath });
  if (filter !== '' && FILTER_UNSAFE.test(run.imagePath)) {
    notes.push(`the run's IP filter ranges are left out: perf cannot name ${run.imagePath} in a filter (a space or a comma in the path), so a TIP.PGD after a direct branch out of a range may bind to a later branch in perf's decode`);
    filter = '';
  }
  const info = intelPtInfoOf(run.ctl, run.imageJson.timing, INTEL_PT_PMU_TYPE, filter);
  const pid = WORKLOAD_PID;
  const sid: SampleId = { pid, tid: pid, time: 0n, cpu: run.cpu, id: EVENT_ID };
  const event: PerfEvent = {
    attr: { type: INTEL_PT_PMU_TYPE, config: info.config, sampleType: SAMPLE_TYPE, flags: intelPtFlags({ user: ctl.User, kernel: ctl.OS }) },
    ids: [EVENT_ID],
    name: `intel_pt//${ctl.User ? 'u' : ''}${ctl.OS ? 'k' : ''}`,
  };
  const records = [
    auxtraceInfoRecord(intelPtPrivWords(info)),
    commRecord(pid, pid, run.scenario, sid),
    mmapRecord({ pid, tid: pid, start: run.base, len, pgoff: 0n, filename: run.imagePath }, sid),
    itraceStartRecord(pid, pid, sid),
    auxRecord(0n, BigInt(run.trace.length), sid),
    auxtraceRecord({ data: run.trace, offset: 0n, idx: 0, tid: pid, cpu: run.cpu }),
    finishedRoundRecord(),
  ];
  const cpu = run.imageJson.cpu;
  const bytes = perfDataFile([event], records, {
    hostname: hostname(),
    osrelease: release(),
    version: `ptlab ${version}`,
    arch: 'x86_64',
    nrCpus: { available: run.cpu + 1, online: run.cpu + 1 },
    cpuDesc: `ptlab model, profile ${run.imageJson.profile}, image at ${hex(run.base)}`,
    cpuid: `${cpu.vendor},${cpu.family},${cpu.model},${cpu.stepping}`,
    pmuMappings: [{ type: INTEL_PT_PMU_TYPE, name: 'intel_pt' }],
  });
  return { bytes, notes };
}
