// `ptlab dump FILE.pt [--json|--stats]`: decode a raw Intel PT stream.
// Default: ptdump-like text; --json: packet JSON Lines (spec/packet-json.md);
// --stats: counts per packet type, errors, bytes and throughput. The file is
// read in chunks with the decoder's `final:false` carry-over, so a huge file is
// never loaded whole; output is batched.
import { open } from 'node:fs/promises';
import { PacketDecoder } from '../../../driver/decode/decoder.js';
import { packetJsonLine } from '../../../driver/decode/json.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from '../../../driver/decode/record.js';
import { TextFormatter } from '../../../driver/decode/text.js';

/** Where the command writes. */
export interface DumpIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

const USAGE = 'usage: ptlab dump FILE.pt [--json|--stats]\n';
const CHUNK = 8 << 20;
const FLUSH_CHARS = 1 << 20;

type Mode = 'text' | 'json' | 'stats';

function parseArgs(argv: string[]): { file: string; mode: Mode } | undefined {
  let file: string | undefined;
  let mode: Mode = 'text';
  let modes = 0;
  for (const a of argv) {
    if (a === '--json') { mode = 'json'; modes++; } else if (a === '--stats') { mode = 'stats'; modes++; } else if (a.startsWith('-')) return undefined;
    else if (file === undefined) file = a;
    else return undefined;
  }
  return file === undefined || modes > 1 ? undefined : { file, mode };
}

/** Decodes `path` chunk by chunk, calling `each` for every record; returns the bytes read. */
async function decodeFile(path: string, each: (rec: PacketRecord) => void): Promise<number> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    let pending = new Uint8Array(0);
    let readPos = 0;
    let dec: PacketDecoder | undefined;
    for (;;) {
      const want = Math.min(CHUNK, size - readPos);
      const chunk = new Uint8Array(pending.length + want);
      chunk.set(pending, 0);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await fh.read(chunk, pending.length + got, want - got, readPos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      readPos += got;
      const final = readPos >= size || got < want;
      const buf = got < want ? chunk.subarray(0, pending.length + got) : chunk;
      if (dec === undefined) dec = new PacketDecoder(buf, { final });
      else dec.resume(buf, { final });
      const rec = dec.record;
      while (dec.next()) each(rec);
      if (final) return readPos;
      pending = buf.slice(dec.consumed);
    }
  } finally {
    await fh.close();
  }
}

/** Runs `ptlab dump`; returns the exit code (2 for bad usage or an unreadable file). */
export async function dumpCommand(argv: string[], io: DumpIo): Promise<number> {
  const args = parseArgs(argv);
  if (args === undefined) {
    io.err(USAGE);
    return 2;
  }
  let batch: string[] = [];
  let chars = 0;
  const emit = (line: string): void => {
    batch.push(line);
    chars += line.length + 1;
    if (chars >= FLUSH_CHARS) flush();
  };
  const flush = (): void => {
    if (batch.length > 0) io.out(batch.join('\n') + '\n');
    batch = [];
    chars = 0;
  };

  const counts = new Array<number>(64).fill(0);
  const errors = new Map<string, number>();
  const text = new TextFormatter();
  const each = args.mode === 'json' ? (r: PacketRecord) => emit(packetJsonLine(r))
    : args.mode === 'text' ? (r: PacketRecord) => emit(text.line(r))
    : (r: PacketRecord) => {
      if (r.kind === PacketKind.error) {
        const name = ERROR_NAMES[r.error] ?? 'error';
        errors.set(name, (errors.get(name) ?? 0) + 1);
      } else counts[r.kind]!++;
    };

  const t0 = performance.now();
  let bytes: number;
  try {
    bytes = await decodeFile(args.file, each);
  } catch (e) {
    flush();
    const code = (e as NodeJS.ErrnoException).code;
    io.err(`ptlab dump: cannot read ${args.file}: ${code ?? ''}${code ? ' ' : ''}${(e as Error).message}\n`);
    return 2;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (args.mode === 'stats') {
    let packets = 0;
    for (let k = 1; k < counts.length; k++) {
      if (counts[k]! > 0) emit(`${packetName(k).padEnd(10)} ${counts[k]}`);
      packets += counts[k]!;
    }
    for (const [name, n] of errors) emit(`${`error ${name}`.padEnd(10)} ${n}`);
    const errs = [...errors.values()].reduce((a, b) => a + b, 0);
    emit(`packets    ${packets}`);
    emit(`errors     ${errs}`);
    emit(`bytes      ${bytes}`);
    emit(`seconds    ${seconds.toFixed(3)}`);
    emit(`MB/s       ${seconds > 0 ? (bytes / 1e6 / seconds).toFixed(1) : 'inf'}`);
    emit(`Mpackets/s ${seconds > 0 ? ((packets + errs) / 1e6 / seconds).toFixed(2) : 'inf'}`);
  }
  flush();
  return 0;
}
