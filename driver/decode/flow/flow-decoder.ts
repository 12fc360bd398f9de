// Flow reconstruction: packets + code image → the executed path as
// docs/formats/flow-json.md records. The walker follows the code from the current IP
// and asks the trace only where the code cannot say where it goes:
//
//   jcc                  one TNT bit (docs/sdm/packets.md §3.2)
//   near RET             a TNT bit when compressed (pop the return stack), else a TIP (§7)
//   indirect, far        a TIP; reached while TNT bits are pending, the TIP is deferred (§6)
//   direct JMP/CALL      nothing (§10)
//
// Packets are applied lazily: a TNT walks until its bits are used up, a TIP
// walks to the instruction that needs it, a FUP walks to its IP. So the walk
// never runs past what the trace proves was executed, and a PSB+ FUP
// (status only, §8) checks the position. Binding rules: §3.3 (TIP.PGD with
// or without IP, after a jcc the suppressed destination comes from the
// instruction), §9 (FUP+TIP = async), §12 (OVF: drop TNT bits and compound
// events, clear the return stack, resume at the FUP or TIP.PGE). Errors are
// records (record.ts), decoding resumes at the next PSB; nothing throws on
// bad input. Loss ledger entries (losses.json `lost`) become gap records.
import { PacketClock } from '../time/packet-clock.js';
import type { TimeConfig } from '../time/estimator.js';
import { PacketDecoder } from '../decoder.js';
import { LastIp } from '../last-ip.js';
import { PacketKind, type PacketRecord } from '../record.js';
import { Cls, KIND_OF_CLS, type BranchKind } from './insn-class.js';
import type { ImageSet, InsnTable } from './image.js';
import { FlowRecord, type FlowErrorCode, type GapReason } from './record.js';
import { RetStack } from './ret-stack.js';

const TWO32 = 4294967296;

/** One losses.json `lost` entry (docs/design.md "The run directory"). */
export interface FlowLoss {
  readonly at: number;
  readonly bytes: number | null;
  readonly reason: GapReason;
}

/** Options of the flow decoder. */
export interface FlowOptions {
  /**
   * libipt 2.0.5's return stack: pop only on compressed RETs (spec §7 "Sources and
   * other decoders"). Default false: pop on every near RET, as the SDM says.
   */
  readonly libiptRetStack?: boolean;
  /** Reset LastIP at OVF as libipt 2.0.5 does (spec §5). Default false (SDM). */
  readonly lastIpResetAtOvf?: boolean;
  /** losses.json `lost` entries: each becomes a gap record at its offset. */
  readonly ledger?: readonly FlowLoss[];
  /** Instructions walked without using any packet before `runaway`. Default 2^22. */
  readonly maxSteps?: number;
  /** flow --time: each record carries the estimated TSC (docs/sdm/packets.md §13.1), from these facts. */
  readonly time?: TimeConfig;
}

/** What a decode run counted. */
export interface FlowStats {
  /** Records emitted, by kind. */
  readonly records: number;
  readonly branches: number;
  readonly errors: number;
  /** Instructions walked. */
  readonly instructions: number;
}

// Decoder states.
const ST_LOST = 0; // no sync: wait for a PSB
const ST_OFF = 1; // synced, PacketEn=0: wait for TIP.PGE (or a PSB+ FUP)
const ST_ON = 2; // PacketEn=1, the walk has an IP
const ST_OVF = 3; // after OVF: wait for its FUP (resumed) or anything else (resolved with PacketEn=0)

// Walk modes: where a walk stops.
const W_BITS = 0; // when no TNT bit is left (or at an indirect/far branch: a deferred TIP)
const W_TIP = 1; // at the branch a TIP binds to
const W_PGD = 2; // at the branch (or MOV CR3) a TIP.PGD binds to
const W_TO = 3; // at the target IP with no TNT bit left

// Walk results.
const OK = 0, E_NOMAP = 1, E_BAD_INSN = 2, E_BAD_QUERY = 3, E_RETSTACK = 4, E_RUNAWAY = 5;
const WALK_ERRORS: readonly FlowErrorCode[] = ['bad_query', 'nomap', 'bad_insn', 'bad_query', 'retstack_empty', 'runaway'];

const BITS_CAP = 1024; // pending TNT bits (deferred TIPs may hold back several TNTs)

