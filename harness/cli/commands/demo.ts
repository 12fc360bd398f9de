// `ptlab demo`: writes a small, deterministic PT stream and dumps it, so a
// fresh checkout shows the packet layer end to end. (`npm start` runs it.)
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PacketWriter } from '../../../driver/decode/encode.js';
import type { Packet } from '../../../driver/decode/packet.js';
import type { CliIo } from '../main.js';
import { dumpCommand } from './dump.js';

/** PSB+ as the reference model writes it (spec/packets.md §8 model order). */
function psbPlus(ip: bigint, tsc: bigint): Packet[] {
  return [
    { type: 'psb' },
    { type: 'tsc', tsc },
    { type: 'cbr', ratio: 0x20 },
    { type: 'mode.exec', csl: true, csd: false, if: false },
    { type: 'fup', ipc: 'sext-48', ip },
    { type: 'psbend' },
  ];
}

/** A loop at 0x10000000 that calls a function through a table: TNT, compressed RETs, TIPs. */
export function sampleStream(iterations = 64): Uint8Array {
  const w = new PacketWriter();
  const base = 0x1000_0000n;
  for (const p of psbPlus(base, 0x5df3675a90n)) w.push(p);
  for (let i = 0; i < iterations; i++) {
    w.push({ type: 'tnt.8', n: 3, bits: 0b101n });                                 // jcc T, N, T
    w.push({ type: 'tip', ipc: 'update-16', ip: 0x0100n + BigInt((i % 4) * 0x40) }); // call [table + i]
    w.push({ type: 'tnt.8', n: 2, bits: 0b11n });                                  // jcc T, compressed RET
    if (i % 16 === 15) w.push({ type: 'mtc', ctc: (i >> 4) & 0xff });
  }
  w.push({ type: 'fup', ipc: 'update-16', ip: 0x0200n });                           // WRMSR clearing TraceEn
  w.push({ type: 'tip.pgd', ipc: 'suppressed', ip: 0n });
  return w.bytes();
}

/** `ptlab demo [--out DIR]`. */
export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const outIdx = argv.indexOf('--out');
  const dir = outIdx >= 0 ? argv[outIdx + 1] : await mkdtemp(join(tmpdir(), 'ptlab-demo-'));
  if (!dir) {
    io.err('usage: ptlab demo [--out DIR]');
    return 2;
  }
  const file = join(dir, 'sample.pt');
  await writeFile(file, sampleStream());
  io.out(`wrote ${file}\n`);
  const text = await dumpCommand([file], io);
  if (text !== 0) return text;
  return dumpCommand([file, '--stats'], io);
}
