// Flow reconstruction throughput (`npm run bench`; never asserted in tests):
// a synthetic input, and a timed decode that counts records without
// formatting them, to compare with libipt's instruction-flow decoder
// (test/libipt/ptflow.c --bench) on the same trace and image.
import { PacketWriter } from '../../driver/decode/encode.js';
import type { Packet } from '../../driver/decode/packet.js';
import { FlowDecoder, type FlowOptions } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet, type ImageSpec } from '../../driver/decode/flow/image.js';

/** Result of benchFlow: best of `runs`. */
export interface FlowBenchResult {
  readonly instructions: number;
  readonly records: number;
  readonly errors: number;
  readonly seconds: number;
}

/** Decodes `trace` against `images` `runs` times (fresh tables each run); returns the best time. */
export function benchFlow(trace: Uint8Array, images: readonly ImageSpec[], runs = 3, opts: FlowOptions = {}): FlowBenchResult {
  let best = Infinity;
  let last = { records: 0, branches: 0, errors: 0, instructions: 0 };
  for (let r = 0; r < runs; r++) {
    const set = new ImageSet(images);
    const t0 = performance.now();
    last = new FlowDecoder(set, opts).decode(trace, () => {});
    best = Math.min(best, (performance.now() - t0) / 1000);
    set.dispose();
  }
  return { instructions: last.instructions, records: last.records, errors: last.errors, seconds: best };
}

/**
 * A synthetic trace and image: a loop of `body` NOPs, a jcc, a direct CALL to
 * a function that returns (compressed RET), and an indirect JMP back (TIP),
 * with a PSB+ every 1024 iterations (docs/sdm/packets.md §8). `iterations` loops.
 */
export function flowBenchInput(iterations = 200_000, body = 8): { trace: Uint8Array; images: ImageSpec[] } {
  const base = 0x1000_0000n;
  // 0: nop×body | je +2 | nop nop | call F | nop | jmp rax | F: nop | ret
  const code: number[] = Array<number>(body).fill(0x90);
  code.push(0x74, 0x02, 0x90, 0x90);
  const callAt = code.length;
  code.push(0xe8, 0, 0, 0, 0, 0x90, 0xff, 0xe0);
  const f = code.length;
  code.push(0x90, 0xc3);
  const rel = f - (callAt + 5);
  code[callAt + 1] = rel & 0xff;
  const w = new PacketWriter(iterations * 5 + 64);
  const psb: Packet[] = [
    { type: 'psb' }, { type: 'cbr', ratio: 0x20 }, { type: 'mode.exec', csl: true, csd: false, if: false },
    { type: 'fup', ipc: 'sext-48', ip: base }, { type: 'psbend' },
  ];
  for (let i = 0; i < iterations; i++) {
    if (i % 1024 === 0) for (const p of psb) w.push(p);
    w.push({ type: 'tnt.8', n: 2, bits: (i & 1) === 0 ? 0b11n : 0b01n }); // je T/N, compressed RET
    w.push({ type: 'tip', ipc: 'update-16', ip: base & 0xffffn });
  }
  w.push({ type: 'fup', ipc: 'update-16', ip: base & 0xffffn });
  w.push({ type: 'tip.pgd', ipc: 'suppressed', ip: 0n });
  return { trace: w.bytes(), images: [{ bytes: Uint8Array.from(code), base }] };
}