/** `a` then `b` in one new array. */
function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Reconstructs the executed path of a trace against a set of code images. */
export class FlowDecoder {
  private readonly rec = new FlowRecord();
  private readonly rets = new RetStack();
  private readonly last: LastIp;
  private readonly libiptRets: boolean;
  private readonly maxSteps: number;
  private readonly ledger: readonly FlowLoss[];
  private readonly baseLo: Float64Array;
  private readonly baseHi: Float64Array;
  private readonly size: Float64Array;
  private emitFn: (r: FlowRecord) => void = () => {};

  private state = ST_LOST;
  /** Current IP: image and offset, or (img < 0) the raw IP. */
  private img = -1;
  private off = 0;
  private curLo = 0;
  private curHi = 0;
  /** Pending TNT bits (ring, 1 = taken). */
  private readonly bits = new Uint8Array(BITS_CAP);
  private bHead = 0;
  private nBits = 0;
  /** W_TO target. */
  private tImg = -1;
  private tOff = 0;
  private tLo = 0;
  private tHi = 0;
  /** W_PGD: the TIP.PGD's IP. */
  private pgdHasIp = false;
  /** Scratch: an absolute IP computed by abs(). */
  private aLo = 0;
  private aHi = 0;
  /** Unbound FUP (compound event in progress, §9) and its IP. */
  private fupPending = false;
  private fLo = 0;
  private fHi = 0;
  /** The next FUP binds to the packet before it (MODE.TSX, PTW, EXSTOP, BEP, CFE, TRIG with IP). */
  private fupBound = false;
  /** The last significant packet was the FUP that ended an OVF. */
  private ovfFup = false;
  /** Inside PSB+, and its FUP. */
  private inPsb = false;
  private psbFup = false;
  /** PSB+ announced a mode this decoder does not follow. */
  private psbBadMode = false;
  /** The last MODE.Exec named a mode this decoder does not follow (checked when tracing starts in it). */
  private badMode = false;
  private pLo = 0;
  private pHi = 0;
  /** Offset of the packet being applied (error records). */
  private pktOff = 0;
  private nRecords = 0;
  private nBranches = 0;
  private nErrors = 0;
  private nInsns = 0;

  /** flow --time: the time of the packets applied so far; null without --time. */
  private readonly clock: PacketClock | null;
  /**
   * flow --time: the time after the packet being applied, and the time records get: that of the
   * packet that decided the last branch or event (a TNT bit, a TIP, a PGE/PGD, an OVF), as
   * libipt's pt_insn_time gives the query decoder's time at its last query.
   */
  private pktTime: string | undefined = undefined;
  private curTime: string | undefined = undefined;

  constructor(private readonly images: ImageSet, opts: FlowOptions = {}) {
    this.clock = opts.time === undefined ? null : new PacketClock(opts.time);
    this.libiptRets = opts.libiptRetStack ?? false;
    this.maxSteps = opts.maxSteps ?? 1 << 22;
    this.ledger = [...(opts.ledger ?? [])].sort((x, y) => x.at - y.at);
    this.last = new LastIp({ resetAtOvf: opts.lastIpResetAtOvf ?? false });
    this.baseLo = images.baseLo;
    this.baseHi = images.baseHi;
    this.size = images.size;
  }

  /** Decodes `trace`, calling `onRecord` for every record (the record object is reused). */
  decode(trace: Uint8Array, onRecord: (r: FlowRecord) => void): FlowStats {
    this.begin(onRecord);
    this.push(trace);
    return this.end();
  }

  // Streamed decoding: begin → push(chunk)… → end gives exactly decode()'s records. Stream losses
  // split the trace into segments, each decoded from its first PSB (one PacketDecoder per segment,
  // resumed across chunks); OVF entries stay in-band (the decoder resumes at the OVF's FUP, §12).
  private cuts: readonly FlowLoss[] = [];
  private ovfs: readonly FlowLoss[] = [];
  private cutIdx = 0;
  private ovfIdx = 0;
  /** The current segment's decoder (none before its first byte), and whether it saw a PSB. */
  private dec: PacketDecoder | undefined;
  private sawPsb = false;
  /** Bytes of the current segment not yet consumed by its decoder, and the offset of their first byte. */
  private pending: Uint8Array = new Uint8Array(0);
  private pendingAt = 0;

