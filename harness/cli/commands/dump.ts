// `ptlab dump FILE.pt[:FROM[-TO]]|-|RUN_DIR [--json|--stats] [ptdump's options] [--tolerate-errors]`:
// decode a raw Intel PT stream (a run directory's trace.pt when given one), or the AUX data of a
// perf.data, one stream per CPU (harness/perf/perf-input.ts; docs/perf.md "perf.data in").
// Default: ptdump-like text; --json: packet JSON Lines (driver/decode/json.ts); --stats: counts per
// packet type, errors, bytes and throughput. ptdump's options that choose the lines printed
// (--no-pad, --no-timing, --no-cyc, --quiet, --no-offset, --raw, --no-sync) and its time columns
// (--time, --tcal, --time-delta, --no-tcal: time-column.ts) are taken as ptdump takes them; its
// others are refused with the reason (libipt-options.ts). The input is read as a stream (a file, a FIFO,
// /dev/stdin, or `-`), decoded chunk by chunk with the decoder's `final:false` carry-over, so
// neither a huge file nor a pipe is ever held whole; output is batched and written blocking
// (FdSink), so memory stays bounded whatever reads it.
//
// Exit 0 when the stream decoded without an error record, 1 when it had some (unless
// --tolerate-errors), 2 for bad usage or an unreadable input.
import { PacketDecoder } from '../../../driver/decode/decoder.js';
import { AsciiOut } from '../../../driver/decode/ascii-out.js';
import { writePacketJson } from '../../../driver/decode/json-out.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from '../../../driver/decode/record.js';
import { TextOut } from '../../../driver/decode/text-out.js';
import { TextFormatter } from '../../../driver/decode/text.js';
import { PtError } from '../../../driver/base/errors.js';
import { commandArgs, parseCommandLine, usageErrorText, UsageError } from '../args.js';
import { refuseLibiptOnly } from '../libipt-options.js';
import { TimeColumn, type TimeColumnOptions } from '../time-column.js';
import { DECODE_CONFIG_OPTIONS, decodeConfigOf, errataNote, withRunTiming, type DecodeConfig } from '../decode-config.js';
import { traceRange, type TraceRange } from '../trace-range.js';
import { isDirectory, runDirInput } from '../run-dir-input.js';
import { isOutputError } from '../fd-sink.js';
import { LineBatch } from '../line-batch.js';
import { byteOutput, OUT_CHUNK, type CliIo } from '../main.js';
import { inputName, inputProblem, readChunks } from '../read-stream.js';
import { lossLine, streamName } from '../../perf/aux-streams.js';
import { isPerfDataFile, readPerfInput, streamChunks, type PerfInput } from '../../perf/perf-input.js';

/** Where the command writes. */
export type DumpIo = CliIo;

export const DUMP_USAGE = 'usage: ptlab dump FILE.pt[:FROM[-TO]]|-|RUN_DIR|PERF.DATA [--json|--stats [--time]] [--tolerate-errors]\n' +
  '         [--no-pad] [--no-timing] [--no-cyc] [--quiet] [--no-offset] [--raw] [--no-sync]\n' +
  '         [--time] [--tcal] [--time-delta] [--no-tcal]\n' +
  '  FILE.pt may be a FIFO or /dev/stdin; - reads standard input; RUN_DIR: a run directory\'s trace.pt;\n' +
  '  PERF.DATA (a perf record file of intel_pt): its AUX data, one stream per CPU, each after a line\n' +
  '  "# cpu N: B bytes of AUX data" ({"stream":"aux",…} with --json); AUX records flagged TRUNCATED, PARTIAL\n' +
  '  or COLLISION are reported on stderr as losses (docs/perf.md "perf.data in").\n' +
  '  :FROM-TO: its bytes FROM to TO (offsets then count from FROM, as in ptdump).\n' +
  '  --stats: packets per kind on stdout (two runs on one trace print the same); --time: seconds, MB/s on stderr\n' +
  '  as ptdump: --no-pad, --no-timing (TSC, CBR, TMA, MTC, CYC), --no-cyc leave those packets out;\n' +
  '  --quiet prints error records only; --no-offset, --raw (packet bytes): text columns; --no-sync starts\n' +
  '  at the first byte, not the first PSB. Last IP and the execution mode are always shown.\n' +
  '  --time (text): the estimated TSC on timing packets; --tcal: the cycle-to-TSC ratio; --time-delta: as\n' +
  '  changes; --no-tcal: no calibration (CYCs are not converted). A run directory gives the timing options\n' +
  '  from its image.json (docs/sdm/packets.md §13.1)\n' +
  '  --cpu none|F/M[/S], --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N: as ptdump takes them\n' +
  '  (checked; --cpu names the CPU\'s packet-stream errata, which ptlab does not work around). Every option of\n' +
  '  ptdump, with ptlab\'s equivalent or why there is none: docs/formats/libipt-options.md\n' +
  '  exit 0: decoded without errors; 1: the stream had decode errors (0 with --tolerate-errors);\n' +
  '  2: bad usage or unreadable input\n';
