// The facts of a run directory that a perf.data export needs (docs/design.md "The run directory"):
// the trace, the code image and where it was loaded, the CPU and timing of image.json, and the
// IA32_RTIT_CTL value that turned tracing on, from the transcript of every MSR write.
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PtError } from '../../driver/base/errors.js';
import { IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import { rangeConfigs, type AddressRange } from './address-filters.js';
import { parseTranscriptLine } from '../rundir/parse-transcript.js';
import { readResultJson } from '../rundir/read-result.js';
import { readRunFile } from '../rundir/read-run-file.js';
import { RUN_FILES } from '../rundir/run-files.js';
import type { ImageJson } from '../rundir/image-json.js';

/** What the export reads from one run directory. */
export interface RunForPerf {
  readonly dir: string;
  readonly scenario: string;
  readonly trace: Uint8Array;
  /** The absolute path of image.bin: the file PERF_RECORD_MMAP names, which perf reads the code from. */
  readonly imagePath: string;
  readonly imageBytes: number;
  readonly base: bigint;
  readonly imageJson: ImageJson;
  /** The first IA32_RTIT_CTL write with TraceEn=1, and the CPU it was written on. */
  readonly ctl: bigint;
  readonly cpu: number;
  /** The ranges that write enabled (ADDRn_CFG ≠ 0), with the ADDRn_A/B last written before it. */
  readonly ranges: readonly AddressRange[];
}

const HEX = /^0x[0-9a-f]{1,16}$/;

/** The MSRs read from the transcript: IA32_RTIT_CTL and the range bounds, as transcript.jsonl spells them. */
const msrName = (m: { readonly address: number }): string => `0x${m.address.toString(16)}`;

/**
 * The first write of IA32_RTIT_CTL that sets TraceEn, from transcript.jsonl's text: a WRMSR, or an
 * XRSTORS whose PT state component holds it (docs/sdm/xsave.md §3: TraceEn is the last thing
 * XRSTORS changes, after the ranges). With it, the ranges it enables and their bounds as last
 * written before it, by WRMSR or in an XRSTORS area (0 when never written). A faulting write
 * changed nothing and is passed over.
 */
export function enablingCtl(transcript: string): { readonly ctl: bigint; readonly cpu: number; readonly ranges: AddressRange[] } | undefined {
  const ctlMsr = msrName(IA32_RTIT_CTL);
  const bounds = new Map<string, bigint>([...IA32_RTIT_ADDR_A, ...IA32_RTIT_ADDR_B].map((m) => [m.name, 0n]));
  const byAddress = new Map([...IA32_RTIT_ADDR_A, ...IA32_RTIT_ADDR_B].map((m) => [msrName(m), m.name]));
  for (const line of transcript.split('\n')) {
    if (!line.includes('"wrmsr"') && !line.includes('"xrstors"')) continue;
    const f = parseTranscriptLine(line);
    if (f.fault !== undefined) continue;
    let ctl: bigint | undefined;
    if (f.op === 'wrmsr' && typeof f.msr === 'string' && typeof f.value === 'string' && HEX.test(f.value)) {
      const name = byAddress.get(f.msr);
      if (name !== undefined) bounds.set(name, BigInt(f.value));
      if (f.msr === ctlMsr) ctl = BigInt(f.value);
    } else if (f.op === 'xrstors' && f.area !== null && typeof f.area === 'object') {
      const area = f.area as Record<string, unknown>;
      for (const name of bounds.keys()) {
        const v = area[name];
        if (typeof v === 'string' && HEX.test(v)) bounds.set(name, BigInt(v));
      }
      const v = area[IA32_RTIT_CTL.name];
      if (typeof v === 'string' && HEX.test(v)) ctl = BigInt(v);
    }
    if (ctl === undefined || !IA32_RTIT_CTL.decode(ctl).TraceEn) continue;
    const ranges = rangeConfigs(ctl).flatMap((cfg, n) => cfg === 0 ? [] : [{
      n, cfg, a: bounds.get(IA32_RTIT_ADDR_A[n]!.name)!, b: bounds.get(IA32_RTIT_ADDR_B[n]!.name)!,
    }]);
    return { ctl, cpu: typeof f.cpu === 'number' ? f.cpu : 0, ranges };
  }
  return undefined;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() === true;
}

/** A run file's bytes; PtError('bad_config') naming the run directory when it is missing. */
async function runFile(dir: string, file: (typeof RUN_FILES)[keyof typeof RUN_FILES], why: string): Promise<Buffer> {
  try {
    return await readRunFile(dir, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new PtError('bad_config', `${dir}: a run directory without ${file}: ${why}`);
    throw e;
  }
}

/**
 * The export's inputs of run directory `dir`. PtError('bad_config') with one line when `dir` is
 * not a run directory (no result.json), holds no trace (a skipped run), or lacks image.json,
 * image.bin or the transcript's enabling write.
 */
export async function readRunForPerf(dir: string): Promise<RunForPerf> {
  const result = await readResultJson(dir);
  if (!(await isFile(join(dir, RUN_FILES.trace)))) {
    throw new PtError('bad_config', `${dir}: a run directory without ${RUN_FILES.trace}: only a run that traced can be exported (a skipped run has none)`);
  }
  let imageJson: ImageJson;
  const imageText = (await runFile(dir, RUN_FILES.imageJson, 'it says where the code was loaded')).toString('utf8');
  try {
    imageJson = JSON.parse(imageText) as ImageJson;
  } catch (e) {
    throw new PtError('bad_config', `${join(dir, RUN_FILES.imageJson)}: not JSON (${(e as Error).message})`);
  }
  if (typeof imageJson?.base !== 'string' || !HEX.test(imageJson.base)) throw new PtError('bad_config', `${join(dir, RUN_FILES.imageJson)}: its "base" is not a hex address`);
  const imagePath = resolve(dir, RUN_FILES.image);
  const image = await stat(imagePath).catch(() => undefined);
  if (!image?.isFile()) throw new PtError('bad_config', `${dir}: a run directory without ${RUN_FILES.image}: perf reads the traced code from it`);
  const transcript = (await runFile(dir, RUN_FILES.transcript, 'its IA32_RTIT_CTL writes say which packets were on')).toString('utf8');
  const on = enablingCtl(transcript);
  if (on === undefined) throw new PtError('bad_config', `${join(dir, RUN_FILES.transcript)}: no write of IA32_RTIT_CTL (WRMSR or XRSTORS) sets TraceEn: the run never traced`);
  const trace = await runFile(dir, RUN_FILES.trace, 'the trace');
  return {
    dir, scenario: result.scenario, trace, imagePath, imageBytes: image.size, base: BigInt(imageJson.base), imageJson, ctl: on.ctl, cpu: on.cpu, ranges: on.ranges,
  };
}
