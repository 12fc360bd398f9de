// The PT unit's output stage (docs/sdm/output.md §1): picks single-range or ToPA
// output at each TraceEn 0→1 from CTL.ToPA/FabricEn, and is the OutputPort the
// MSR file loads and writes back. Works over any memory with synchronous
// access (SyncPhysMemory).
import type { MsrFile, OutputPort } from '../msr-file.js';
import type { OutputGuard, Reachable } from './output-guard.js';
import { SingleRangeOutput } from './single-range.js';
import { readU64, type SyncPhysMemory } from './sync-phys.js';
import { reachableTopa, TopaOutput, type TopaOptions } from './topa.js';

export type OutputScheme = 'single-range' | 'topa' | 'fabric';

/** The output engines of one logical processor, attached to its MSR file. */
export class OutputUnit implements OutputPort {
  readonly single: SingleRangeOutput;
  readonly topa: TopaOutput;
  private scheme: OutputScheme | undefined;
  /** Bytes handed to the unit while no engine could take them (tracing stopped, error, fabric). */
  discarded = 0;

  constructor(private readonly file: MsrFile, private readonly phys: SyncPhysMemory, opts: TopaOptions = {}, guard?: OutputGuard) {
    this.single = new SingleRangeOutput(file, phys, guard);
    this.topa = new TopaOutput(file, phys, opts, guard);
    file.output = this;
  }

  /**
   * What PT may write or read while TraceEn=1 (the memory oracle's free check): the latched
   * engine's tables and regions, or, when TraceEn=1 latched nothing (Stopped or Error at the
   * enable), what the output MSRs would load at the next enable. Empty while TraceEn=0.
   */
  reachable(): Reachable[] {
    if (!this.file.traceEn) return [];
    if (this.scheme === 'topa') return this.topa.reachable();
    if (this.scheme === 'single-range') return this.single.reachable();
    if (this.scheme === 'fabric') return [];
    const f = this.file;
    if (((f.ctl >> 6n) & 1n) === 1n) return [];
    if (((f.ctl >> 8n) & 1n) === 1n) {
      return reachableTopa((a) => readU64(this.phys, a), f.outputBase);
    }
    const mask = (f.maskPtrs & 0xffff_ffffn) | 0x7fn;
    return [{ base: f.outputBase & ~mask, size: Number(mask + 1n), what: 'single-range output' }];
  }

  /** Bytes written to memory by either engine. */
  get written(): number {
    return this.single.written + this.topa.written;
  }

  /** The scheme chosen at the last TraceEn 0→1 (docs/sdm/output.md §1 table). */
  get current(): OutputScheme | undefined {
    return this.scheme;
  }

  enable(m: { readonly ctl: bigint; readonly outputBase: bigint; readonly maskPtrs: bigint }): void {
    const fabricEn = (m.ctl >> 6n) & 1n, toPA = (m.ctl >> 8n) & 1n;
    this.scheme = fabricEn ? 'fabric' : toPA ? 'topa' : 'single-range';
    if (this.scheme === 'topa') this.topa.enable(m);
    else if (this.scheme === 'single-range') this.single.enable(m);
  }

  disable(): { outputBase: bigint; maskPtrs: bigint } {
    const s = this.scheme;
    this.scheme = undefined;
    if (s === 'topa') return this.topa.disable();
    if (s === 'single-range') return this.single.disable();
    return { outputBase: this.file.outputBase, maskPtrs: this.file.maskPtrs }; // fabric: memory pointers untouched
  }

  /** Hands trace bytes to the current engine (the packet generator's sink); synchronous, like the sink. */
  writeBytes(bytes: Uint8Array): void {
    const before = this.written;
    if (this.scheme === 'topa') this.topa.writeBytes(bytes);
    else if (this.scheme === 'single-range') this.single.writeBytes(bytes);
    this.discarded += bytes.length - (this.written - before);
  }

  /** A TraceStop set Stopped: no byte follows until TraceEn is set again (docs/sdm/output.md §4.5 model choice). */
  traceStopped(): void {
    if (this.scheme === 'topa') this.topa.traceStopped();
  }
}
