// Hand-made traces for the flow tests: PSB+ forms and a runner returning flow-json lines.
import { PacketWriter } from '../../driver/decode/encode.js';
import type { Packet } from '../../driver/decode/packet.js';
import { FlowDecoder, type FlowOptions } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet, type ImageSpec } from '../../driver/decode/flow/image.js';
import { flowJsonLine } from '../../driver/decode/flow/record.js';

/** 64-bit MODE.Exec (docs/sdm/packets.md §3.5: CS.L=1, CS.D=0). */
export const MODE64: Packet = { type: 'mode.exec', csl: true, csd: false, if: false };

/** PSB+ with PacketEn=1: MODE.Exec and FUP(ip) inside (spec §8). */
export function psbOn(ip: bigint): Packet[] {
  return [{ type: 'psb' }, { type: 'cbr', ratio: 0x20 }, MODE64, { type: 'fup', ipc: 'sext-48', ip }, { type: 'psbend' }];
}

/** PSB+ with PacketEn=0 (no FUP, spec §8), then MODE.Exec, TIP.PGE(ip) (spec §10). */
export function psbThenPge(ip: bigint): Packet[] {
  return [{ type: 'psb' }, { type: 'cbr', ratio: 0x20 }, { type: 'psbend' }, MODE64, { type: 'tip.pge', ipc: 'sext-48', ip }];
}

/** TNT-8 from a string of T/N, oldest first (spec §3.2). */
export function tnt(s: string): Packet {
  let bits = 0n;
  for (const ch of s) bits = (bits << 1n) | (ch === 'T' ? 1n : 0n);
  return { type: 'tnt.8', n: s.length, bits };
}

/** An IP packet with a full (sext-48) IP. */
export function ipPkt(type: 'tip' | 'tip.pge' | 'tip.pgd' | 'fup', ip?: bigint): Packet {
  return ip === undefined ? { type, ipc: 'suppressed', ip: 0n } : { type, ipc: 'sext-48', ip };
}

/** Encodes packets. */
export function trace(...groups: (Packet | Packet[])[]): Uint8Array {
  const w = new PacketWriter();
  for (const g of groups) for (const p of Array.isArray(g) ? g : [g]) w.push(p);
  return w.bytes();
}

/** Image specs from [base, bytes] pairs. */
export function images(...list: [bigint, number[]][]): ImageSet {
  return new ImageSet(list.map(([base, bytes]): ImageSpec => ({ base, bytes: Uint8Array.from(bytes) })));
}

/** The flow-json lines of a trace against images. */
export function flow(set: ImageSet, bytes: Uint8Array, opts: FlowOptions = {}): string[] {
  const out: string[] = [];
  new FlowDecoder(set, opts).decode(bytes, (r) => out.push(flowJsonLine(r)));
  return out;
}