  /** Starts a streamed decode: `onRecord` gets every record (the record object is reused). */
  begin(onRecord: (r: FlowRecord) => void): void {
    this.emitFn = onRecord;
    this.nRecords = this.nBranches = this.nErrors = this.nInsns = 0;
    this.cuts = this.ledger.filter((l) => l.reason !== 'ovf');
    this.ovfs = this.ledger.filter((l) => l.reason === 'ovf');
    this.cutIdx = this.ovfIdx = 0;
    this.dec = undefined;
    this.pending = new Uint8Array(0);
    this.pendingAt = 0;
  }

  /** The next bytes of the trace (after those of the previous push). */
  push(chunk: Uint8Array): void {
    let buf = this.pending.length === 0 ? chunk : concat(this.pending, chunk);
    for (;;) {
      const cut = this.cuts[this.cutIdx];
      const end = cut === undefined ? Infinity : Math.max(cut.at, this.pendingAt);
      if (this.pendingAt + buf.length < end) {
        // The segment goes on past these bytes: decode what is whole, keep the rest for the next push.
        const used = this.feed(buf, false);
        this.pending = buf.subarray(used);
        this.pendingAt += used;
        return;
      }
      const n = end - this.pendingAt;
      this.feed(buf.subarray(0, n), true);
      this.endSegment();
      buf = buf.subarray(n);
      this.pendingAt = end;
    }
  }

  /** The end of the trace: the last segment, the losses at or past its end; the run's counts. */
  end(): FlowStats {
    this.feed(this.pending, true);
    this.pending = new Uint8Array(0);
    while (this.cutIdx < this.cuts.length) this.endSegment();
    this.finish();
    for (; this.ovfIdx < this.ovfs.length; this.ovfIdx++) this.gap(this.ovfs[this.ovfIdx]!.bytes, 'ovf');
    return { records: this.nRecords, branches: this.nBranches, errors: this.nErrors, instructions: this.nInsns };
  }

  /** The segment ends at the cut `cutIdx`: its gap record, and a fresh start. */
  private endSegment(): void {
    const cut = this.cuts[this.cutIdx++]!;
    this.dec = undefined;
    this.finish();
    this.gap(cut.bytes, cut.reason);
    this.reset();
  }

  /**
   * Decodes `buf` (the current segment's unconsumed bytes and new ones; `final`: nothing of the
   * segment follows); returns how many of its bytes the decoder consumed.
   */
  private feed(buf: Uint8Array, final: boolean): number {
    if (this.dec === undefined) {
      if (buf.length === 0) return 0;
      this.dec = new PacketDecoder(buf, { baseOffset: this.pendingAt, final, skipPad: true });
      this.sawPsb = false;
    } else {
      this.dec.resume(buf, { final });
    }
    const dec = this.dec, p = dec.record;
    // A packet cut at the end of a segment that a ledger loss ends is explained by that loss's gap record.
    const cutAfter = final && this.cutIdx < this.cuts.length;
    let nextOvf = this.ovfs[this.ovfIdx]?.at ?? Infinity;
    while (dec.next()) {
      while (p.offset >= nextOvf && p.kind !== PacketKind.error) {
        this.gap(null, 'ovf');
        nextOvf = this.ovfs[++this.ovfIdx]?.at ?? Infinity;
      }
      if (p.kind === PacketKind.psb) this.sawPsb = true;
      if (p.kind === PacketKind.error) {
        if (p.error === 3 && cutAfter) continue;
        this.packetError(p, this.sawPsb);
        continue;
      }
      this.apply(p);
    }
    return final ? buf.length : dec.consumed;
  }

  // ------------------------------------------------------------ packets

