// Ground-truth recording in flow JSON Lines (docs/formats/flow-json.md): the path the
// modelled CPU executed while PacketEn=1. Off by default; the generator calls
// it only when a recorder is attached. Keys are written in the spec's order.
import { ipHex } from './events.js';

/** Branch kinds of docs/formats/flow-json.md (libipt's instruction classes). */
export type TruthBranchKind = 'jcc' | 'jmp' | 'call' | 'ret' | 'far.call' | 'far.ret' | 'far.jmp';

/** Collects flow-json lines in order. */
export class TruthRecorder {
  private readonly out: string[] = [];

  /** One executed branch; `taken` only for jcc; `to` omitted when the trace cannot reveal it. */
  branch(ip: number, kind: TruthBranchKind, taken: boolean | undefined, to: number | undefined): void {
    const t = taken === undefined ? '' : `,"taken":${taken}`;
    const d = to === undefined ? '' : `,"to":"${ipHex(to)}"`;
    this.out.push(`{"ip":"${ipHex(ip)}","kind":"${kind}"${t}${d}}`);
  }

  /** An asynchronous transfer: FUP source, TIP target. */
  async(from: number, to: number): void {
    this.out.push(`{"kind":"async","from":"${ipHex(from)}","to":"${ipHex(to)}"}`);
  }

  /** Packet generation (re)enabled at `ip` (TIP.PGE). */
  enable(ip: number): void {
    this.out.push(`{"kind":"enable","ip":"${ipHex(ip)}"}`);
  }

  /** Packet generation disabled; `ip` = the TIP.PGD's IP, absent when suppressed. */
  disable(ip?: number): void {
    this.out.push(ip === undefined ? '{"kind":"disable"}' : `{"kind":"disable","ip":"${ipHex(ip)}"}`);
  }

  /** Internal buffer overflow; tracing resumed at `ip` (the FUP after the OVF), if it did. */
  overflow(ip?: number): void {
    this.out.push(ip === undefined ? '{"kind":"overflow"}' : `{"kind":"overflow","ip":"${ipHex(ip)}"}`);
  }

  /** The records so far, one JSON text each. */
  lines(): readonly string[] {
    return this.out;
  }

  /** truth.jsonl content: one record per line, newline-terminated. */
  text(): string {
    return this.out.length ? this.out.join('\n') + '\n' : '';
  }
}
