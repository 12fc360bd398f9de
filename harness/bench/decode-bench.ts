// The decode benchmark: libipt's packet decoder (test/libipt/ptbench.c,
// pt_pkt_next) against ours (driver/decode PacketDecoder.decodeBatch into a
// PacketBatch) on the same bytes, each computing the packet checksum of
// driver/decode/checksum.ts, so the comparison is also a correctness check
// (count and checksum must agree).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PacketBatch } from '../../driver/decode/batch.js';
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { benchStream } from './stream.js';

const run = promisify(execFile);

/** FNV-1a offset basis: the checksum's start value (driver/decode/checksum.ts). */
export const CHECKSUM_START = 0x811c9dc5;

/** One decoder's result over the whole stream; `seconds` is the best run. */
export interface DecodeResult {
  readonly packets: number;
  readonly errors: number;
  readonly checksum: number;
  readonly seconds: number;
}

/** Runs ptbench on `file` (best of `runs` decodes inside the process). */
export async function libiptDecode(ptbench: string, file: string, runs: number): Promise<DecodeResult> {
  const { stdout } = await run(ptbench, [file, String(runs)]);
  const out = JSON.parse(stdout) as { packets: number; errors: number; checksum: string; seconds: number };
  return { packets: out.packets, errors: out.errors, checksum: Number.parseInt(out.checksum, 16) >>> 0, seconds: out.seconds };
}

/** The batch every ptlabDecodeOnce() reuses (PacketBatch: reuse a batch rather than make one per decode). */
let benchBatch: PacketBatch | undefined;

/**
 * One full decode of `bytes` with our decoder: every packet decoded into the
 * columns of a PacketBatch (decodeBatch), the checksum taken over every
 * stored field in the same pass (PacketBatch options.checksum).
 */
export function ptlabDecodeOnce(bytes: Uint8Array): Omit<DecodeResult, 'seconds'> {
  const dec = new PacketDecoder(bytes);
  benchBatch ??= new PacketBatch(4096, { checksum: true });
  const batch = benchBatch;
  batch.resetChecksum();
  let packets = 0;
  let errors = 0;
  for (let n = dec.decodeBatch(batch); n > 0; n = dec.decodeBatch(batch)) {
    packets += n;
    errors += batch.errors;
  }
  return { packets: packets - errors, errors, checksum: batch.checksum };
}

/** Our decoder over `bytes`, best of `runs` (timed with performance.now, no I/O). */
export function ptlabDecode(bytes: Uint8Array, runs: number): DecodeResult {
  let best = Number.POSITIVE_INFINITY;
  let last: Omit<DecodeResult, 'seconds'> = { packets: 0, errors: 0, checksum: 0 };
  for (let i = 0; i < Math.max(1, runs); i++) {
    const start = performance.now();
    last = ptlabDecodeOnce(bytes);
    best = Math.min(best, (performance.now() - start) / 1000);
  }
  return { ...last, seconds: best };
}

/** Both decoders on one stream, and whether they agree. */
export interface DecodeComparison {
  readonly bytes: number;
  readonly libipt: DecodeResult;
  readonly ptlab: DecodeResult;
  /** Empty when packet count, error count and checksum all agree. */
  readonly mismatches: string[];
}

/** Decodes `bytes` with both decoders (via a temporary file for ptbench). */
export async function compareDecoders(ptbench: string, bytes: Uint8Array, runs: number): Promise<DecodeComparison> {
  const dir = mkdtempSync(join(tmpdir(), 'ptlab-bench-'));
  try {
    const file = join(dir, 'bench.pt');
    writeFileSync(file, bytes);
    const libipt = await libiptDecode(ptbench, file, runs);
    const ptlab = ptlabDecode(bytes, runs);
    const mismatches: string[] = [];
    if (ptlab.packets !== libipt.packets) mismatches.push(`packets: ptlab ${ptlab.packets}, libipt ${libipt.packets}`);
    if (ptlab.errors !== libipt.errors) mismatches.push(`errors: ptlab ${ptlab.errors}, libipt ${libipt.errors}`);
    if (ptlab.checksum !== libipt.checksum) {
      mismatches.push(`checksum: ptlab 0x${ptlab.checksum.toString(16)}, libipt 0x${libipt.checksum.toString(16)}`);
    }
    return { bytes: bytes.length, libipt, ptlab, mismatches };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The benchmark stream of `size` bytes (harness/bench/stream.ts) compared on both decoders. */
export async function decodeBench(ptbench: string, size: number, runs: number, seed = 1): Promise<DecodeComparison> {
  return compareDecoders(ptbench, benchStream(size, seed), runs);
}
