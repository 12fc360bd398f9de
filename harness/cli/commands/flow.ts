// `ptlab flow TRACE.pt[:FROM[-TO]]|-|RUN_DIR --image IMAGE.bin@BASE [--image …] [--json] [--losses losses.json]
// [--max-insns N] [--quiet] [--stat] [--tolerate-errors]`: reconstructs the executed path from a trace and the code
// image(s) (driver/decode/flow). A run directory gives its trace, its image at image.json's base
// and its losses.json (run-dir-input.ts). A perf.data gives the AUX data of one CPU (--cpu-index),
// the files its MMAP/MMAP2 records map (under --sysroot) and the losses its AUX records flag
// (harness/perf/perf-input.ts; docs/perf.md "perf.data in"). ptxed's `--pt FILE`, `--raw FILE:BASE`, `--quiet` and
// `--stat` are taken too; its other options are refused with the reason (libipt-options.ts).
// --json prints flow JSON Lines (driver/decode/flow/record.ts), otherwise a
// readable listing; --losses turns the run directory's loss ledger into gap records. Exit 0 when
// no error record was printed, 1 when some were (0 with --tolerate-errors), 2 for bad usage or
// unreadable files.
import { FlowDecoder, type FlowLoss, type FlowStats } from '../../../driver/decode/flow/flow-decoder.js';
import { ImageSet, parseImageArg, type ImageSpec } from '../../../driver/decode/flow/image.js';
import { flowJsonLine, flowTextLine, type GapReason } from '../../../driver/decode/flow/record.js';
import { readElf, symbolize, type ElfSymbol } from '../../../driver/decode/flow/elf.js';
import { InsnListing } from '../../../driver/decode/flow/insn-listing.js';
import { writeFlowJson } from '../../../driver/decode/flow/record-out.js';
import { AsciiOut } from '../../../driver/decode/ascii-out.js';
import { PtError } from '../../../driver/base/errors.js';
import { commandArgs, parseCommandLine, usageErrorText, UsageError } from '../args.js';
import { isDirectory, runDirInput } from '../run-dir-input.js';
import { LineBatch } from '../line-batch.js';
import { isOutputError } from '../fd-sink.js';
import { byteOutput, OUT_CHUNK, type CliIo } from '../main.js';
import { InputTooLargeError, readBounded, readBoundedFile } from '../../files/read-input.js';
import { inputName, inputProblem, readChunks } from '../read-stream.js';
import { refuseLibiptOnly } from '../libipt-options.js';
import { DECODE_CONFIG_OPTIONS, decodeConfigOf, errataNote, withRunTiming, type DecodeConfig } from '../decode-config.js';
import { timeConfigOf } from '../time-column.js';
import { traceRange, type TraceRange } from '../trace-range.js';
import { RUN_FILE_MAX_BYTES } from '../../rundir/run-files.js';
import { streamName, type AuxStream } from '../../perf/aux-streams.js';
import { mappedBytes, mmapImages } from '../../perf/mmap-images.js';
import { isPerfDataFile, readPerfInput, streamChunks, type PerfInput } from '../../perf/perf-input.js';

/** Where the command writes. */
export type FlowIo = CliIo;

