// OVF packets in the collected stream become ledger entries with bytes null
// (docs/design.md: the driver cannot know how much the CPU dropped).
import { PacketDecoder, PacketKind } from '../decode/index.js';

/**
 * Offsets of every OVF packet in `stream` (packets after the first PSB, libipt's sync rules).
 *
 * `cuts` are offsets where the stream does not continue the bytes before it: a ToPA STOP region
 * filled there and the CPU wrote nothing until a handler restarted it (docs/sdm/output.md §4.4).
 * The bytes on either side of a cut were never adjacent in the CPU's output, so a packet read
 * across one is not the CPU's (the last byte of a full region and the first after the restart can
 * read as an OVF: 0x02 0xf3). Each stretch is decoded on its own, from its own first PSB.
 */
export function findOvfs(stream: Uint8Array, cuts: readonly number[] = []): number[] {
  const out: number[] = [];
  const ends = [...new Set(cuts.filter((c) => c > 0 && c < stream.length))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...ends, stream.length]) {
    const d = new PacketDecoder(stream.subarray(from, to), { baseOffset: from });
    while (d.next()) if (d.record.kind === PacketKind.ovf) out.push(d.record.offset);
    from = to;
  }
  return out;
}
