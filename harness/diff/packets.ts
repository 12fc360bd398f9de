// A trace.pt as the list of its packets for comparison: each packet's packet-JSON line without its
// offset (docs/formats/packet-json.md), PAD left out, and the timing packets (TSC, TMA, MTC, CYC,
// CBR) left out unless asked for: two CPUs or two runs differ in timing by nature.
import { PacketDecoder } from '../../driver/decode/decoder.js';
import { packetJsonLine } from '../../driver/decode/json.js';
import { PacketKind } from '../../driver/decode/record.js';

/** A packet of the stream: its JSON without the offset, and where it starts. */
export interface StreamPacket {
  readonly off: number;
  readonly text: string;
}

const TIMING: ReadonlySet<number> = new Set([PacketKind.tsc, PacketKind.tma, PacketKind.mtc, PacketKind.cyc, PacketKind.cbr]);

/** The packets of `trace` to compare (see the file comment); decode errors are packets too ("error"). */
export function streamPackets(trace: Uint8Array, opts: { readonly timing?: boolean } = {}): StreamPacket[] {
  const out: StreamPacket[] = [];
  const d = new PacketDecoder(trace, { final: true });
  while (d.next()) {
    const r = d.record;
    if (r.kind === PacketKind.pad || (!opts.timing && TIMING.has(r.kind))) continue;
    out.push({ off: r.offset, text: packetJsonLine(r).replace(/^\{"off":\d+,/, '{') });
  }
  return out;
}