export const FLOW_USAGE = 'usage: ptlab flow TRACE.pt[:FROM[-TO]]|-|RUN_DIR --image IMAGE.bin@BASE [--image …] [--json] [--losses losses.json]\n' +
  '         [--elf FILE[:BASE]] [--insn [--att] [--raw-insn] [--no-inst]] [--max-insns N] [--max-records-per-byte N] [--quiet|-q] [--stat] [--tolerate-errors] [--cpu-index N] [--sysroot DIR]\n' +
  '         [--time]\n' +
  '  RUN_DIR: a run directory: its trace.pt, its image.bin at image.json\'s base, its losses.json.\n' +
  '  PERF.DATA (a perf record file of intel_pt) in place of TRACE.pt: the AUX data of one CPU (--cpu-index N\n' +
  '  chooses it when there are several), the files its MMAP/MMAP2 records map as the images unless --image or\n' +
  '  --raw name them (--sysroot DIR is put before each path, as perf\'s --symfs), and the losses its AUX\n' +
  '  records flag (TRUNCATED, PARTIAL, COLLISION) as gap records unless --losses names a ledger.\n' +
  '  :FROM-TO: the trace\'s bytes FROM to TO (offsets then count from FROM, as in ptxed).\n' +
  '  as ptxed: --pt TRACE.pt for the trace, --raw IMAGE.bin:BASE for --image IMAGE.bin@BASE; --quiet prints\n' +
  '  error records only; --stat ends with the counts of instructions, records, branches and errors.\n' +
  '  --elf FILE[:BASE]: an ELF-64\'s executable PT_LOAD segments as images (with BASE, its lowest segment there,\n' +
  '  as libipt\'s load_elf); its function symbols name the addresses of the text lines: 0x… <sym+0xoff>.\n' +
  '  --insn: every instruction, as ptxed lists them (address, disassembly; events in brackets); --att (AT&T\n' +
  '  syntax), --raw-insn (the bytes) and --no-inst (addresses only) shape it and imply it.\n' +
  '  --time: each record ends with the estimated TSC ("tsc":"0x…"; text: tsc 0x…), estimated from TSC, MTC and\n' +
  '  CYC as libipt does (docs/sdm/packets.md §13.1), with --mtc-freq, --nom-freq and --cpuid-0x15.* (a run\n' +
  '  directory gives them from image.json); none before the trace\'s first TSC.\n' +
  '  --cpu none|F/M[/S], --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N: as ptxed takes them\n' +
  '  (checked; --cpu names the CPU\'s packet-stream errata, which ptlab does not work around). Every option of\n' +
  '  ptxed, with ptlab\'s equivalent or why there is none: docs/formats/libipt-options.md\n' +
  '  BASE as ptxed reads it: 0x… is hex, digits alone are decimal. --max-insns (default 65536): the\n' +
  '  instructions walked without using a packet before the segment is given up as a runaway.\n' +
  '  --max-records-per-byte (default 64; 0: no bound): the decode stops once it printed more records than\n' +
  '  that many per byte of trace read, after the first 1048576 (a runaway decode, not a trace).\n' +
  '  exit 0: decoded without error records; 1: some (0 with --tolerate-errors); 2: bad usage or input\n';
const REASONS: readonly GapReason[] = ['stop', 'wrap', 'error', 'ovf'];
/** The CLI's runaway bound: a trace that loops without packets stops after this many instructions. */
export const DEFAULT_MAX_INSNS = 65536;
/**
 * The output bound: records per byte of trace, past the first RECORDS_FLOOR. Traces of the model run
 * at up to 9 records a byte (a TNT bit can stand for a taken jcc and the direct branches after it);
 * a fuzzed trace that runs away at every PSB reaches 130.
 */
export const DEFAULT_MAX_RECORDS_PER_BYTE = 64, RECORDS_FLOOR = 1 << 20;
/** Bytes of the trace read and decoded at a time. */
const TRACE_CHUNK = 1 << 20;

interface FlowArgs {
  /** The trace, or a run directory (resolved by flowCommand). */
  readonly trace: string;
  readonly images: readonly { readonly path: string; readonly base: bigint }[];
  /** ptxed's --elf FILE[:BASE]: ELF files whose executable PT_LOAD segments are images, and whose symbols name addresses. */
  readonly elfs: readonly { readonly path: string; readonly base?: bigint }[];
  readonly json: boolean;
  readonly losses?: string;
  readonly maxInsns: number;
  readonly maxRecordsPerByte: number;
  readonly tolerate: boolean;
  /** ptxed's --quiet: error records only. */
  readonly quiet: boolean;
  /** ptxed's --stat: the counts after the records. */
  readonly stat: boolean;
  /** The instruction listing (ptxed's output; --att, --raw-insn and --no-inst shape it and imply it). */
  readonly insn?: { readonly att: boolean; readonly rawBytes: boolean; readonly addressesOnly: boolean };
  /** ptxed's --cpu and timing options (decode-config.ts). */
  readonly config: DecodeConfig;
  /** --time: each record carries the estimated TSC. */
  readonly time: boolean;
  /** A perf.data's CPU whose AUX data is decoded. */
  readonly cpuIndex?: number;
  /** Put before the paths of a perf.data's MMAP records (perf's --symfs). */
  readonly sysroot?: string;
}