  private apply(p: PacketRecord): void {
    if (this.clock !== null) { this.clock.apply(p); this.pktTime = this.clock.tscJson(); }
    const hasIp = this.last.feed(p);
    this.pktOff = p.offset;
    switch (p.kind) {
      case PacketKind['tnt.8']: case PacketKind['tnt.64']:
        this.onTnt(p);
        return;
      case PacketKind.tip:
        this.onTip(hasIp);
        return;
      case PacketKind['tip.pge']:
        this.onPge(hasIp);
        return;
      case PacketKind['tip.pgd']:
        this.onPgd(hasIp);
        return;
      case PacketKind.fup:
        this.onFup(hasIp);
        return;
      case PacketKind.psb:
        this.onPsb();
        return;
      case PacketKind.psbend:
        if (this.inPsb) this.endPsb();
        return;
      case PacketKind.ovf:
        this.onOvf();
        return;
      case PacketKind['mode.exec']:
        this.onModeExec(p.csl, p.csd);
        return;
      case PacketKind['mode.tsx']:
        if (this.inPsb) return;
        this.significant();
        this.fupBound = p.abrt === 0; // an abort's FUP pairs with the TIP/TIP.PGD that follows (§3.5)
        return;
      case PacketKind.ptw: case PacketKind.exstop: case PacketKind.bep: case PacketKind.cfe: case PacketKind.trig:
        if (this.inPsb) return;
        this.significant();
        if (p.ip === 1) this.fupBound = true; // "a FUP follows" (§3.16, §3.17, §3.18, §3.19)
        return;
      case PacketKind.pip: case PacketKind.vmcs: case PacketKind.stop: case PacketKind.mwait:
        // State only, not part of the path (PIP does not change the path).
        if (!this.inPsb) this.significant();
        return;
      default:
        return; // PAD, timing (TSC, TMA, MTC, CYC, CBR), MNT, power events, PEBS items, EVD
    }
  }

  /** A packet that is not a timing packet: an OVF still waiting for its FUP resolved with PacketEn=0 (§12). */
  private significant(): void {
    this.ovfFup = false;
    if (this.state === ST_OVF) {
      this.overflowRecord(false);
      this.state = ST_OFF;
    }
  }

  private onTnt(p: PacketRecord): void {
    this.significant();
    if (this.state === ST_LOST) return;
    if (this.state !== ST_ON) { this.fail(E_BAD_QUERY); return; }
    this.fupPending = false;
    // Bits oldest first: the oldest result is bit n-1 of lo/hi (record.ts).
    const n = p.n;
    if (this.nBits + n > BITS_CAP) { this.fail(E_BAD_QUERY); return; }
    let tail = (this.bHead + this.nBits) % BITS_CAP;
    for (let k = n - 1; k >= 0; k--) {
      const bit = k >= 32 ? (p.hi >>> (k - 32)) & 1 : (p.lo >>> k) & 1;
      this.bits[tail] = bit;
      tail = tail + 1 === BITS_CAP ? 0 : tail + 1;
    }
    this.nBits += n;
    const r = this.walk(W_BITS);
    if (r !== OK) this.fail(r);
  }

  private onTip(hasIp: boolean): void {
    this.significant();
    this.fupBound = false;
    if (this.state === ST_LOST) return;
    if (this.state !== ST_ON) { this.fail(E_BAD_QUERY); return; }
    if (this.fupPending) {
      // FUP + TIP: an asynchronous transfer (§3.3 Binding, §9).
      this.fupPending = false;
      if (!hasIp) { this.state = ST_LOST; return; }
      this.curTime = this.pktTime;
      this.asyncRecord();
      this.setCur(this.last.lo, this.last.hi);
      return;
    }
    const r = this.walk(W_TIP);
    if (r !== OK) { this.fail(r); return; }
    this.curTime = this.pktTime;
    this.nInsns++;
    const img = this.img, off = this.off;
    const c = this.table(img).cls[off]!;
    const next = off + this.table(img).len[off]!;
    if (c === Cls.callInd) this.rets.push(img, next);
    else if (c === Cls.ret && !this.libiptRets && this.rets.count > 0) this.rets.pop(); // spec §7 step 3
    if (!hasIp) {
      // A TIP with the IP suppressed: the destination is not traced.
      this.branchRecord(KIND_OF_CLS[c] as BranchKind, img, off, false, -1, 0, false);
      this.state = ST_LOST;
      return;
    }
    this.branchRecord(KIND_OF_CLS[c] as BranchKind, img, off, false, -1, 0, true, this.last.lo, this.last.hi);
    this.setCur(this.last.lo, this.last.hi);
    if (this.nBits > 0) {
      // Deferred TIP (§6): the remaining bits belong to the branches after this one.
      const r2 = this.walk(W_BITS);
      if (r2 !== OK) this.fail(r2);
    }
  }

  private onPge(hasIp: boolean): void {
    this.significant();
    if (this.state === ST_LOST) return;
    this.fupPending = false;
    this.fupBound = false;
    this.nBits = 0;
    this.rets.clear(); // spec §7 step 4
    if (!hasIp) { this.state = ST_LOST; return; }
    if (this.badMode) { this.fail(-1, 'bad_mode'); return; }
    this.setCur(this.last.lo, this.last.hi);
    this.state = ST_ON;
    this.curTime = this.pktTime;
    const r = this.rec;
    r.kind = 'enable'; r.ipLo = this.last.lo; r.ipHi = this.last.hi; r.hasIp = true;
    this.emit();
  }