const CHUNK = 8 << 20;

type Mode = 'text' | 'json' | 'stats';

const OPTIONS = {
  ...DECODE_CONFIG_OPTIONS,
  json: { type: 'boolean' },
  stats: { type: 'boolean' },
  'tolerate-errors': { type: 'boolean' },
  time: { type: 'boolean' },
  'no-pad': { type: 'boolean' },
  'no-timing': { type: 'boolean' },
  'no-cyc': { type: 'boolean' },
  quiet: { type: 'boolean' },
  'no-offset': { type: 'boolean' },
  raw: { type: 'boolean' },
  'no-sync': { type: 'boolean' },
  lastip: { type: 'boolean' },
  'exec-mode': { type: 'boolean' },
  tcal: { type: 'boolean' },
  'time-delta': { type: 'boolean' },
  'no-tcal': { type: 'boolean' },
} as const;

/** ptdump's options that leave packets out of the lines printed, and the kinds each leaves out. */
const LEAVE_OUT = {
  'no-pad': ['pad'],
  'no-timing': ['tsc', 'cbr', 'tma', 'mtc', 'cyc'],
  'no-cyc': ['cyc'],
} as const satisfies Record<string, readonly (keyof typeof PacketKind)[]>;

interface DumpArgs {
  readonly file: string;
  readonly mode: Mode;
  readonly tolerate: boolean;
  readonly time: boolean;
  /** Kinds not printed (ptdump's --no-pad, --no-timing, --no-cyc, --quiet): 1 at a left-out kind; undefined: every kind. */
  readonly hidden?: Uint8Array;
  /** The text line's columns (ptdump's --no-offset, --raw). */
  readonly columns: { readonly offset: boolean; readonly raw: boolean };
  /** ptdump's --no-sync: buf[0] is a packet boundary. */
  readonly synced: boolean;
  /** ptdump's --cpu and timing options (decode-config.ts). */
  readonly config: DecodeConfig;
  /** ptdump's time columns; undefined when none is asked for. */
  readonly timeColumn?: TimeColumnOptions;
}

