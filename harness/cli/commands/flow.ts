// `ptlab flow TRACE.pt --image IMAGE.bin@0xBASE [--image …] [--json] [--losses losses.json]`:
// reconstructs the executed path from a trace and the code image(s)
// (driver/decode/flow). --json prints flow JSON Lines (spec/flow-json.md),
// otherwise a readable listing; --losses turns the run directory's loss
// ledger into gap records. Exit 0 after decoding (error records included),
// 2 for bad usage or unreadable files.
import { readFile } from 'node:fs/promises';
import { FlowDecoder, type FlowLoss } from '../../../driver/decode/flow/flow-decoder.js';
import { ImageSet, parseImageArg, type ImageSpec } from '../../../driver/decode/flow/image.js';
import { flowJsonLine, flowTextLine, type GapReason } from '../../../driver/decode/flow/record.js';

/** Where the command writes. */
export interface FlowIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

const USAGE = 'usage: ptlab flow TRACE.pt --image IMAGE.bin@0xBASE [--image …] [--json] [--losses losses.json]\n';
const FLUSH_CHARS = 1 << 20;
const REASONS: readonly GapReason[] = ['stop', 'wrap', 'error', 'ovf'];

interface FlowArgs {
  readonly trace: string;
  readonly images: readonly { readonly path: string; readonly base: bigint }[];
  readonly json: boolean;
  readonly losses?: string;
}

function parseArgs(argv: string[]): FlowArgs | string {
  let trace: string | undefined;
  let losses: string | undefined;
  let json = false;
  const images: { path: string; base: bigint }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '--image' || a === '--losses') {
      const v = argv[++i];
      if (v === undefined) return `${a} needs a value`;
      if (a === '--losses') { losses = v; continue; }
      const im = parseImageArg(v);
      if (im === null) return `bad --image '${v}' (want FILE@0xBASE)`;
      images.push(im);
    } else if (a.startsWith('-')) return `unknown option '${a}'`;
    else if (trace === undefined) trace = a;
    else return `unexpected argument '${a}'`;
  }
  if (trace === undefined) return 'missing TRACE.pt';
  if (images.length === 0) return 'missing --image FILE@0xBASE';
  return { trace, images, json, ...(losses === undefined ? {} : { losses }) };
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

async function readBytes(path: string, io: FlowIo): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    io.err(`ptlab flow: cannot read ${path}: ${(e as Error).message}\n`);
    return undefined;
  }
}

/** `ptlab flow`. */
export async function flowCommand(argv: string[], io: FlowIo): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    io.err(`ptlab flow: ${args}\n${USAGE}`);
    return 2;
  }
  const trace = await readBytes(args.trace, io);
  if (trace === undefined) return 2;
  const specs: ImageSpec[] = [];
  for (const im of args.images) {
    const bytes = await readBytes(im.path, io);
    if (bytes === undefined) return 2;
    specs.push({ bytes, base: im.base });
  }
  let ledger: FlowLoss[] = [];
  if (args.losses !== undefined) {
    const text = await readBytes(args.losses, io);
    if (text === undefined) return 2;
    const parsed = parseLosses(new TextDecoder().decode(text));
    if (typeof parsed === 'string') {
      io.err(`ptlab flow: ${args.losses}: ${parsed}\n`);
      return 2;
    }
    ledger = parsed;
  }
  const images = new ImageSet(specs);
  const format = args.json ? flowJsonLine : flowTextLine;
  let batch: string[] = [];
  let chars = 0;
  try {
    new FlowDecoder(images, { ledger }).decode(trace, (r) => {
      const line = format(r);
      batch.push(line);
      chars += line.length + 1;
      if (chars >= FLUSH_CHARS) {
        io.out(batch.join('\n') + '\n');
        batch = [];
        chars = 0;
      }
    });
  } finally {
    images.dispose();
  }
  if (batch.length > 0) io.out(batch.join('\n') + '\n');
  return 0;
}