  private onPgd(hasIp: boolean): void {
    const afterOvfFup = this.ovfFup;
    this.significant();
    this.fupBound = false;
    if (this.state !== ST_ON) return; // LOST, or already off (e.g. OVF resolved while TraceEn was cleared)
    const lo = this.last.lo, hi = this.last.hi;
    if (this.fupPending || afterOvfFup) {
      // FUP + TIP.PGD (§3.3): async into a region not traced; with the IP suppressed only the disable is known.
      this.curTime = this.pktTime;
      if (this.fupPending && hasIp) this.asyncRecord(lo, hi);
      this.fupPending = false;
      this.disable(hasIp, lo, hi);
      return;
    }
    this.pgdHasIp = hasIp;
    if (hasIp) this.setTarget(lo, hi);
    const r = this.walk(W_PGD);
    if (r !== OK) { this.fail(r); return; }
    this.curTime = this.pktTime;
    this.nInsns++;
    const img = this.img, off = this.off;
    const t = this.table(img);
    const c = t.cls[off]!;
    const next = off + t.len[off]!;
    if (c === Cls.jcc) {
      // Taken unless the IP names the fall-through (libipt tip_pgd-tnt_not_taken.ptt); suppressed → taken (§3.3).
      const target = next + t.disp[off]!;
      let taken = true;
      if (hasIp) {
        if (this.isAt(img, target, lo, hi)) taken = true;
        else if (this.isAt(img, next, lo, hi)) taken = false;
        else { this.fail(E_BAD_QUERY); return; }
      }
      this.branchRecord('jcc', img, off, taken, img, taken ? target : next, true);
    } else if (c !== Cls.movCr3) {
      if (c === Cls.jmp || c === Cls.call || c === Cls.callZero) this.branchRecord(KIND_OF_CLS[c] as BranchKind, img, off, false, img, next + t.disp[off]!, true);
      else this.branchRecord(KIND_OF_CLS[c] as BranchKind, img, off, false, -1, 0, hasIp, lo, hi);
    }
    this.disable(hasIp, lo, hi);
  }

  private onFup(hasIp: boolean): void {
    if (this.inPsb) {
      this.psbFup = hasIp;
      this.pLo = this.last.lo; this.pHi = this.last.hi;
      return;
    }
    this.ovfFup = false;
    if (this.state === ST_OVF) {
      // OVF, FUP: tracing resumed at the FUP's IP (§12).
      this.curTime = this.pktTime;
      if (!hasIp) { this.overflowRecord(false); this.state = ST_LOST; return; }
      this.setCur(this.last.lo, this.last.hi);
      this.overflowRecord(true);
      this.state = ST_ON;
      this.ovfFup = true;
      return;
    }
    const bound = this.fupBound;
    this.fupBound = false;
    if (this.state !== ST_ON || !hasIp) return;
    this.setTarget(this.last.lo, this.last.hi);
    const r = this.walk(W_TO);
    if (r !== OK) { this.fail(r); return; }
    if (!bound) {
      this.fupPending = true;
      this.fLo = this.last.lo; this.fHi = this.last.hi;
    }
  }

  private onPsb(): void {
    if (this.state === ST_OVF) { this.overflowRecord(false); this.state = ST_OFF; }
    this.ovfFup = false;
    this.inPsb = true;
    this.psbFup = false;
    this.psbBadMode = false;
    this.fupPending = false;
    this.fupBound = false;
    this.rets.clear(); // spec §7 step 4, §8: nothing is carried across a PSB
  }

  /** PSBEND (or an OVF that ends PSB+, §8): the FUP inside gives the position when PacketEn=1. */
  private endPsb(): void {
    this.inPsb = false;
    this.nBits = 0;
    this.badMode = this.psbBadMode;
    if (this.psbBadMode && this.psbFup) { this.state = ST_LOST; this.errorRecord(-1, 'bad_mode'); return; }
    if (!this.psbFup) { this.state = ST_OFF; return; }
    if (this.state === ST_ON) {
      this.setTarget(this.pLo, this.pHi);
      const r = this.walk(W_TO);
      if (r !== OK) this.errorRecord(r);
      this.nBits = 0;
    }
    this.setCur(this.pLo, this.pHi);
    this.state = ST_ON;
  }