const OPTIONS = {
  ...DECODE_CONFIG_OPTIONS,
  quiet: { type: 'boolean', short: 'q' },
  insn: { type: 'boolean' },
  att: { type: 'boolean' },
  'raw-insn': { type: 'boolean' },
  'no-inst': { type: 'boolean' },
  stat: { type: 'boolean' },
  json: { type: 'boolean' },
  time: { type: 'boolean' },
  image: { type: 'string', multiple: true },
  pt: { type: 'string' },
  raw: { type: 'string', multiple: true },
  elf: { type: 'string', multiple: true },
  losses: { type: 'string' },
  'max-insns': { type: 'string' },
  'max-records-per-byte': { type: 'string' },
  'tolerate-errors': { type: 'boolean' },
  // Not --cpu: that is libipt's CPU (decode-config.ts).
  'cpu-index': { type: 'string' },
  sysroot: { type: 'string' },
} as const;

function flowArgs(argv: string[]): FlowArgs | 'help' {
  refuseLibiptOnly('ptxed', argv, (m) => new UsageError(m));
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (values.stat && values.json) throw new UsageError('--stat prints text lines, which would break the JSON Lines of --json: give one of them');
  const insnBy = (['insn', 'att', 'raw-insn', 'no-inst'] as const).find((o) => values[o] === true);
  if (insnBy !== undefined && values.json) throw new UsageError(`--${insnBy} lists instructions as text lines; --json lists the flow's records: give one of them`);
  const given = [...positionals, ...(values.pt === undefined ? [] : [values.pt])];
  if (given.length !== 1) {
    throw new UsageError(given.length === 0 ? 'missing TRACE.pt (or - for standard input, or a run directory)'
      : values.pt === undefined ? `one trace, got ${positionals.length}` : '--pt names the trace: give it or a positional TRACE.pt, not both');
  }
  const images = [
    ...(values.image ?? []).map((v) => {
      const im = parseImageArg(v);
      if (im === null) throw new UsageError(`bad --image '${v}' (want FILE@BASE: 0x… hex or decimal digits, below 2^64)`);
      return im;
    }),
    // ptxed's --raw FILE:BASE (its FILE:FROM-TO:BASE form, a part of the file, is not taken).
    ...(values.raw ?? []).map((v) => {
      const colon = v.lastIndexOf(':');
      const im = colon > 0 && !v.slice(0, colon).includes('@') ? parseImageArg(`${v.slice(0, colon)}@${v.slice(colon + 1)}`) : null;
      if (im === null || /:\d+-\d+$/.test(v.slice(0, colon))) throw new UsageError(`bad --raw '${v}' (want FILE:BASE as ptxed takes it: 0x… hex or decimal digits; a part of a file, FILE:FROM-TO:BASE, is not taken)`);
      return im;
    }),
  ];
  const elfs = (values.elf ?? []).map(elfArg);
  const maxText = values['max-insns'] ?? String(DEFAULT_MAX_INSNS);
  if (!/^[1-9][0-9]{0,9}$/.test(maxText)) throw new UsageError(`--max-insns takes a positive whole number, got '${maxText}'`);
  const perByteText = values['max-records-per-byte'] ?? String(DEFAULT_MAX_RECORDS_PER_BYTE);
  if (!/^(0|[1-9][0-9]{0,6})$/.test(perByteText)) throw new UsageError(`--max-records-per-byte takes a whole number (0: no bound), got '${perByteText}'`);
  const cpuIndex = values['cpu-index'];
  if (cpuIndex !== undefined && !/^(0|[1-9][0-9]{0,5})$/.test(cpuIndex)) throw new UsageError(`--cpu-index takes a CPU number (0, 1, …), got '${cpuIndex}'`);
  return {
    ...(cpuIndex === undefined ? {} : { cpuIndex: Number(cpuIndex) }),
    ...(values.sysroot === undefined ? {} : { sysroot: values.sysroot }),
    trace: given[0]!, images, elfs, json: values.json === true, maxInsns: Number(maxText), maxRecordsPerByte: Number(perByteText), tolerate: values['tolerate-errors'] === true,
    quiet: values.quiet === true, stat: values.stat === true, config: decodeConfigOf(values), time: values.time === true,
    ...(insnBy === undefined ? {} : { insn: { att: values.att === true, rawBytes: values['raw-insn'] === true, addressesOnly: values['no-inst'] === true } }),
    ...(values.losses === undefined ? {} : { losses: values.losses }),
  };
}

/**
 * ptxed's `--elf FILE[:BASE]`: BASE (0x… hex or decimal) when the text after the last colon is a
 * number and FILE is not itself an existing name with that suffix; otherwise all of it is FILE.
 */
