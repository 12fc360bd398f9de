// One logical processor's trace path (docs/sdm/README.md §1 diagram): the packet
// generator, fed by the execution engine, writes through the output unit into
// memory; the MSR file tells the generator of every TraceEn transition (WRMSR,
// XRSTORS, XSAVES) and reads PacketByteCnt/PendPSB/Stopped back from it. The
// CPU starts in the driver's untraced handler (docs/design.md "How the model runs").
import { IA32_RTIT_STATUS } from '../../../driver/hw/msrs.js';
import type { MsrFile, TraceHooks } from '../msr-file.js';
import type { OutputUnit } from '../output/output-unit.js';
import type { ClockConfig } from '../trace/clock.js';
import { ipFromBigInt } from '../trace/events.js';
import { PacketGenerator } from '../trace/generator.js';
import type { InternalBufferConfig } from '../trace/internal-buffer.js';
import type { TraceSink } from '../trace/sink.js';

/** Knobs of the packet generator and the handler model, per SimTarget. */
export interface TraceModelOptions {
  /** Record truth.jsonl (docs/formats/flow-json.md). Default false. */
  readonly truth?: boolean;
  /** Internal buffer capacity and drain rate (OVF when it cannot drain). Default: never overflows. */
  readonly buffer?: InternalBufferConfig;
  readonly clock?: Partial<ClockConfig>;
  /** TIP.PGD(BLIP) after a jcc that leaves the filter range, as libipt 2.0.5 expects (docs/sdm/packets.md §10 notes). */
  readonly libiptCompat?: boolean;
  /** Bytes the generator gathers before they reach the output engine (the PMI latency grain). Default 4096. */
  readonly flushBytes?: number;
  /** The CPU has TSX (MODE.TSX in PSB+). Default false. */
  readonly tsx?: boolean;
  /**
   * Replay stretches of near branches in one generator call (the fast path; default true). False
   * retires every branch through the generator's event methods: same output, for differential tests.
   */
  readonly replay?: boolean;
  /** A PSB due inside the driver's handler waits for the resume (GeneratorOptions.deferPsbInHandler). Default false. */
  readonly deferPsbInHandler?: boolean;
}

/** The IP the driver's handler code runs at (model choice: a kernel text address, never traced). */
export const HANDLER_IP = ipFromBigInt(0xffff_ffff_8110_0000n);

// STATUS bits the generator owns while tracing (docs/sdm/msrs.md §4).
const STOPPED = 1n << 5n, ERROR = 1n << 4n, TRIGGER_EN = 1n << 2n;
const COUNTED = IA32_RTIT_STATUS.encode({ PendPSB: true, PacketByteCnt: 0x1ffff });

/** The generator, its sink into the output unit, and the PMI latch of one CPU. */
export class CpuTrace implements TraceHooks, TraceSink {
  readonly gen: PacketGenerator;
  /** A PMI was delivered through the LVT and no `pmi` event has reported it yet. */
  pmiPending = false;
  /** Output bytes written and generator cycles when the pending PMI was raised. */
  pmiWritten = 0;
  pmiCycles = 0;
  /** The CPU executes the driver's untraced handler (true before start and after exit). */
  inHandler = true;
  private stopReported = true;

  constructor(readonly file: MsrFile, readonly output: OutputUnit, o: TraceModelOptions = {}) {
    this.gen = new PacketGenerator({
      sink: this,
      psbCyc: file.caps.psbCyc,
      tsx: o.tsx ?? false,
      truth: o.truth ?? false,
      libiptCompat: o.libiptCompat ?? false,
      replay: o.replay ?? true,
      deferPsbInHandler: o.deferPsbInHandler ?? false,
      ...(o.buffer ? { buffer: o.buffer } : {}),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.flushBytes !== undefined ? { flushBytes: o.flushBytes } : {}),
    });
    this.gen.untracedEnter(HANDLER_IP); // the CPU starts in the handler: ContextEn forced to 0
    file.trace = this;
    file.onPmi = () => this.pmiDelivered();
  }

  /** Bytes the CPU wrote to memory. */
  get written(): number { return this.output.written; }

  // ------------------------------------------------------------- TraceSink

  /** Generator bytes go straight to the output engine; a STOP or an error there stops the generator (§2). */
  put(buf: Uint8Array, start: number, end: number): void {
    this.output.writeBytes(buf.subarray(start, end));
    this.checkOutput();
  }

  /** A TraceStop: the output engine settles what waits for more bytes (a ToPA PMI in its skid: docs/sdm/output.md §4.5). */
  traceStopped(): void {
    this.output.traceStopped();
  }

  // ------------------------------------------------------------- TraceHooks

  enabled(f: MsrFile): void {
    this.stopReported = !f.triggerEn;
    this.gen.traceEnable(HANDLER_IP, {
      ctl: f.ctl, status: f.status, cr3Match: f.cr3Match, addrA: f.addrA, addrB: f.addrB,
    }, HANDLER_IP);
  }

  disabling(_f: MsrFile): void {
    this.gen.traceDisable(HANDLER_IP);
    this.checkOutput();
  }

  /** PacketByteCnt and PendPSB from the generator; its TraceStop sets Stopped and clears TriggerEn. */
  status(base: bigint): bigint {
    const g = this.gen.status();
    let v = (base & ~COUNTED) | (this.gen.statusValue(0n) & COUNTED);
    if (g.Stopped) v |= STOPPED;
    if (g.Error) v |= ERROR;
    if (!g.TriggerEn) v &= ~TRIGGER_EN;
    return v;
  }

  // ------------------------------------------------------------- internals

  private checkOutput(): void {
    if (this.stopReported || this.file.triggerEn) return;
    this.stopReported = true;
    this.gen.outputStopped((this.file.status & ERROR) !== 0n ? 'error' : 'stop');
  }

  private pmiDelivered(): void {
    if (this.pmiPending) return;
    this.pmiPending = true;
    this.pmiWritten = this.output.written;
    this.pmiCycles = this.gen.now;
  }
}