  private onOvf(): void {
    if (this.inPsb) this.endPsb();
    if (this.state === ST_LOST) return;
    if (this.state === ST_OVF) this.overflowRecord(false);
    // §12: drop pending TNT bits and unfinished compound events, clear the return stack.
    this.nBits = 0;
    this.fupPending = false;
    this.fupBound = false;
    this.ovfFup = false;
    this.rets.clear();
    this.state = ST_OVF;
  }

  private onModeExec(csl: number, csd: number): void {
    // spec §3.5 table: CS.L=1, CS.D=0 is 64-bit; this decoder follows 64-bit code only. A mode it
    // cannot follow is an error only once code runs in it: PSB+ of a CPU with tracing off (no FUP)
    // may report a 32-bit mode that a later MODE.Exec before the TIP.PGE replaces.
    const bad = !(csl === 1 && csd === 0);
    if (this.inPsb) { this.psbBadMode = bad; return; }
    this.significant();
    // Event Trace: a MODE.Exec for an IF change (STI, CLI, POPF) is followed by a FUP of the next
    // IP, which belongs to it (§3.5 Binding; libipt ptet-mode_exec-if). Before a TIP it binds to
    // the TIP instead, and the TIP ends the wait (onTip, onPge, onPgd).
    this.fupBound = true;
    this.badMode = bad;
    if (bad && this.state !== ST_LOST && this.state !== ST_OFF) this.fail(-1, 'bad_mode');
  }

  private packetError(p: PacketRecord, sawPsb: boolean): void {
    const codes: readonly FlowErrorCode[] = ['bad_query', 'bad_opc', 'bad_packet', 'eos'];
    this.pktOff = p.offset;
    // A stream segment without any PSB: the packet layer reports eos at its start (packet-json.md).
    const code = !sawPsb && p.error === 3 ? 'nosync' : codes[p.error] ?? 'bad_packet';
    this.fail(-1, code);
    this.inPsb = false;
  }

  // ------------------------------------------------------------ the walk

  /** The table of image `img` (64-bit code). */
  private table(img: number): InsnTable {
    return this.images.table(img, 64);
  }

