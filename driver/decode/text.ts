// Human-readable, ptdump-like packet lines: offset (hex, padded), packet name,
// payload, and for IP packets the IP reconstructed through Last IP (spec §5).
import { execModeName, hex64, tntBits } from './json.js';
import { LastIp, type LastIpOptions } from './last-ip.js';
import { ERROR_NAMES, PacketKind, packetName, type PacketRecord } from './record.js';

const IPC_SHORT = ['0', '1: 16', '2: 32', '3: s48', '4: 48', '?', '6: 64', '?'];
const flag = (name: string, v: number): string => (v !== 0 ? name : '');
const join = (...parts: string[]): string => parts.filter((p) => p !== '').join(' ');

/** Formats records as text lines, tracking Last IP across calls (feed every record, in order). */
export class TextFormatter {
  /** Last IP as the lines so far left it (text-out.ts shares it). */
  readonly lastIp: LastIp;

  constructor(opts: LastIpOptions = {}) {
    this.lastIp = new LastIp(opts);
  }

  /** The text line (no newline) for one record. */
  line(rec: PacketRecord): string {
    const off = rec.offset.toString(16).padStart(16, '0');
    if (rec.kind === PacketKind.error) return `${off}  [error: ${ERROR_NAMES[rec.error]}]`;
    const hasIp = this.lastIp.feed(rec);
    const name = packetName(rec.kind).padEnd(10);
    const payload = this.payload(rec, hasIp);
    return payload === '' ? `${off}  ${name}`.trimEnd() : `${off}  ${name}${payload}`;
  }

  private payload(rec: PacketRecord, hasIp: boolean): string {
    const wide = hex64(rec.lo, rec.hi);
    switch (rec.kind) {
      case PacketKind.tip: case PacketKind['tip.pge']: case PacketKind['tip.pgd']: case PacketKind.fup:
        if (rec.ipBytes === 0) return '0: (suppressed)';
        return `${IPC_SHORT[rec.ipBytes]}: ${wide}`.padEnd(28) + (hasIp ? `ip ${hex64(this.lastIp.lo, this.lastIp.hi)}` : '');
      case PacketKind['tnt.8']: case PacketKind['tnt.64']:
        // ptdump style: `!` taken, `.` not taken, oldest first.
        return tntBits(rec.n, rec.lo, rec.hi).replace(/1/g, '!').replace(/0/g, '.');
      case PacketKind['mode.exec']:
        return join(execModeName(rec.csl, rec.csd), flag('if', rec.iflag));
      case PacketKind['mode.tsx']:
        return join(flag('intx', rec.intx), flag('abrt', rec.abrt)) || '(none)';
      case PacketKind.pip:
        return join(`cr3 ${wide}`, flag('nr', rec.nr));
      case PacketKind.vmcs: return `base ${wide}`;
      case PacketKind.cbr: return `${rec.ratio}`;
      case PacketKind.tsc: return wide;
      case PacketKind.tma: return `ctc 0x${rec.ctc.toString(16)} fc 0x${rec.fc.toString(16)}`;
      case PacketKind.mtc: return `0x${rec.ctc.toString(16)}`;
      case PacketKind.cyc: return wide;
      case PacketKind.mnt: return wide;
      case PacketKind.exstop: return flag('ip', rec.ip);
      case PacketKind.mwait: return `hints ${hex64(rec.lo, 0)} ext ${hex64(rec.hi, 0)}`;
      case PacketKind.pwre: return join(`c${(rec.state + 1) & 0xf}.${(rec.subState + 1) & 0xf}`, flag('hw', rec.hw));
      case PacketKind.pwrx:
        return join(`c${(rec.last + 1) & 0xf}, deepest c${(rec.deepest + 1) & 0xf}`,
          flag('int', rec.interrupt), flag('st', rec.store), flag('hw', rec.autonomous));
      case PacketKind.ptw: return join(`${rec.plc === 0 ? 4 : 8}: ${wide}`, flag('ip', rec.ip));
      case PacketKind.bbp: return `sz ${rec.sz === 1 ? 4 : 8} type 0x${rec.blockType.toString(16)}`;
      case PacketKind.bip: return `id ${rec.id} ${wide}`;
      case PacketKind.bep: return flag('ip', rec.ip);
      case PacketKind.cfe: return join(`type ${rec.cfeType} vector ${rec.vector}`, flag('ip', rec.ip));
      case PacketKind.evd: return `type ${rec.evdType} ${wide}`;
      case PacketKind.trig:
        return join(`trbv 0x${rec.trbv.toString(16)}`, rec.icntv ? `icnt ${rec.icnt}` : '', flag('ip', rec.ip), flag('mult', rec.mult));
      default: return '';
    }
  }
}
