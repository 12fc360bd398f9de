// Last-IP reconstruction (docs/sdm/packets.md §5, SDM Vol. 3C "IP Compression"):
// a separate small layer over the packet records, kept as two uint32 halves.
import { PacketKind, type PacketRecord } from './record.js';
import type { Packet } from './packet.js';
import { IPBYTES_BY_IPC } from './packet.js';

/** Options of the Last-IP tracker. */
export interface LastIpOptions {
  /**
   * Reset LastIP at OVF, as libipt 2.0.5 does (pt_qry_decode_ovf → pt_qry_reset).
   * Default false: the SDM keeps LastIP across OVF (spec §5, §12).
   */
  resetAtOvf?: boolean;
}

/** The reconstructed IP for IPBytes `ipBytes` and a raw payload, against `last`; null when suppressed or reserved (spec §5 table). */
export function reconstructIp(ipBytes: number, payload: bigint, last: bigint): bigint | null {
  const M64 = (1n << 64n) - 1n;
  switch (ipBytes) {
    case 1: return (last & ~0xffffn & M64) | (payload & 0xffffn);
    case 2: return (last & ~0xffff_ffffn & M64) | (payload & 0xffff_ffffn);
    case 3: return (payload & (1n << 47n)) !== 0n ? (payload & ((1n << 48n) - 1n)) | (M64 ^ ((1n << 48n) - 1n)) : payload & ((1n << 48n) - 1n);
    case 4: return (last & ~((1n << 48n) - 1n) & M64) | (payload & ((1n << 48n) - 1n));
    case 6: return payload & M64;
    default: return null;
  }
}

/** Tracks LastIP over a packet stream: reset at PSB (and at OVF if asked); suppressed IPs do not update it. */
export class LastIp {
  /** Low/high 32 bits of LastIP. */
  lo = 0;
  hi = 0;
  private readonly resetAtOvf: boolean;

  constructor(opts: LastIpOptions = {}) {
    this.resetAtOvf = opts.resetAtOvf ?? false;
  }

  /** LastIP as a bigint. */
  get ip(): bigint {
    return (BigInt(this.hi >>> 0) << 32n) | BigInt(this.lo >>> 0);
  }

  /** Back to 0 (start of trace, PSB). */
  reset(): void {
    this.lo = 0;
    this.hi = 0;
  }

  /**
   * Applies one decoded record. Returns true when it was an IP packet with an
   * IP (then `ip`/`lo`/`hi` hold the reconstructed IP), false otherwise.
   */
  feed(rec: PacketRecord): boolean {
    switch (rec.kind) {
      case PacketKind.psb: this.reset(); return false;
      case PacketKind.ovf: if (this.resetAtOvf) this.reset(); return false;
      case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
        return this.update(rec.ipBytes, rec.lo, rec.hi);
      default: return false;
    }
  }

  /** Applies one Packet (allocating form of feed()). Returns the reconstructed IP of an IP packet, else null. */
  feedPacket(p: Packet): bigint | null {
    switch (p.type) {
      case 'psb': this.reset(); return null;
      case 'ovf': if (this.resetAtOvf) this.reset(); return null;
      case 'tip': case 'tip.pge': case 'tip.pgd': case 'fup': {
        const lo = Number(p.ip & 0xffff_ffffn);
        const hi = Number((p.ip >> 32n) & 0xffff_ffffn);
        return this.update(IPBYTES_BY_IPC[p.ipc], lo, hi) ? this.ip : null;
      }
      default: return null;
    }
  }

  /** spec §5: IPBytes 001b/010b/100b update against LastIP, 011b sign-extends bit 47, 110b is the full IP. */
  private update(ipBytes: number, lo: number, hi: number): boolean {
    switch (ipBytes) {
      case 1: this.lo = ((this.lo & 0xffff0000) | (lo & 0xffff)) >>> 0; return true;
      case 2: this.lo = lo >>> 0; return true;
      case 3: this.lo = lo >>> 0; this.hi = (hi & 0x8000) !== 0 ? ((hi & 0xffff) | 0xffff0000) >>> 0 : hi & 0xffff; return true;
      case 4: this.lo = lo >>> 0; this.hi = ((this.hi & 0xffff0000) | (hi & 0xffff)) >>> 0; return true;
      case 6: this.lo = lo >>> 0; this.hi = hi >>> 0; return true;
      default: return false; // suppressed (or reserved): LastIP unchanged
    }
  }
}