  /**
   * Follows the code from the current IP until the stop condition of `mode`,
   * emitting a branch record for every branch passed. Leaves the current IP at
   * the stopping instruction (or where it failed). Returns OK or an E_ code.
   */
  private walk(mode: number): number {
    if (this.img < 0) return this.unmappedDone(mode) ? OK : E_NOMAP;
    let img = this.img;
    let off = this.off;
    let t = this.table(img);
    let cls = t.cls, lens = t.len, disp = t.disp;
    let size = this.size[img]!;
    let steps = 0;
    let insns = 0;
    let result = OK;
    const maxSteps = this.maxSteps;
    for (;;) {
      if (this.nBits === 0) {
        if (mode === W_BITS) break;
        if (mode === W_TO && off === this.tOff && img === this.tImg) break;
      }
      let c = cls[off]!;
      if (c === Cls.unknown) c = t.decode(off);
      let next = off + lens[off]!;
      insns++;
      switch (c) {
        case Cls.other:
          break;
        case Cls.jcc: {
          if (this.nBits === 0) {
            if (mode !== W_PGD) result = E_BAD_QUERY;
            insns--;
            this.img = img; this.off = off; this.nInsns += insns;
            return result;
          }
          const taken = this.bits[this.bHead]!;
          this.curTime = this.pktTime;
          this.bHead = this.bHead + 1 === BITS_CAP ? 0 : this.bHead + 1;
          this.nBits--;
          if (taken === 1) next += disp[off]!;
          this.branchRecord('jcc', img, off, taken === 1, img, next, true);
          steps = 0;
          break;
        }
        case Cls.jmp: case Cls.call: case Cls.callZero: {
          const target = next + disp[off]!;
          if (mode === W_PGD && this.pgdHasIp && this.targetIs(img, target)) {
            insns--;
            this.img = img; this.off = off; this.nInsns += insns;
            return OK;
          }
          if (c === Cls.call) this.rets.push(img, next);
          this.branchRecord(c === Cls.jmp ? 'jmp' : 'call', img, off, false, img, target, true);
          next = target;
          break;
        }
        case Cls.ret: {
          if (this.nBits === 0) {
            if (mode !== W_TIP && mode !== W_PGD) result = E_BAD_QUERY;
            insns--;
            this.img = img; this.off = off; this.nInsns += insns;
            return result;
          }
          // Compressed RET (§7 step 3): the bit must be 1, the target is the top of the stack.
          const bit = this.bits[this.bHead]!;
          if (bit !== 1) result = E_BAD_QUERY;
          else if (this.rets.count === 0) result = E_RETSTACK;
          if (result !== OK) { this.img = img; this.off = off; this.nInsns += insns - 1; return result; }
          this.curTime = this.pktTime;
          this.bHead = this.bHead + 1 === BITS_CAP ? 0 : this.bHead + 1;
          this.nBits--;
          const rOff = this.rets.pop();
          const rImg = this.rets.poppedImg;
          this.branchRecord('ret', img, off, false, rImg, rOff, true);
          steps = 0;
          if (rImg !== img) {
            img = rImg;
            t = this.table(img);
            cls = t.cls; lens = t.len; disp = t.disp;
            size = this.size[img]!;
          }
          next = rOff;
          break;
        }
        case Cls.movCr3:
          if (mode === W_PGD) { insns--; this.img = img; this.off = off; this.nInsns += insns; return OK; }
          break;
        case Cls.jmpInd: case Cls.callInd: case Cls.farCall: case Cls.farJmp: case Cls.farRet:
          if (mode === W_TO) result = E_BAD_QUERY;
          insns--;
          this.img = img; this.off = off; this.nInsns += insns;
          return result;
        default:
          this.img = img; this.off = off; this.nInsns += insns - 1;
          return E_BAD_INSN;
      }
      if (next < 0 || next >= size) {
        // Left the image: find the next one, or stand at an unmapped IP.
        this.nInsns += insns;
        insns = 0;
        this.setCurAbs(img, next);
        if (this.img < 0) return this.unmappedDone(mode) ? OK : E_NOMAP;
        img = this.img;
        t = this.table(img);
        cls = t.cls; lens = t.len; disp = t.disp;
        size = this.size[img]!;
        next = this.off;
      }
      off = next;
      if (++steps > maxSteps) { this.img = img; this.off = off; this.nInsns += insns; return E_RUNAWAY; }
    }
    this.img = img; this.off = off; this.nInsns += insns;
    return OK;
  }

  /** At an unmapped IP, a walk can only succeed without taking a step. */
  private unmappedDone(mode: number): boolean {
    if (this.nBits !== 0) return false;
    if (mode === W_BITS) return true;
    return mode === W_TO && this.tImg < 0 && this.curLo === this.tLo && this.curHi === this.tHi;
  }

  // ------------------------------------------------------------ positions

  /** Computes image base + off into aLo/aHi (any off, even outside the image). */
  private abs(img: number, off: number): void {
    const lo = this.baseLo[img]! + off;
    const carry = Math.floor(lo / TWO32);
    this.aLo = lo - carry * TWO32;
    this.aHi = (this.baseHi[img]! + carry) >>> 0;
  }

  /** Current IP := lo/hi. */
  private setCur(lo: number, hi: number): void {
    const i = this.images.find(lo, hi);
    this.img = i;
    if (i >= 0) this.off = this.images.foundOff;
    else { this.curLo = lo; this.curHi = hi; }
  }

  /** Current IP := image base + off (normalised to the image holding it). */
  private setCurAbs(img: number, off: number): void {
    if (off >= 0 && off < this.size[img]!) { this.img = img; this.off = off; return; }
    this.abs(img, off);
    this.setCur(this.aLo, this.aHi);
  }

  /** W_TO / W_PGD target := lo/hi. */
  private setTarget(lo: number, hi: number): void {
    this.tLo = lo; this.tHi = hi;
    this.tImg = this.images.find(lo, hi);
    this.tOff = this.tImg >= 0 ? this.images.foundOff : 0;
  }

  /** Whether image base + off is the target set by setTarget(). */
  private targetIs(img: number, off: number): boolean {
    if (off >= 0 && off < this.size[img]!) return img === this.tImg && off === this.tOff;
    this.abs(img, off);
    return this.aLo === this.tLo && this.aHi === this.tHi;
  }

  /** Whether image base + off equals lo/hi. */
  private isAt(img: number, off: number, lo: number, hi: number): boolean {
    this.abs(img, off);
    return this.aLo === lo && this.aHi === hi;
  }

  // ------------------------------------------------------------ records

