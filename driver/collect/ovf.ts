// OVF packets in the collected stream become ledger entries with bytes null
// (docs/design.md: the driver cannot know how much the CPU dropped).
import { PacketDecoder, PacketKind } from '../decode/index.js';

/** Offsets of every OVF packet in `stream` (packets after the first PSB, libipt's sync rules). */
export function findOvfs(stream: Uint8Array): number[] {
  const out: number[] = [];
  const d = new PacketDecoder(stream);
  while (d.next()) if (d.record.kind === PacketKind.ovf) out.push(d.record.offset);
  return out;
}