function dumpArgs(argv: string[]): DumpArgs | 'help' {
  refuseLibiptOnly('ptdump', argv, (m) => new UsageError(m));
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (values.json && values.stats) throw new UsageError('--json and --stats exclude each other');
  // With --stats, --time is ptlab's own (the decode's throughput); without, ptdump's estimated TSC.
  const timeColumn = !values.stats && (values.time === true || values.tcal === true);
  const timeOnly = (['tcal', 'time-delta', 'no-tcal'] as const).find((o) => values[o] === true);
  if (values.stats && timeOnly) throw new UsageError(`--${timeOnly} is about ptdump's time columns; --stats prints counts (its --time: the throughput)`);
  if (values.json && (timeColumn || timeOnly)) throw new UsageError(`--${timeColumn ? (values.time ? 'time' : 'tcal') : timeOnly} is a column of the text lines; JSON records carry the timing packets' payloads`);
  if (values['time-delta'] && !timeColumn) throw new UsageError('--time-delta shows --time or --tcal as changes: give one of them');
  const chosen = (['no-pad', 'no-timing', 'no-cyc', 'quiet', 'no-offset', 'raw'] as const).filter((o) => values[o] === true);
  if (values.stats && chosen.length) throw new UsageError(`--${chosen[0]} chooses the lines printed; --stats prints counts of every packet`);
  const textOnly = chosen.find((o) => o === 'no-offset' || o === 'raw');
  if (values.json && textOnly) throw new UsageError(`--${textOnly} is a column of the text lines; every JSON record has its "off" and "size"`);
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one input, got ${positionals.length}` : 'missing FILE.pt (or - for standard input)');
  let hidden: Uint8Array | undefined;
  const hide = (kinds: readonly (keyof typeof PacketKind)[]): void => { hidden ??= new Uint8Array(64); for (const k of kinds) hidden[PacketKind[k]] = 1; };
  for (const [option, kinds] of Object.entries(LEAVE_OUT)) if (values[option as keyof typeof LEAVE_OUT] === true) hide(kinds);
  if (values.quiet === true) hide((Object.keys(PacketKind) as (keyof typeof PacketKind)[]).filter((k) => k !== 'error'));
  return {
    file: positionals[0]!, mode: values.json ? 'json' : values.stats ? 'stats' : 'text', tolerate: values['tolerate-errors'] === true, time: values.time === true,
    ...(hidden === undefined ? {} : { hidden }), columns: { offset: values['no-offset'] !== true, raw: values.raw === true }, synced: values['no-sync'] === true,
    config: decodeConfigOf(values),
    ...(timeColumn ? { timeColumn: { time: values.time === true, tcal: values.tcal === true, delta: values['time-delta'] === true, noTcal: values['no-tcal'] === true, noCyc: values['no-cyc'] === true } } : {}),
  };
}

/** The bytes being decoded and the stream offset of their first: a record's bytes are `buf[offset - base …]`. */
interface Window { buf: Uint8Array; base: number }

/**
 * Decodes the stream of `chunks` chunk by chunk: `drain` takes every record the decoder can give from
 * what it has (record by record, or in batches), with the window the records lie in; returns the
 * bytes read.
 */
async function decodeStream(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, synced: boolean, drain: (dec: PacketDecoder, at: Window) => void): Promise<number> {
  let dec: PacketDecoder | undefined;
  let pending = new Uint8Array(0);
  let bytes = 0;
  const at: Window = { buf: pending, base: 0 };
  const run = (buf: Uint8Array, final: boolean): void => {
    if (dec === undefined) dec = new PacketDecoder(buf, { final, synced });
    else dec.resume(buf, { final });
    at.buf = buf;
    drain(dec, at);
    at.base += final ? buf.length : dec.consumed;
    pending = final ? new Uint8Array(0) : buf.slice(dec.consumed);
  };
  for await (const chunk of chunks) {
    bytes += chunk.length;
    if (pending.length === 0) { run(chunk, false); continue; }
    const buf = new Uint8Array(pending.length + chunk.length);
    buf.set(pending, 0);
    buf.set(chunk, pending.length);
    run(buf, false);
  }
  run(pending, true);
  return bytes;
}

/** The hex of a record's bytes as ptdump's --raw shows them, padded to its column (16 bytes). */
function rawHex(rec: PacketRecord, at: Window): string {
  if (rec.size === 0) return ''.padEnd(32);
  const from = rec.offset - at.base;
  return Buffer.from(at.buf.subarray(from, from + rec.size)).toString('hex').padEnd(32);
}

/** Where a line's tracking column starts (text.ts: offset, two spaces, the name in 10, the payload in 28). */
const TRACKING_COLUMN = 16 + 2 + 10 + 28;

/** TextFormatter's line with ptdump's --no-offset and --raw columns, and a time column (time-column.ts). */
function columnLine(line: string, rec: PacketRecord, columns: DumpArgs['columns'], at: Window, time?: string): string {
  const full = time === undefined ? line : `${line.padEnd(TRACKING_COLUMN)}${time}`;
  const offset = full.slice(0, 16), rest = full.slice(18);
  return [...(columns.offset ? [offset] : []), ...(columns.raw ? [rawHex(rec, at)] : []), rest].join('  ');
}

/** Runs `ptlab dump`; returns the exit code. */
export async function dumpCommand(argv: string[], io: DumpIo): Promise<number> {
  const args = commandArgs('dump', DUMP_USAGE, io, () => dumpArgs(argv));
  if (typeof args === 'number') return args;
  const { mode, tolerate, time, hidden, columns, synced } = args;
  let config = args.config;
  const note = errataNote('dump', args.config);
  if (note !== undefined) io.err(note);
  let input: TraceRange;
  try {
    // A run directory: its trace.pt.
    if (await isDirectory(args.file)) {
      const run = await runDirInput(args.file);
      input = { path: run.trace, from: 0 };
      // The run's timing parameters, unless given (image.json "timing"; docs/sdm/packets.md §13.1).
      config = withRunTiming(config, run.timing);
    } else {
      input = await traceRange(args.file);
    }
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(e instanceof UsageError ? `${usageErrorText('dump', e.message)}\n` : `ptlab dump: ${e.message}\n`);
    return 2;
  }
  const file = input.path;
  let perf: PerfInput | undefined;
  try {
    // A perf.data (its magic at offset 0): its AUX data, read whole within a bound, in place of a raw trace.
    if (await isPerfDataFile(file)) {
      if (input.from > 0 || input.to !== undefined) throw new UsageError(`${file} is a perf.data: its AUX data is decoded whole (a range FROM-TO applies to a raw trace)`);
      perf = await readPerfInput(file);
    }
  } catch (e) {
    const problem = e instanceof UsageError ? undefined : inputProblem(file, e);
    if (e instanceof UsageError) io.err(`${usageErrorText('dump', e.message)}\n`);
    else if (problem === undefined) throw e;
    else io.err(`ptlab dump: ${problem}\n`);
    return 2;
  }
  const lines = new LineBatch((s) => io.out(s));
  const emit = (line: string): void => lines.push(line);
  const flush = (): void => { bytesOut?.flush(); lines.flush(); };

  const counts = new Float64Array(64);
  const errors = new Map<string, number>();
  let firstError: number | undefined;
  /** One decode error (its DecodeError code) at trace offset `offset`. */
  const countError = (code: number, offset: number): void => {
    const name = ERROR_NAMES[code] ?? 'error';
    errors.set(name, (errors.get(name) ?? 0) + 1);
    firstError ??= offset;
  };
  // --stats needs kinds only: the decoder counts them without a record or a column per packet.
  const countAll = (dec: PacketDecoder): void => dec.countPackets(counts, countError);
  // JSON and text lines are built as bytes (json-out.ts, text-out.ts: the same lines as packetJsonLine and TextFormatter).
  const bytesOut = mode === 'stats' ? undefined : new AsciiOut(byteOutput(io), OUT_CHUNK);
  // Each stream (each CPU of a perf.data) starts with its own Last IP: new writers per stream.
  const newTextOut = (): TextOut | undefined => (mode === 'text' ? new TextOut(bytesOut!) : undefined);
  // ptdump's columns: its own lines, from TextFormatter (the rare case, so not the fast path).
  const newColumned = (): TextFormatter | undefined => (mode === 'text' && (!columns.offset || columns.raw || args.timeColumn) ? new TextFormatter() : undefined);
  let textOut = newTextOut(), columned = newColumned();
  const times = args.timeColumn === undefined ? undefined : new TimeColumn(config, args.timeColumn);
  const writeText: (r: PacketRecord, at: Window) => void = columned === undefined ? (r) => textOut!.write(r)
      : (r, at) => { bytesOut!.line(columnLine(columned!.line(r), r, columns, at, times?.after(r))); };
  const write: (r: PacketRecord, at: Window) => void = mode === 'json' ? (r) => writePacketJson(bytesOut!, r) : writeText;
  const drain = mode === 'stats' ? countAll : (dec: PacketDecoder, at: Window): void => {
    const rec = dec.record;
    while (dec.next()) {
      if (rec.kind === PacketKind.error) countError(rec.error, rec.offset);
      // A left-out packet still goes through Last IP (TextFormatter feeds it): ptdump tracks every packet.
      if (hidden !== undefined && hidden[rec.kind] === 1) { if (columned) { columned.lastIp.feed(rec); times?.after(rec); } else if (textOut) textOut.skip(rec); continue; }
      write(rec, at);
    }
  };

  const t0 = performance.now();
  let bytes = 0;
  try {
    if (perf === undefined) bytes = await decodeStream(readChunks(input.path, CHUNK, input), synced, drain);
    else {
      for (const s of perf.streams) {
        // The stream's line, then its packets, offsets counted from its first byte (docs/formats/text.md).
        bytesOut?.line(mode === 'json' ? `{"stream":"aux","cpu":${s.cpu},"tid":${s.tid},"bytes":${s.bytes}}` : `# ${streamName(s)}: ${s.bytes} bytes of AUX data`);
        for (const l of s.losses) io.err(`ptlab dump: ${file}: ${lossLine(s, l)}\n`);
        textOut = newTextOut();
        columned = newColumned();
        times?.restart();
        bytes += await decodeStream(streamChunks(perf, s), synced, drain);
      }
    }
  } catch (e) {
    // Only the input's errors are ours to report; a closed output ends the command (ptlab.ts).
    const problem = isOutputError(e) ? undefined : inputProblem(file, e);
    if (problem === undefined) throw e;
    flush();
    io.err(`ptlab dump: ${problem}\n`);
    return 2;
  }
  const seconds = (performance.now() - t0) / 1000;
  const errs = [...errors.values()].reduce((a, b) => a + b, 0);
  if (mode === 'stats') {
    let packets = 0;
    for (let k = 1; k < counts.length; k++) {
      if (counts[k]! > 0) emit(`${packetName(k).padEnd(10)} ${counts[k]}`);
      packets += counts[k]!;
    }
    for (const [name, n] of errors) emit(`${`error ${name}`.padEnd(10)} ${n}`);
    emit(`packets    ${packets}`);
    emit(`errors     ${errs}`);
    emit(`bytes      ${bytes}`);
    // Timings differ run to run: on stderr, and only when asked, so that stdout compares equal.
    if (time) {
      io.err(`seconds    ${seconds.toFixed(3)}\nMB/s       ${seconds > 0 ? (bytes / 1e6 / seconds).toFixed(1) : 'inf'}\n` +
        `Mpackets/s ${seconds > 0 ? ((packets + errs) / 1e6 / seconds).toFixed(2) : 'inf'}\n`);
    }
  }
  flush();
  if (errs === 0 || tolerate) return 0;
  // The decoder starts at the first PSB (docs/sdm/packets.md §8 "PSB+"): one eos at offset 0
  // and nothing else is a stream in which it found none (docs/formats/packet-json.md).
  if (errs === 1 && errors.get('eos') === 1 && firstError === 0) {
    io.err(`ptlab dump: ${inputName(file)}: no PSB: not a PT stream, or it starts mid-packet (decoding starts at a PSB); --tolerate-errors exits 0\n`);
    return 1;
  }
  const kinds = [...errors].map(([name, n]) => `${n} ${name}`).join(', ');
  io.err(`ptlab dump: ${inputName(file)}: ${errs} decode error${errs === 1 ? '' : 's'} (${kinds}; the first at offset ${firstError}); --tolerate-errors exits 0\n`);
  return 1;
}