function elfArg(v: string): { path: string; base?: bigint } {
  const m = /^(.+):(0x[0-9a-fA-F]+|[0-9]+)$/.exec(v);
  if (m === null) return { path: v };
  const base = BigInt(m[2]!);
  if (base >= 1n << 64n) throw new UsageError(`bad --elf '${v}': BASE must lie below 2^64`);
  return { path: m[1]!, base };
}

/** The `lost` entries of a losses.json text, or an error message. */
export function parseLosses(text: string): FlowLoss[] | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `not JSON (${(e as Error).message})`;
  }
  const lost = (doc as { lost?: unknown } | null)?.lost;
  if (!Array.isArray(lost)) return 'no "lost" array';
  const out: FlowLoss[] = [];
  for (const l of lost as unknown[]) {
    const { at, bytes, reason } = (l ?? {}) as { at?: unknown; bytes?: unknown; reason?: unknown };
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0) return `bad "at" in ${JSON.stringify(l)}`;
    if (bytes !== null && (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0)) return `bad "bytes" in ${JSON.stringify(l)}`;
    if (!REASONS.includes(reason as GapReason)) return `bad "reason" in ${JSON.stringify(l)}`;
    out.push({ at, bytes, reason: reason as GapReason });
  }
  return out;
}

/**
 * The largest code image read (a whole vmlinux is about 70 MB) and the largest losses.json (one
 * entry per loss, tens of bytes each): a run directory's own bounds. The trace is as long as it is.
 */
export const IMAGE_MAX_BYTES = RUN_FILE_MAX_BYTES['image.bin'], LOSSES_MAX_BYTES = RUN_FILE_MAX_BYTES['losses.json'];

async function readBytes(path: string, io: FlowIo, bound: { max: number; what: string }): Promise<Uint8Array | undefined> {
  try {
    return await readBounded(path, bound.max, bound.what);
  } catch (e) {
    io.err(`ptlab flow: ${e instanceof InputTooLargeError ? e.message : inputProblem(path, e) ?? `${inputName(path)}: ${(e as Error).message}`}\n`);
    return undefined;
  }
}

/** The AUX stream of a perf.data to decode: that of CPU `cpu`, or the only one; PtError('bad_config') naming the CPUs otherwise. */
function chooseStream(input: PerfInput, cpu: number | undefined): AuxStream {
  const names = input.streams.map(streamName).join(', ');
  if (cpu === undefined) {
    if (input.streams.length === 1) return input.streams[0]!;
    throw new PtError('bad_config', `${input.path} holds the AUX data of ${input.streams.length} streams (${names}): give --cpu-index N to decode one (ptlab dump shows them all)`);
  }
  const s = input.streams.find((x) => x.cpu === cpu);
  if (s === undefined) throw new PtError('bad_config', `${input.path} has no AUX data of cpu ${cpu} (its streams: ${names})`);
  return s;
}

/**
 * The code images of a perf.data's MMAP/MMAP2 records (harness/perf/mmap-images.ts), each file
 * read once within the image bound; a mapped file that cannot be read is left out with a note.
 * Undefined (after one line on stderr) when none is left.
 */
async function perfImages(input: PerfInput, sysroot: string | undefined, io: FlowIo): Promise<{ specs: ImageSpec[]; named: { path: string; base: bigint }[] } | undefined> {
  const maps = mmapImages(input.mmaps, sysroot);
  const files = new Map<string, Uint8Array | undefined>();
  const specs: ImageSpec[] = [], named: { path: string; base: bigint }[] = [];
  for (const m of maps) {
    if (!files.has(m.path)) {
      try {
        files.set(m.path, await readBoundedFile(m.path, IMAGE_MAX_BYTES, 'a code image'));
      } catch (e) {
        const why = e instanceof InputTooLargeError ? e.message : inputProblem(m.path, e) ?? `${m.path}: ${(e as Error).message}`;
        io.err(`ptlab flow: note: ${input.path} maps ${why}: its code is not in the image (--sysroot DIR finds the files under DIR)\n`);
        files.set(m.path, undefined);
      }
    }
    const file = files.get(m.path);
    if (file === undefined) continue;
    specs.push({ bytes: mappedBytes(file, m), base: m.start });
    named.push({ path: m.path, base: m.start });
  }
  if (specs.length === 0) {
    io.err(`ptlab flow: ${input.path}: its MMAP records map no file that could be read${maps.length ? '' : ' (it has none)'}: give --image FILE@BASE${maps.length ? ' or --sysroot DIR' : ''}\n`);
    return undefined;
  }
  return { specs, named };
}

