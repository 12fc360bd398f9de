// The model's packet generator: the PacketEn state machine (docs/sdm/README.md
// §2–§5) and the packets of docs/sdm/packets.md §10 for every event kind of
// events.ts, with PSB+ (§8), OVF (§12), timing (§13) and RET compression (§7).
//
// Model decisions (spec text in brackets):
// - No deferred TIPs, TNT-8 only, flush at 6 results or before any
//   non-timing packet [packets.md §6 reference-model policy].
// - A TIP.PGE is always preceded by MODE.Exec [§10 TraceEn 0→1 row lists it
//   unconditionally; elsewhere "MODE.Exec?" allows it].
// - A taken jcc that leaves the range or hits TraceStop gives TIP.PGD()
//   [§10 notes]; `libiptCompat` writes TIP.PGD(BLIP) instead. Every other
//   branch that clears FilterEn gives the target [§10, Open Question 6].
// - A due PSB+ goes after the packets of the current event, never inside a
//   compound event; an OVF's FUP comes before it [§8, §12].
// - FilterEn is evaluated on taken branches/events (target IP), at TraceEn
//   0→1 (Next IP) and when ContextEn becomes 1 (Next IP / target) [README §4.2].
// - The driver's work is an untraced handler [docs/design.md "How the model runs"]:
//   `untracedEnter` forces ContextEn=0 (like a production enclave, README §3.3).
import { PacketEmitter, SCRATCH_BYTES } from './emitter.js';
import * as O from './opcodes.js';
import { ModelClock, type ClockConfig } from './clock.js';
import { InternalBuffer, UNLIMITED_BUFFER, type InternalBufferConfig } from './internal-buffer.js';
import { RET_STACK_DEPTH, RetStack } from './ret-stack.js';
import { TruthRecorder, type TruthBranchKind } from './truth.js';
import { decodeTraceConfig, inRanges, type Ranges, type TraceConfig } from './config.js';
import type { TraceSink } from './sink.js';
import { B_CALL, B_CALL_IND, B_CALL_ZERO, B_JCC, B_JMP, B_JMP_IND, B_OTHER, B_RET, type PackedPath } from './packed-path.js';
import type { ExecContext, ExecMode, FarKind, InterruptKind, NearKind, RtitRegs, TraceEvents } from './events.js';
import { IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';

/** Construction options of a PacketGenerator. */
export interface GeneratorOptions {
  readonly sink: TraceSink;
  /** L14.0.EBX[1] (configurable PSB, CYC, PacketByteCnt). Default true. */
  readonly psbCyc?: boolean;
  /** PSB period when `psbCyc` is false (Broadwell-class fixed period). Default 4096. */
  readonly fixedPsbPeriod?: number;
  /** The CPU has TSX: PSB+ carries MODE.TSX(InTX=0) when ContextEn=1 and BranchEn=1 (§8). Default false. */
  readonly tsx?: boolean;
  readonly clock?: Partial<ClockConfig>;
  readonly buffer?: InternalBufferConfig;
  /** Bytes gathered before they are handed to the sink. Default 4096. */
  readonly flushBytes?: number;
  /** Record ground truth (docs/formats/flow-json.md). Default false. */
  readonly truth?: boolean;
  /** Write TIP.PGD(BLIP) for a taken jcc that clears PacketEn (libipt 2.0.5; not SDM-conformant). */
  readonly libiptCompat?: boolean;
  /** Context before the first event. Default CPL 3, CR3 0, 64-bit. */
  readonly context?: ExecContext;
  /** Allow `replayPath` (default true); false retires every branch through the event methods (differential tests). */
  readonly replay?: boolean;
  /**
   * A PSB that falls due inside the driver's untraced handler waits for the next packet (§8: "best
   * effort, as soon as possible"): it is written when tracing resumes, or, when TraceEn is cleared
   * first, kept in STATUS.PendPSB under InjectPsbPmiOnEnable (docs/sdm/output.md §7.4) and lost
   * otherwise. Default false: the PSB+ is written at once, in the handler.
   */
  readonly deferPsbInHandler?: boolean;
}

/** The STATUS fields the generator owns (docs/sdm/msrs.md §4). */
export interface GeneratorStatus {
  readonly FilterEn: boolean;
  readonly ContextEn: boolean;
  readonly TriggerEn: boolean;
  readonly Error: boolean;
  readonly Stopped: boolean;
  readonly PendPSB: boolean;
  readonly PacketByteCnt: number;
}

const FAR_TRUTH: Record<FarKind, TruthBranchKind> = {
  'far.call': 'far.call', 'far.jmp': 'far.jmp', 'far.ret': 'far.ret',
  syscall: 'far.call', sysenter: 'far.call', sysret: 'far.ret', sysexit: 'far.ret', iret: 'far.ret',
};
const NO_RANGES: Ranges = { a: [], b: [] };
/** Near-branch classes for the range-checking path. */
const JCC = 0, DIRECT = 1, INDIRECT = 2, RET = 3;
/** At most this many MTCs per clock step; a longer gap skips ahead (the CTC jump shows it, §3.9). */
const MAX_MTC_BURST = 4096;
const TWO32 = 4294967296;

/** Intel PT packet generation for one logical processor of the model. */
export class PacketGenerator extends PacketEmitter implements TraceEvents {
  /** Ground truth, when enabled. */
  readonly truth: TruthRecorder | null;
  /** The internal buffer (occupancy, `dropped`). */
  readonly internal: InternalBuffer;
  readonly clock: ModelClock;
  private readonly sink: TraceSink;
  private readonly rets = new RetStack();
  private readonly psbCyc: boolean;
  private readonly fixedPsbPeriod: number;
  private readonly tsx: boolean;
  private readonly compat: boolean;
  private readonly flushAt: number;
  private readonly cpi: number;
  private readonly cpb: number;
  private readonly replay: boolean;
  /** Active truth recorder: null when off or during an overflow. */
  private rec: TruthRecorder | null;

  // Configuration from the RTIT MSRs (decoded at TraceEn 0→1); CTL fields under their SDM names.
  private cfg: TraceConfig | null = null;
  private OS = false;
  private User = false;
  private BranchEn = false;
  private CR3Filter = false;
  private cr3MatchPfn = 0;
  private DisRETC = false;
  private DisTNT = false;
  private filter: Ranges = NO_RANGES;
  private stop: Ranges = NO_RANGES;
  private rangesOn = false;

  // Enables (docs/sdm/README.md §2) and STATUS.
  private traceEn = false;
  private triggerEn = false;
  private contextEn = false;
  private filterEn = false;
  private packetEn = false;
  private stopped = false;
  private error = false;
  private pendPsb = false;
  /** A PSB fell due inside the untraced handler and waits (GeneratorOptions.deferPsbInHandler). */
  private psbWaiting = false;
  private readonly deferPsb: boolean;

  // Architectural context.
  private cpl = 3;
  private cr3 = 0;
  private mode: ExecMode = 1;
  private hidden = false;

  // Byte accounting: PacketByteCnt is (flushedTotal + pos) mod 2^17 (README Open Question 21).
  private flushedTotal = 0;
  private nextPsb = Infinity;
  /** End-of-event housekeeping runs when flushedTotal + pos reaches this (−∞ during an overflow). */
  private nextCheck = Infinity;
  /** … or when the clock reaches this cycle (the next MTC). */
  private nextTime = Infinity;
  private overflow = false;

  constructor(opts: GeneratorOptions) {
    super();
    this.sink = opts.sink;
    this.psbCyc = opts.psbCyc ?? true;
    this.fixedPsbPeriod = opts.fixedPsbPeriod ?? 4096;
    this.tsx = opts.tsx ?? false;
    this.compat = opts.libiptCompat ?? false;
    this.replay = opts.replay ?? true;
    this.deferPsb = opts.deferPsbInHandler ?? false;
    this.flushAt = Math.min(opts.flushBytes ?? 4096, SCRATCH_BYTES);
    this.clock = new ModelClock(opts.clock);
    this.cpi = this.clock.cfg.cyclesPerInstruction;
    this.cpb = this.clock.cfg.cyclesPerBranch;
    const buffer = opts.buffer ?? UNLIMITED_BUFFER;
    if (buffer.capacity < 64) throw new RangeError('internal buffer: capacity must be at least 64 bytes');
    this.internal = new InternalBuffer(buffer);
    this.truth = opts.truth ? new TruthRecorder(() => this.clock.tsc(this.cycles)) : null;
    this.rec = this.truth;
    if (opts.context) { this.cpl = opts.context.cpl; this.cr3 = opts.context.cr3; this.mode = opts.context.mode; }
  }

  // ---------------------------------------------------------------- state

  /** PacketEn = TriggerEn ∧ ContextEn ∧ FilterEn ∧ BranchEn (internal; for tests and tools). */
  get PacketEn(): boolean { return this.packetEn; }
  /** Core cycles of the modelled clock. */
  get now(): number { return this.cycles; }
  /** Bytes dropped in the internal buffer (losses.json `dropped`). */
  get dropped(): number { return this.internal.dropped; }
  /** True while packets are being dropped. */
  get overflowing(): boolean { return this.overflow; }
  /** The current context. */
  get context(): ExecContext { return { cpl: this.cpl, cr3: this.cr3, mode: this.mode }; }

  /** The STATUS fields the generator owns. */
  status(): GeneratorStatus {
    return {
      FilterEn: this.filterEn, ContextEn: this.contextEn, TriggerEn: this.triggerEn,
      Error: this.error, Stopped: this.stopped, PendPSB: this.pendPsb,
      PacketByteCnt: this.psbCyc ? (this.flushedTotal + this.pos) % (1 << 17) : 0,
    };
  }

  /** `base` (e.g. the MSR file's STATUS, for PendTopaPMI) with the generator's fields replaced. */
  statusValue(base: bigint): bigint {
    const s = this.status();
    const own = IA32_RTIT_STATUS.encode({
      FilterEn: true, ContextEn: true, TriggerEn: true, Error: true, Stopped: true, PendPSB: true, PacketByteCnt: 0x1ffff,
    });
    return (base & ~own) | IA32_RTIT_STATUS.encode(s);
  }

  /** Sets CPL/CR3/mode while tracing is off (initial state, or changes made in untraced code). */
  setContext(ctx: ExecContext): void {
    this.cpl = ctx.cpl; this.cr3 = ctx.cr3; this.mode = ctx.mode;
  }

  /** Hands every generated byte to the sink now. */
  flush(): void {
    if (this.overflow) return;
    this.flushScratch();
  }

  /** The output engine stopped (ToPA STOP → Stopped, operational error → Error): TriggerEn := 0, no packets (§2). */
  outputStopped(reason: 'stop' | 'error'): void {
    if (reason === 'stop') this.stopped = true; else this.error = true;
    this.triggerEn = false;
    this.setPacketEn();
    this.limit = 0;
    this.nextCheck = -Infinity;
    this.nextTime = Infinity;
  }

  // ---------------------------------------------------------------- hot path

  /** n non-branch instructions retired. */
  instructions(count: number): void {
    this.cycles += count * this.cpi;
    if (this.cycles >= this.nextTime) this.timeTick();
  }

  /** Conditional branch: one TNT bit (§10 "Conditional branch"). */
  branchJcc(ip: number, nextIp: number, target: number, taken: boolean): void {
    this.cycles += this.cpb;
    if (taken && this.rangesOn) this.nearRanged(JCC, 'jcc', ip, nextIp, target, false);
    else if (this.packetEn) {
      if (!this.DisTNT) this.tntBit(taken ? 1 : 0);
      if (this.rec !== null) this.rec.branch(ip, 'jcc', taken, taken ? target : nextIp);
    }
    if (this.flushedTotal + this.pos >= this.nextCheck || this.cycles >= this.nextTime) this.housekeeping(taken ? target : nextIp);
  }

  /** Direct JMP/CALL: no packet (§10 "Direct JMP/CALL"); a CALL pushes its Next IP unless zero-length. */
  branchDirect(kind: NearKind, ip: number, nextIp: number, target: number, zeroLength = false): void {
    this.cycles += this.cpb;
    if (this.rangesOn) this.nearRanged(DIRECT, kind, ip, nextIp, target, zeroLength);
    else if (this.packetEn) {
      if (kind === 'call' && !zeroLength && !this.DisRETC) this.rets.push(nextIp);
      if (this.rec !== null) this.rec.branch(ip, kind, undefined, target);
    }
    if (this.flushedTotal + this.pos >= this.nextCheck || this.cycles >= this.nextTime) this.housekeeping(target);
  }

  /** Indirect JMP/CALL: TIP(target) (§10 "Indirect JMP/CALL"). */
  branchIndirect(kind: NearKind, ip: number, nextIp: number, target: number): void {
    this.cycles += this.cpb;
    if (this.rangesOn) this.nearRanged(INDIRECT, kind, ip, nextIp, target, false);
    else if (this.packetEn) {
      if (kind === 'call' && !this.DisRETC) this.rets.push(nextIp);
      this.ipPacket(O.OPC_TIP, target);
      if (this.rec !== null) this.rec.branch(ip, kind, undefined, target);
    }
    if (this.flushedTotal + this.pos >= this.nextCheck || this.cycles >= this.nextTime) this.housekeeping(target);
  }

  /** Near RET: a TNT "1" when compressed, otherwise TIP(target) (§7, §10). */
  ret(ip: number, nextIp: number, target: number): void {
    this.cycles += this.cpb;
    if (this.rangesOn) this.nearRanged(RET, 'ret', ip, nextIp, target, false);
    else if (this.packetEn) {
      this.retPackets(target);
      if (this.rec !== null) this.rec.branch(ip, 'ret', undefined, target);
    }
    if (this.flushedTotal + this.pos >= this.nextCheck || this.cycles >= this.nextTime) this.housekeeping(target);
  }

  /** True when `replayPath` may run: allowed, truth recording off, no IP filter or TraceStop range, CYCEn=0. */
  get replayable(): boolean {
    return this.replay && this.truth === null && !this.rangesOn && !this.CYCEn;
  }

  /**
   * Retires the near branches [from, end) of a packed path, starting at offset `land`, exactly as
   * `instructions(n)` followed by branchJcc / branchDirect / branchIndirect / ret for each would
   * (same packets, clock, RET stack, PSB and timing housekeeping), on locals and without a call:
   * a TNT bit, a RET-stack push or pop, a TIP with IPBytes 001/010. Returns the index of the
   * first branch it did not retire: `end`; a branch it leaves to the caller (`retirePacked`, or the
   * engine for the exit's far transfer) because it may need room, meets a timing edge or needs
   * another TIP form; or the branch after one that needed end-of-event housekeeping (PSB+, MTC,
   * overflow), which may have handed bytes to the sink (the caller then checks for a PMI).
   * Does nothing unless `replayable`.
   */
  replayPath(p: PackedPath, from: number, end: number, land: number): number {
    if (!this.replayable) return from;
    // Local copies of B_* and O.* (an imported binding costs a load per use in the loop).
    const cJcc = B_JCC, cCall = B_CALL, cJmpInd = B_JMP_IND, cCallInd = B_CALL_IND, cRet = B_RET, cOther = B_OTHER;
    const TIP16 = (O.IPB_UPDATE16 << 5) | O.OPC_TIP, TIP32 = (O.IPB_UPDATE32 << 5) | O.OPC_TIP;
    const path = p.path, landing = p.landing;
    const base = p.base, offsetMask = p.offsetMask, takenMask = p.takenMask;
    const cpi = this.cpi, cpb = this.cpb;
    const rets = this.rets, slots = rets.slots, DEPTH = RET_STACK_DEPTH;
    const buf = this.buf;
    const DisTNT = this.DisTNT, DisRETC = this.DisRETC;
    // Every target is in [0, 2^32) and LastIP's upper half is 0 (no post-OVF IP): the inline TIP
    // forms (IPBytes 001/010 against LastIP, §5 policy) are the ones ipPacket would choose.
    const fastTip = base >= 0 && base + offsetMask < TWO32 && !this.postOvf && this.lastHi === 0;
    // A branch writes at most 6 bytes inline (TNT-8 + a 5-byte TIP), so pos <= room needs no makeRoom;
    // with PacketEn=0 it writes none.
    const packetEn = this.packetEn, room = packetEn ? this.limit - 6 : Infinity;
    const checkAt = this.nextCheck - this.flushedTotal, nextTime = this.nextTime;
    let cycles = this.cycles, pos = this.pos, bits = this.tntBits, nt = this.tntN, lastLo = this.lastLo;
    let top = rets.top, count = rets.count;
    /** The `to` IP of a branch after which housekeeping is due (the loop stops there). */
    let due: number | undefined;
    let i = from;
    for (; i < end; i++) {
      const e = path[i]!;
      const w = landing[2 * land]!;
      const c = w & 7;
      const at = cycles + (w >> 3) * cpi;
      if (e < 0 || c === cOther || at >= nextTime || pos > room || (c >= cJmpInd && !fastTip)) break;
      const to = e & offsetMask;
      const target = base + to;
      cycles = at + cpb;
      if (packetEn) {
        let tip = false;
        if (c === cJcc) {
          if (!DisTNT) {
            bits = (bits << 1) | ((e & takenMask) !== 0 ? 1 : 0);     // tntBit(): a TNT-8 at 6 results (§6)
            if (++nt === 6) { buf[pos++] = ((1 << nt) | bits) << 1; bits = 0; nt = 0; }
          }
        } else if (c === cCall) {
          if (!DisRETC) {                                           // RetStack.push(Next IP) (§7)
            slots[top] = base + landing[2 * land + 1]!;
            top = (top + 1) & (DEPTH - 1);
            if (count < DEPTH) count++;
          }
        } else if (c === cRet) {
          let matched = false;
          if (!DisRETC && count !== 0) {                            // RetStack.popMatches(target)
            count--;
            top = (top + DEPTH - 1) & (DEPTH - 1);
            matched = slots[top] === target;
          }
          if (!matched) tip = true;
          else if (!DisTNT) {
            bits = (bits << 1) | 1;                                 // compressed RET: TNT "1"
            if (++nt === 6) { buf[pos++] = ((1 << nt) | bits) << 1; bits = 0; nt = 0; }
          }
        } else if (c >= cJmpInd) {
          if (c === cCallInd && !DisRETC) {
            slots[top] = base + landing[2 * land + 1]!;
            top = (top + 1) & (DEPTH - 1);
            if (count < DEPTH) count++;
          }
          tip = true;
        }
        if (tip) {
          // ipPacket(TIP, target): pending TNT first, then the TIP.
          if (nt !== 0) { buf[pos++] = ((1 << nt) | bits) << 1; bits = 0; nt = 0; }
          buf[pos + 1] = target & 0xff;
          buf[pos + 2] = (target >>> 8) & 0xff;
          if (target >>> 16 === lastLo >>> 16) {
            buf[pos] = TIP16;
            pos += 3;
          } else {
            buf[pos] = TIP32;
            buf[pos + 3] = (target >>> 16) & 0xff;
            buf[pos + 4] = target >>> 24;
            pos += 5;
          }
          lastLo = target;
        }
      }
      land = to;
      if (pos >= checkAt || cycles >= nextTime) { due = target; i++; break; }
    }
    this.cycles = cycles; this.pos = pos; this.tntBits = bits; this.tntN = nt; this.lastLo = lastLo; rets.top = top; rets.count = count;
    if (due !== undefined) this.housekeeping(due);
    return i;
  }

  /**
   * One near branch of a packed path through the event methods: `instructions(n)`, then the
   * branch's method with the arguments the engine would pass. `e` is its path entry.
   */
  retirePacked(p: PackedPath, site: number, e: number, n: number): void {
    if (n > 0) this.instructions(n);
    const base = p.base;
    const ip = base + p.siteOff[site]!;
    const nextIp = base + p.siteNext[site]!;
    const to = base + (e & p.offsetMask);
    switch (p.siteClass[site]) {
      case B_JCC: this.branchJcc(ip, nextIp, base + p.siteTarget[site]!, (e & p.takenMask) !== 0); break;
      case B_JMP: this.branchDirect('jmp', ip, nextIp, to, false); break;
      case B_CALL: this.branchDirect('call', ip, nextIp, to, false); break;
      case B_CALL_ZERO: this.branchDirect('call', ip, nextIp, to, true); break;
      case B_JMP_IND: this.branchIndirect('jmp', ip, nextIp, to); break;
      case B_CALL_IND: this.branchIndirect('call', ip, nextIp, to); break;
      case B_RET: this.ret(ip, nextIp, to); break;
      default: throw new RangeError(`generator: site ${site} of the packed path is not a near branch`);
    }
  }

  private retPackets(target: number): void {
    if (!this.DisRETC && this.rets.popMatches(target)) {
      if (!this.DisTNT) this.tntBit(1);
    } else {
      this.ipPacket(O.OPC_TIP, target);
    }
  }

  /** A near branch with IP filtering or TraceStop configured: FilterEn follows the target (README §4.2). */
  private nearRanged(cls: number, kind: TruthBranchKind, ip: number, nextIp: number, target: number, zeroLength: boolean): void {
    const pe0 = this.packetEn;
    const stop = this.land(target);
    const pe1 = this.packetEn;
    const rec = this.rec;
    if (pe0 && pe1) {
      if (cls === JCC) { if (!this.DisTNT) this.tntBit(1); }
      else if (cls === RET) this.retPackets(target);
      else {
        if (kind === 'call' && !this.DisRETC && !zeroLength) this.rets.push(nextIp);
        if (cls === INDIRECT) this.ipPacket(O.OPC_TIP, target);
      }
      if (rec !== null) rec.branch(ip, kind, cls === JCC ? true : undefined, target);
    } else if (pe0) {
      // PacketEn 1→0: the TIP.PGD replaces the TNT bit or TIP (§3.3 replacement rule).
      this.rets.clear();
      const withIp = cls !== JCC || this.compat;
      if (withIp) this.ipPacket(O.OPC_TIP_PGD, target); else this.ipSuppressed(O.OPC_TIP_PGD);
      if (rec !== null) { rec.branch(ip, kind, cls === JCC ? true : undefined, target); rec.disable(withIp ? target : undefined); }
    } else if (pe1) {
      this.enablePackets(target);
    }
    if (stop) this.traceStopHit();
  }

  // ---------------------------------------------------------------- far transfers, events

  /** Far CALL/JMP/RET, IRET, SYSCALL/SYSRET, SYSENTER/SYSEXIT (§10 "Far CALL/JMP/RET…"). */
  farTransfer(kind: FarKind, ip: number, nextIp: number, target: number, cpl: number, cr3: number, mode: ExecMode): void {
    this.cycles += this.cpb;
    const pe0 = this.packetEn;
    const changes = this.switchContext(cpl, cr3, mode);
    const stop = this.land(target);
    const suppressed = this.transferPackets(pe0, undefined, target, changes);
    if (pe0 && this.rec !== null) {
      this.rec.branch(ip, FAR_TRUTH[kind], undefined, suppressed ? undefined : target);
      if (!this.packetEn) this.rec.disable(suppressed ? undefined : target);
    }
    if (stop) this.traceStopHit();
    this.endEvent(target);
  }

  /** Interrupt or exception: FUP(NLIP or CLIP, §11), PIP?, MODE.Exec?, TIP(handler) (§10). */
  interrupt(kind: InterruptKind, ip: number, nextIp: number, handler: number, cpl: number, cr3: number, mode: ExecMode): void {
    this.cycles += this.cpb;
    const fupIp = kind === 'external' || kind === 'nmi' || kind === 'trap' ? nextIp : ip;
    const pe0 = this.packetEn;
    const changes = this.switchContext(cpl, cr3, mode);
    const stop = this.land(handler);
    const suppressed = this.transferPackets(pe0, fupIp, handler, changes);
    if (pe0 && this.rec !== null) {
      if (!suppressed) this.rec.async(fupIp, handler);
      if (!this.packetEn) this.rec.disable(suppressed ? undefined : handler);
    }
    if (stop) this.traceStopHit();
    this.endEvent(handler);
  }

  /**
   * The driver's untraced handler is entered (a PMI or a slice preemption, docs/design.md): an
   * interrupt after the instruction before `nextIp`, into code whose context is never traced.
   */
  untracedEnter(nextIp: number): void {
    this.cycles += this.cpb;
    const pe0 = this.packetEn;
    this.hidden = true;
    this.recomputeContext();
    this.setPacketEn();
    this.transferPackets(pe0, nextIp, nextIp, 0);
    if (pe0 && this.rec !== null) this.rec.disable();
    this.endEvent(nextIp);
  }

  /** The untraced handler returns to `nextIp` (an IRET), optionally into another context. */
  untracedExit(nextIp: number, ctx?: ExecContext): void {
    this.cycles += this.cpb;
    this.hidden = false;
    if (this.psbWaiting && this.triggerEn) {
      this.psbWaiting = false;
      this.psbPlus(nextIp, false);
      this.nextPsb = this.psbAfter(this.flushedTotal + this.pos);
      this.nextCheck = this.nextPsb;
    }
    const changes = ctx ? this.switchContext(ctx.cpl, ctx.cr3, ctx.mode) : this.switchContext(this.cpl, this.cr3, this.mode);
    const stop = this.land(nextIp);
    this.transferPackets(false, undefined, nextIp, changes);
    if (stop) this.traceStopHit();
    this.endEvent(nextIp);
  }

  /** MOV to CR3 (§10 "MOV to CR3" rows). */
  movCr3(ip: number, nextIp: number, cr3: number): void {
    this.cycles += this.cpi;
    const pe0 = this.packetEn;
    const ctx0 = this.contextEn;
    this.cr3 = cr3;
    this.recomputeContext();
    let stop = false;
    if (this.triggerEn && this.contextEn) {
      // TraceStop: a MOV CR3 executed inside a TraceStop range (README §4.4).
      if (this.stop.a.length && inRanges(this.stop, ip)) { stop = true; this.filterEn = false; }
      else if (!ctx0 && this.filter.a.length) this.filterEn = inRanges(this.filter, nextIp);
    }
    this.setPacketEn();
    const pe1 = this.packetEn;
    const pip = this.triggerEn && this.contextEn && this.OS;   // model: a PIP on every MOV to CR3 (§3.4)
    if (pe0 && pe1) {
      if (pip) this.pip(cr3);
    } else if (pe0) {
      this.rets.clear();
      if (!this.contextEn) this.ipSuppressed(O.OPC_TIP_PGD);
      else { if (pip) this.pip(cr3); this.ipPacket(O.OPC_TIP_PGD, nextIp); }
      if (this.rec !== null) this.rec.disable(this.contextEn ? nextIp : undefined);
    } else if (pe1) {
      if (pip) this.pip(cr3);
      this.enablePackets(nextIp);
    } else if (pip) {
      this.pip(cr3);
    }
    if (stop) this.traceStopHit();
    this.endEvent(nextIp);
  }

  /** PTWRITE: PTW, then FUP(its IP) when FUPonPTW (§3.16; needs TriggerEn, ContextEn, FilterEn, PTWEn). */
  ptwrite(ip: number, value: bigint, size: 4 | 8, nextIp: number = ip): void {
    this.cycles += this.cpi;
    const cfg = this.cfg;
    if (cfg !== null && this.triggerEn && this.contextEn && this.filterEn && cfg.PTWEn) {
      this.ptw(value, size, cfg.FUPonPTW);
      if (cfg.FUPonPTW) this.ipPacket(O.OPC_FUP, ip);
    }
    this.endEvent(nextIp);
  }

  // ---------------------------------------------------------------- TraceEn

  /** WRMSR/XRSTORS sets TraceEn (docs/sdm/msrs.md §3.4; §10 first four rows; §8 (a)). */
  traceEnable(nextIp: number, regs: RtitRegs, ip?: number): void {
    if (this.traceEn) return;
    const cfg = decodeTraceConfig(regs, this.psbCyc, this.fixedPsbPeriod);
    this.applyConfig(cfg);
    this.traceEn = true;
    this.stopped = cfg.Stopped;
    this.error = cfg.Error;
    this.pendPsb = cfg.PendPSB;
    this.triggerEn = !cfg.Stopped && !cfg.Error;
    this.packetEn = false;
    if (!this.triggerEn) return;
    this.flushedTotal = cfg.PacketByteCnt;
    this.pos = 0;
    this.limit = 0;
    this.dropTnt();
    this.rets.clear();
    this.overflow = false;
    this.rec = this.truth;
    this.lastCyc = this.cycles;   // the cycle counter restarted when TriggerEn was cleared (§3.11)
    this.nextTime = this.mtcOn() ? this.clock.nextMtcCycle(this.cycles, cfg.MTCFreq) : Infinity;
    this.contextEn = this.computeContextEn();
    let stop = false;
    if (this.contextEn) {
      if (ip !== undefined && this.stop.a.length && inRanges(this.stop, ip)) stop = true;
      this.filterEn = this.filter.a.length ? inRanges(this.filter, nextIp) : true;
    } else if (!this.filter.a.length) {
      this.filterEn = true;
    }
    if (stop) this.filterEn = false;
    const psbNow = !this.psbCyc || cfg.PacketByteCnt === 0 || (cfg.InjectPsbPmiOnEnable && cfg.PendPSB);
    // A PSB is due when floor(PacketByteCnt / period) changes (README Open Question 21).
    if (psbNow) { this.psbPlus(nextIp, false); this.nextPsb = this.psbAfter(this.flushedTotal + this.pos); }
    else { this.nextPsb = this.psbAfter(cfg.PacketByteCnt); this.timingPackets(); }
    this.setPacketEn();
    if (this.packetEn) this.enablePackets(nextIp);
    this.nextCheck = this.nextPsb;
    if (stop) this.traceStopHit();
    this.endEvent(nextIp);
  }

  /** WRMSR/XSAVES at `ip` clears TraceEn: [TNT], FUP(CLIP), TIP.PGD() when PacketEn=1 (§10); then a full flush. */
  traceDisable(ip: number): void {
    if (!this.traceEn) return;
    this.traceEn = false;
    if (this.triggerEn) {
      let fup = false;
      if (this.overflow) {
        this.internal.flush(this.cycles);    // the flush drains the buffer: the overflow resolves here (APL11-like)
        fup = this.resolveOverflow(ip);
      }
      if (this.packetEn) {
        if (!fup) this.ipPacket(O.OPC_FUP, ip);
        this.ipSuppressed(O.OPC_TIP_PGD);
        if (this.rec !== null) this.rec.disable();
      }
      if ((this.psbWaiting || this.flushedTotal + this.pos >= this.nextPsb) && this.cfg?.InjectPsbPmiOnEnable) this.pendPsb = true;
      this.flushScratch();
    }
    this.internal.flush(this.cycles);
    this.triggerEn = false;
    this.psbWaiting = false;   // kept in PendPSB above, or lost with the disable
    this.setPacketEn();
    this.rets.clear();
    this.dropTnt();
    this.nextCheck = Infinity;
    this.nextTime = Infinity;
  }

  // ---------------------------------------------------------------- helpers

  private applyConfig(cfg: TraceConfig): void {
    this.cfg = cfg;
    this.OS = cfg.OS; this.User = cfg.User; this.BranchEn = cfg.BranchEn;
    this.CR3Filter = cfg.CR3Filter; this.cr3MatchPfn = cfg.cr3MatchPfn;
    this.DisRETC = cfg.DisRETC; this.DisTNT = cfg.DisTNT;
    this.CYCEn = cfg.CYCEn; this.cycMin = Math.max(1, cfg.cycMin);
    this.filter = cfg.filter; this.stop = cfg.stop;
    this.rangesOn = cfg.filter.a.length > 0 || cfg.stop.a.length > 0;
  }

  private mtcOn(): boolean { return this.cfg !== null && this.cfg.MTCEn; }

  private computeContextEn(): boolean {
    if (this.hidden) return false;
    if (this.cpl === 0 ? !this.OS : !this.User) return false;
    if (this.CR3Filter && Math.floor(this.cr3 / 4096) !== this.cr3MatchPfn) return false;
    return true;
  }

  /** ContextEn is re-evaluated only while TriggerEn=1 (README §2). */
  private recomputeContext(): void {
    if (this.triggerEn) this.contextEn = this.computeContextEn();
  }

  private setPacketEn(): void {
    this.packetEn = this.triggerEn && this.contextEn && this.filterEn && this.BranchEn;
  }

  /** Bits: 1 = CR3 changed, 2 = mode changed. Updates the context and ContextEn. */
  private switchContext(cpl: number, cr3: number, mode: ExecMode): number {
    const changes = (cr3 !== this.cr3 ? 1 : 0) | (mode !== this.mode ? 2 : 0);
    this.cpl = cpl; this.cr3 = cr3; this.mode = mode;
    this.recomputeContext();
    return changes;
  }

  /**
   * A taken branch or event lands at `target`: TraceStop check, then FilterEn, while
   * TriggerEn=1 and ContextEn=1 (README §4.2, §4.4; TraceStop wins on overlap). Updates PacketEn.
   */
  private land(target: number): boolean {
    let stop = false;
    if (this.triggerEn && this.contextEn) {
      if (this.stop.a.length && inRanges(this.stop, target)) { stop = true; this.filterEn = false; }
      else if (this.filter.a.length) this.filterEn = inRanges(this.filter, target);
      else this.filterEn = true;
    }
    this.setPacketEn();
    return stop;
  }

  /**
   * Packets of an uncompressed transfer (far transfer, interrupt: §10), PacketEn pe0 → this.packetEn.
   * Returns true when a TIP.PGD was written with its IP suppressed.
   */
  private transferPackets(pe0: boolean, fupIp: number | undefined, target: number, changes: number): boolean {
    const pe1 = this.packetEn;
    const pip = (changes & 1) !== 0 && this.triggerEn && this.contextEn && this.OS;
    if (pe0 && pe1) {
      if (fupIp !== undefined) this.ipPacket(O.OPC_FUP, fupIp);
      if (pip) this.pip(this.cr3);
      if ((changes & 2) !== 0) this.modeExec(this.mode);
      this.ipPacket(O.OPC_TIP, target);
    } else if (pe0) {
      this.rets.clear();
      if (fupIp !== undefined) this.ipPacket(O.OPC_FUP, fupIp);
      if (!this.contextEn || !this.triggerEn) { this.ipSuppressed(O.OPC_TIP_PGD); return true; }
      if (pip) this.pip(this.cr3);
      this.ipPacket(O.OPC_TIP_PGD, target);
    } else if (pe1) {
      if (pip) this.pip(this.cr3);
      this.enablePackets(target);
    } else if (pip) {
      this.pip(this.cr3);          // PacketEn 0→0 with ContextEn=1 (§10, [SDM16] 10f–13f)
    }
    return false;
  }

  /** PacketEn 0→1: MODE.Exec, TIP.PGE(ip); the RET stack restarts (§7). */
  private enablePackets(ip: number): void {
    this.rets.clear();
    this.modeExec(this.mode);
    this.ipPacket(O.OPC_TIP_PGE, ip);
    if (this.rec !== null) this.rec.enable(ip);
  }

  /** TraceStop hit: TraceStop packet, Stopped := 1, TriggerEn := 0 (README §4.4). Bytes so far go out; the sink is told no more come. */
  private traceStopHit(): void {
    if (this.triggerEn && this.contextEn) this.traceStopPacket();
    this.stopped = true;
    this.filterEn = false;
    if (!this.overflow) this.flushScratch();
    this.triggerEn = false;
    this.setPacketEn();
    this.rets.clear();
    this.nextCheck = -Infinity;
    this.nextTime = Infinity;
    this.sink.traceStopped?.();
  }

  /** TraceEn 0→1 without PSB+: TSC?, TMA?, CBR (§10). */
  private timingPackets(): void {
    const cfg = this.cfg!;
    if (cfg.TSCEn) {
      this.tscPacket(this.clock.tsc(this.cycles));
      if (cfg.MTCEn) this.tma(this.clock.art(this.cycles) & 0xffff, this.clock.fastCounter(this.cycles));
    }
    this.cbr(this.clock.cfg.cbr);
  }

  /** PSB+ in the model order PSB, [TSC, TMA], [PIP], CBR, [MODE.TSX], [MODE.Exec, FUP], PSBEND (§8). */
  private psbPlus(ip: number, withIp: boolean): void {
    const cfg = this.cfg!;
    this.psb();
    this.resetLastIp();
    this.postOvf = false;
    this.rets.clear();
    if (cfg.TSCEn) {
      this.tscPacket(this.clock.tsc(this.cycles));
      if (cfg.MTCEn) this.tma(this.clock.art(this.cycles) & 0xffff, this.clock.fastCounter(this.cycles));
    }
    if (this.contextEn && this.OS) this.pip(this.cr3);
    this.cbr(this.clock.cfg.cbr);
    if (this.tsx && this.contextEn && this.BranchEn) this.modeTsx(false, false);
    if (withIp) { this.modeExec(this.mode); this.ipPacket(O.OPC_FUP, ip); }
    this.psbend();
    this.pendPsb = false;
  }

  /** The first multiple of the PSB period above `total`. */
  private psbAfter(total: number): number {
    const p = this.cfg!.psbPeriod;
    return (Math.floor(total / p) + 1) * p;
  }

  /** After an event whose packets may have crossed a PSB threshold or a timing edge. */
  private endEvent(nextIp: number): void {
    if (this.flushedTotal + this.pos >= this.nextCheck || this.cycles >= this.nextTime) this.housekeeping(nextIp);
  }

  /** End-of-event work: overflow bookkeeping, MTCs, a due PSB+ (§8, §12). `ip` = the next instruction. */
  private housekeeping(ip: number): void {
    if (!this.triggerEn) {
      this.pos = 0;
      this.nextCheck = Infinity;
      this.nextTime = Infinity;
      return;
    }
    if (this.overflow) {
      this.discard();
      if (!this.internal.canResume(this.cycles)) return;
      this.resolveOverflow(ip);
    }
    if (this.cycles >= this.nextTime) this.timeTick();
    if (this.flushedTotal + this.pos >= this.nextPsb) {
      if (this.cfg!.InjectPsbPmiOnEnable) this.pendPsb = true;   // set when due, cleared once written (output.md §7.4)
      if (this.deferPsb && this.hidden) {
        this.psbWaiting = true;                                  // written at the resume (untracedExit), or kept in PendPSB
        this.nextPsb = Infinity;
      } else {
        this.psbPlus(ip, this.packetEn);
        this.nextPsb = this.psbAfter(this.flushedTotal + this.pos);
      }
    }
    this.nextCheck = this.overflow ? -Infinity : this.nextPsb;
  }

  /** MTCs for every ART edge 2^MTCFreq passed (§3.9); timing packets do not flush TNT. */
  private timeTick(): void {
    const cfg = this.cfg;
    if (cfg === null || !this.triggerEn || !cfg.MTCEn) { this.nextTime = Infinity; return; }
    let n = 0;
    let at = this.nextTime;
    while (at <= this.cycles) {
      if (++n > MAX_MTC_BURST) { at = this.clock.nextMtcCycle(this.cycles, cfg.MTCFreq); break; }
      this.mtc(Math.floor(this.clock.art(at) / 2 ** cfg.MTCFreq) & 0xff, at);
      at = this.clock.nextMtcCycle(at, cfg.MTCFreq);
    }
    this.nextTime = at;
  }

  /**
   * The overflow clears: OVF, then FUP(ip) uncompressed when PacketEn=1 and BranchEn=1; the RET
   * stack and pending TNT bits are gone (§12). Returns whether the FUP was written.
   */
  private resolveOverflow(ip: number): boolean {
    this.discard();
    this.overflow = false;
    this.rec = this.truth;
    this.limit = 0;
    this.dropTnt();
    this.rets.clear();
    this.postOvf = true;
    this.ovf();
    const fup = this.packetEn && this.BranchEn;
    if (fup) this.ipPacket(O.OPC_FUP, ip);
    if (this.rec !== null) this.rec.overflow(fup ? ip : undefined);
    this.nextCheck = this.nextPsb;
    return fup;
  }

  private startOverflow(): void {
    this.overflow = true;
    this.rec = null;
    this.limit = SCRATCH_BYTES;
    this.nextCheck = -Infinity;
  }

  /** Bytes written since the last flush are lost (overflow) or not generated (TriggerEn=0). */
  private discard(): void {
    if (this.overflow) this.internal.drop(this.pos);
    this.pos = 0;
  }

  private flushScratch(): void {
    const n = this.pos;
    if (n === 0) return;
    this.pos = 0;
    this.internal.accept(n, this.cycles);
    this.flushedTotal += n;
    this.sink.put(this.buf, 0, n);
  }

  protected makeRoom(n: number): void {
    if (this.overflow || !this.triggerEn) {
      this.discard();
      this.limit = this.triggerEn ? SCRATCH_BYTES : 0;
      return;
    }
    this.flushScratch();
    if (!this.triggerEn) { this.limit = 0; return; }   // the output stopped during put()
    const free = this.internal.free(this.cycles);
    if (n > free) { this.startOverflow(); return; }
    this.limit = Math.min(this.flushAt, free);
  }
}
