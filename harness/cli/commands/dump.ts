// `ptlab dump FILE.pt|-|RUN_DIR [--json|--stats] [--tolerate-errors]`: decode a raw Intel PT stream
// (a run directory's trace.pt when given one).
// Default: ptdump-like text; --json: packet JSON Lines (driver/decode/json.ts); --stats: counts per
// packet type, errors, bytes and throughput. The input is read as a stream (a file, a FIFO,
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
import { PtError } from '../../../driver/base/errors.js';
import { commandArgs, parseCommandLine, UsageError } from '../args.js';
import { isDirectory, runDirInput } from '../run-dir-input.js';
import { isOutputError } from '../fd-sink.js';
import { LineBatch } from '../line-batch.js';
import { byteOutput, OUT_CHUNK, type CliIo } from '../main.js';
import { inputName, inputProblem, readChunks } from '../read-stream.js';

/** Where the command writes. */
export type DumpIo = CliIo;

export const DUMP_USAGE = 'usage: ptlab dump FILE.pt|-|RUN_DIR [--json|--stats [--time]] [--tolerate-errors]\n' +
  '  FILE.pt may be a FIFO or /dev/stdin; - reads standard input; RUN_DIR: a run directory\'s trace.pt.\n' +
  '  --stats: packets per kind on stdout (two runs on one trace print the same); --time: seconds, MB/s on stderr\n' +
  '  exit 0: decoded without errors; 1: the stream had decode errors (0 with --tolerate-errors);\n' +
  '  2: bad usage or unreadable input\n';
const CHUNK = 8 << 20;

type Mode = 'text' | 'json' | 'stats';

const OPTIONS = {
  json: { type: 'boolean' },
  stats: { type: 'boolean' },
  'tolerate-errors': { type: 'boolean' },
  time: { type: 'boolean' },
} as const;

interface DumpArgs { readonly file: string; readonly mode: Mode; readonly tolerate: boolean; readonly time: boolean }

function dumpArgs(argv: string[]): DumpArgs | 'help' {
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (values.json && values.stats) throw new UsageError('--json and --stats exclude each other');
  if (values.time && !values.stats) throw new UsageError('--time goes with --stats');
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one input, got ${positionals.length}` : 'missing FILE.pt (or - for standard input)');
  return { file: positionals[0]!, mode: values.json ? 'json' : values.stats ? 'stats' : 'text', tolerate: values['tolerate-errors'] === true, time: values.time === true };
}

/**
 * Decodes the stream `path` chunk by chunk: `drain` takes every record the decoder can give from
 * what it has (record by record, or in batches); returns the bytes read.
 */
async function decodeStream(path: string, drain: (dec: PacketDecoder) => void): Promise<number> {
  let dec: PacketDecoder | undefined;
  let pending = new Uint8Array(0);
  let bytes = 0;
  const run = (buf: Uint8Array, final: boolean): void => {
    if (dec === undefined) dec = new PacketDecoder(buf, { final });
    else dec.resume(buf, { final });
    drain(dec);
    pending = final ? new Uint8Array(0) : buf.slice(dec.consumed);
  };
  for await (const chunk of readChunks(path, CHUNK)) {
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

/** A drain that hands every record to `each`. */
const recordByRecord = (each: (rec: PacketRecord) => void) => (dec: PacketDecoder): void => {
  const rec = dec.record;
  while (dec.next()) each(rec);
};

/** Runs `ptlab dump`; returns the exit code. */
export async function dumpCommand(argv: string[], io: DumpIo): Promise<number> {
  const args = commandArgs('dump', DUMP_USAGE, io, () => dumpArgs(argv));
  if (typeof args === 'number') return args;
  const { mode, tolerate, time } = args;
  let file = args.file;
  // A run directory: its trace.pt.
  if (await isDirectory(file)) {
    try {
      file = (await runDirInput(file)).trace;
    } catch (e) {
      if (!(e instanceof PtError)) throw e;
      io.err(`ptlab dump: ${e.message}\n`);
      return 2;
    }
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
  const textOut = mode === 'text' ? new TextOut(bytesOut!) : undefined;
  const drain = mode === 'json' ? recordByRecord((r) => { if (r.kind === PacketKind.error) countError(r.error, r.offset); writePacketJson(bytesOut!, r); })
    : mode === 'text' ? recordByRecord((r) => { if (r.kind === PacketKind.error) countError(r.error, r.offset); textOut!.write(r); })
    : countAll;

  const t0 = performance.now();
  let bytes: number;
  try {
    bytes = await decodeStream(file, drain);
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