/** The decode printed more records than its bound allows for the trace read so far. */
class RecordBound extends Error {
  constructor(readonly records: number, readonly bytes: number) {
    super(`more than ${records} records for ${bytes} bytes of trace`);
  }
}

/** `ptlab flow`. */
export async function flowCommand(argv: string[], io: FlowIo): Promise<number> {
  const parsed = commandArgs('flow', FLOW_USAGE, io, () => flowArgs(argv));
  if (typeof parsed === 'number') return parsed;
  let args: FlowArgs = parsed;
  // A run directory: its files, unless --image or --losses name others.
  if (await isDirectory(args.trace)) {
    let run;
    try {
      run = await runDirInput(args.trace);
    } catch (e) {
      if (!(e instanceof PtError)) throw e;
      io.err(`ptlab flow: ${e.message}\n`);
      return 2;
    }
    args = {
      ...args, trace: run.trace, images: args.images.length || args.elfs.length ? args.images : [run.image],
      ...(args.losses === undefined && run.losses ? { losses: run.losses } : {}), config: withRunTiming(args.config, run.timing),
    };
  }
  const note = errataNote('flow', args.config);
  if (note !== undefined) io.err(note);
  let input: TraceRange;
  try {
    input = await traceRange(args.trace);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`${usageErrorText('flow', e.message)}\n`);
    return 2;
  }
  let perf: { input: PerfInput; stream: AuxStream } | undefined;
  const specs: ImageSpec[] = [];
  try {
    if (await isPerfDataFile(input.path)) {
      if (input.from > 0 || input.to !== undefined) throw new UsageError(`${input.path} is a perf.data: its AUX data is decoded whole (a range FROM-TO applies to a raw trace)`);
      const perfInput = await readPerfInput(input.path);
      perf = { input: perfInput, stream: chooseStream(perfInput, args.cpuIndex) };
      if (args.images.length === 0 && args.elfs.length === 0) {
        const images = await perfImages(perfInput, args.sysroot, io);
        if (images === undefined) return 2;
        specs.push(...images.specs);
        args = { ...args, images: images.named };
      }
    } else if (args.cpuIndex !== undefined || args.sysroot !== undefined) {
      throw new UsageError(`--${args.cpuIndex !== undefined ? 'cpu-index' : 'sysroot'} goes with a perf.data; ${inputName(input.path)} is a raw trace`);
    }
  } catch (e) {
    const problem = e instanceof UsageError ? undefined : inputProblem(input.path, e);
    if (e instanceof UsageError) io.err(`${usageErrorText('flow', e.message)}\n`);
    else if (problem === undefined) throw e;
    else io.err(`ptlab flow: ${problem}\n`);
    return 2;
  }
  if (args.images.length === 0 && args.elfs.length === 0) {
    io.err(`${usageErrorText('flow', 'missing --image FILE@BASE (or give a run directory: its image.json names the base)')}\n`);
    return 2;
  }
  if (specs.length === 0) {
    for (const im of args.images) {
      const bytes = await readBytes(im.path, io, { max: IMAGE_MAX_BYTES, what: 'a code image' });
      if (bytes === undefined) return 2;
      specs.push({ bytes, base: im.base });
    }
  }
  // ELF files: their executable segments are images too, their symbols name the addresses printed.
  const symbols: ElfSymbol[] = [];
  for (const e of args.elfs) {
    const bytes = await readBytes(e.path, io, { max: IMAGE_MAX_BYTES, what: 'an ELF file' });
    if (bytes === undefined) return 2;
    let elf;
    try {
      elf = readElf(bytes, e.path, e.base);
    } catch (err) {
      if (!(err instanceof PtError)) throw err;
      io.err(`ptlab flow: ${err.message}\n`);
      return 2;
    }
    specs.push(...elf.segments);
    symbols.push(...elf.symbols);
  }
  symbols.sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0));
  const symbol = symbols.length === 0 ? undefined : (lo: number, hi: number): string | undefined => symbolize(symbols, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
  // --insn: the instructions between the records, disassembled (insn-listing.ts).
  const listing = args.insn === undefined ? undefined
    : new InsnListing(specs, { ...args.insn, maxSteps: args.maxInsns, ...(symbols.length === 0 ? {} : { symbol: (ip: bigint) => symbolize(symbols, ip) }) });
  // A perf.data's AUX flags are its ledger (a --losses file wins).
  let ledger: FlowLoss[] = perf === undefined || args.losses !== undefined ? [] : perf.stream.losses.map((l) => ({ at: l.at, bytes: null, reason: l.reason }));
  if (args.losses !== undefined) {
    const text = await readBytes(args.losses, io, { max: LOSSES_MAX_BYTES, what: 'a losses.json' });
    if (text === undefined) return 2;
    const parsed = parseLosses(new TextDecoder().decode(text));
    if (typeof parsed === 'string') {
      io.err(`ptlab flow: ${args.losses}: ${parsed}\n`);
      return 2;
    }
    ledger = parsed;
  }
  const images = new ImageSet(specs);
  // JSON lines are built as bytes (record-out.ts: the same lines as flowJsonLine); the listing as text.
  const json = args.json ? new AsciiOut(byteOutput(io), OUT_CHUNK) : undefined;
  const batch = new LineBatch((s) => io.out(s));
  const pushLine = (line: string): void => batch.push(line), ignoreLine = (): void => undefined;
  const errors = new Map<string, number>();
  // The trace is read and decoded a chunk at a time (memory: a chunk and the decoder's state).
  let read = 0, records = 0;
  const perByte = args.maxRecordsPerByte;
  const decoder = new FlowDecoder(images, { ledger, maxSteps: args.maxInsns, ...(args.time ? { time: timeConfigOf(args.config) } : {}) });
  let stats: FlowStats | undefined;
  let bounded: RecordBound | undefined;
  try {
    decoder.begin((r) => {
      if (perByte > 0 && ++records > RECORDS_FLOOR + perByte * read) throw new RecordBound(records - 1, read);
      if (r.kind === 'error') errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
      else if (args.quiet) { listing?.record(r, ignoreLine); return; } // counted for --stat, not printed
      if (listing) listing.record(r, pushLine);
      // With --elf's symbols a JSON line goes the string way (flowJsonLine names them); without, as bytes.
      // So does a line with its time (--time).
      else if (json) { if (symbol || args.time) batch.push(flowJsonLine(r, symbol)); else writeFlowJson(json, r); } else batch.push(flowTextLine(r, symbol));
    });
    for await (const chunk of perf === undefined ? readChunks(input.path, TRACE_CHUNK, input) : streamChunks(perf.input, perf.stream)) {
      read += chunk.length;
      decoder.push(chunk);
    }
    stats = decoder.end();
  } catch (e) {
    const problem = e instanceof RecordBound || isOutputError(e) ? undefined : inputProblem(input.path, e);
    if (e instanceof RecordBound) bounded = e;
    else if (problem === undefined) throw e;
    else {
      json?.flush();
      batch.flush();
      io.err(`ptlab flow: ${problem}\n`);
      return 2;
    }
  } finally {
    images.dispose();
    listing?.dispose();
  }
  json?.flush();
  batch.flush();
  if (bounded) {
    io.err(`ptlab flow: stopped after ${bounded.records} records for ${bounded.bytes} bytes of trace read: more than ${perByte} records a byte past the first ${RECORDS_FLOOR} is a decode that runs away, not a trace (--max-records-per-byte N raises the bound, 0 lifts it)\n`);
    return 1;
  }
  stats = stats!;
  // ptxed's --stat, on stdout after the records (even with --quiet, as in ptxed).
  if (args.stat) io.out(`instructions ${stats.instructions}\nrecords      ${stats.records}\nbranches     ${stats.branches}\nerrors       ${stats.errors}\n${listing ? `listed       ${listing.count}\n` : ''}`);
  if (stats.instructions === 0 && (errors.get('nomap') ?? 0) > 0) {
    const bases = args.images.map((im) => `${im.path}@0x${im.base.toString(16)}`).join(', ');
    io.err(`ptlab flow: no instruction of the trace lies in the image(s) (${bases}): is the base right? (0x… is hex, digits alone are decimal)\n`);
  }
  if (stats.errors === 0 || args.tolerate) return 0;
  const kinds = [...errors].map(([name, n]) => `${n} ${name}`).join(', ');
  io.err(`ptlab flow: ${inputName(input.path)}: ${stats.errors} error record${stats.errors === 1 ? '' : 's'} (${kinds}); --tolerate-errors exits 0\n`);
  return 1;
}