  private emit(): void {
    this.nRecords++;
    if (this.clock !== null) this.rec.tsc = this.curTime;
    this.emitFn(this.rec);
  }

  /** A branch at image/off; `to` is image/off (toImg ≥ 0), or lo/hi (toImg < 0), or absent. */
  private branchRecord(kind: BranchKind, img: number, off: number, taken: boolean, toImg: number, toOff: number, hasTo: boolean, toLo = 0, toHi = 0): void {
    const r = this.rec;
    r.kind = 'branch';
    r.branch = kind;
    r.taken = taken;
    this.abs(img, off);
    r.ipLo = this.aLo; r.ipHi = this.aHi; r.hasIp = true;
    r.hasTo = hasTo;
    if (hasTo) {
      if (toImg >= 0) { this.abs(toImg, toOff); r.toLo = this.aLo; r.toHi = this.aHi; }
      else { r.toLo = toLo; r.toHi = toHi; }
    }
    this.nBranches++;
    this.emit();
  }

  /** FUP + TIP (or TIP.PGD with IP): from the FUP's IP to lo/hi (default: LastIP). */
  private asyncRecord(lo = this.last.lo, hi = this.last.hi): void {
    const r = this.rec;
    r.kind = 'async';
    r.ipLo = this.fLo; r.ipHi = this.fHi; r.hasIp = true;
    r.toLo = lo; r.toHi = hi; r.hasTo = true;
    this.emit();
  }

  /** PacketEn 1→0: a disable record; the walk waits for TIP.PGE. */
  private disable(hasIp: boolean, lo: number, hi: number): void {
    const r = this.rec;
    r.kind = 'disable'; r.hasIp = hasIp; r.ipLo = lo; r.ipHi = hi;
    this.emit();
    this.state = ST_OFF;
    this.nBits = 0;
    this.fupPending = false;
    this.rets.clear();
  }

  private overflowRecord(withIp: boolean): void {
    const r = this.rec;
    r.kind = 'overflow'; r.hasIp = withIp;
    if (withIp) { this.abs2cur(); }
    this.emit();
  }

  /** rec.ip := the current IP. */
  private abs2cur(): void {
    const r = this.rec;
    if (this.img >= 0) { this.abs(this.img, this.off); r.ipLo = this.aLo; r.ipHi = this.aHi; }
    else { r.ipLo = this.curLo; r.ipHi = this.curHi; }
  }

  private gap(bytes: number | null, reason: GapReason): void {
    const r = this.rec;
    r.kind = 'gap'; r.bytes = bytes; r.reason = reason;
    this.emit();
  }

  /** An error record for walk result `code`, without changing the state. */
  private errorRecord(code: number, name?: FlowErrorCode): void {
    const r = this.rec;
    r.kind = 'error';
    r.error = name ?? WALK_ERRORS[code] ?? 'bad_query';
    r.offset = this.pktOff;
    r.hasIp = this.state === ST_ON;
    if (r.hasIp) this.abs2cur();
    this.nErrors++;
    this.emit();
  }

  /** An error record, then resynchronisation at the next PSB. */
  private fail(code: number, name?: FlowErrorCode): void {
    this.errorRecord(code, name);
    this.state = ST_LOST;
    this.nBits = 0;
    this.fupPending = false;
    this.fupBound = false;
    this.ovfFup = false;
  }

  /** End of a segment: an OVF never resolved is still an overflow. */
  private finish(): void {
    if (this.state === ST_OVF) { this.overflowRecord(false); this.state = ST_OFF; }
    // A PSB+ without its PSBEND (§8): whatever it said was never confirmed; say so rather than nothing.
    if (this.inPsb) { this.inPsb = false; this.state = ST_LOST; this.errorRecord(-1, 'eos'); }
  }

  /** Forget everything (after a gap): resynchronise at the next PSB. */
  private reset(): void {
    this.state = ST_LOST;
    this.nBits = 0;
    this.fupPending = false;
    this.fupBound = false;
    this.ovfFup = false;
    this.inPsb = false;
    this.rets.clear();
    this.last.reset();
  }
}

/** The flow-json lines of `trace` against `images` (one string per record). */
export function flowLines(trace: Uint8Array, images: ImageSet, format: (r: FlowRecord) => string, opts: FlowOptions = {}): string[] {
  const out: string[] = [];
  new FlowDecoder(images, opts).decode(trace, (r) => out.push(format(r)));
  return out;
}
