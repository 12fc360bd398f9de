// ToPA output (docs/sdm/output.md §4): the table walk, END (followed lazily),
// STOP, INT with a PMI after a configurable skid (cut short by a stop or a
// TraceStop), the maximum-table wrap,
// the §4.7 operational errors, single-entry (MENTRY=0) CPUs with their early
// PMI, and the entry cache knob (§4.8).
import { PtError } from '../../../driver/base/errors.js';
import type { MsrFile } from '../msr-file.js';
import type { SyncPhysMemory } from './sync-phys.js';
import { decodeTopaEntry, regionSize, topaEntryError, type TopaEntry, type TopaErrorRule } from './topa-entry.js';

/** docs/sdm/output.md §4.3, Open Question 10: the last slot of a 256 MiB table. */
export const MAX_TABLE_OFFSET = 0x0fff_fff8n;

export interface TopaOptions {
  /** Bytes written after the fill before the PMI is raised (the PMI is imprecise: §4.5). Default 0. */
  readonly pmiSkid?: number;
  /** MENTRY=0 CPUs raise the PMI this many bytes before an INT region is full (§4.6, Open Question 23). Default 512. */
  readonly earlyPmiMargin?: number;
  /** "none": read each entry when reached; "all-reachable-at-enable": cache the reachable tables (§4.8). */
  readonly topaCache?: 'none' | 'all-reachable-at-enable';
}

/** Upper bound of entries the cache walk reads; further entries are read when reached. */
const CACHE_LIMIT = 65_536;

/** The ToPA output engine of one logical processor. */
export class TopaOutput {
  private tableBase = 0n;
  private tableOffset = 0n;
  private outputOffset = 0n;
  private cur: TopaEntry | undefined;
  private active = false;
  private cache: Map<bigint, bigint> | undefined;
  private cacheFilled = false;
  private earlyRaised = false;
  private pmiSkidLeft: number | undefined;
  private readonly skid: number;
  private readonly margin: number;
  private readonly cacheMode: 'none' | 'all-reachable-at-enable';
  /** Bytes written to memory. */
  written = 0;
  /** The §4.7 rule of the last operational error, if any. */
  error: TopaErrorRule | 'no-memory' | undefined;

  constructor(private readonly file: MsrFile, private readonly phys: SyncPhysMemory, o: TopaOptions = {}) {
    this.skid = o.pmiSkid ?? 0;
    this.margin = o.earlyPmiMargin ?? 512;
    this.cacheMode = o.topaCache ?? 'none';
  }

  private get mentry(): boolean { return this.file.caps.topaMultipleEntries; }

  /** TraceEn 0→1: load proc_trace_table_base / _table_offset / _output_offset (§4.1). */
  enable(m: { readonly outputBase: bigint; readonly maskPtrs: bigint }): void {
    this.tableBase = m.outputBase;
    this.tableOffset = ((m.maskPtrs >> 7n) & 0x1ff_ffffn) << 3n;
    this.outputOffset = m.maskPtrs >> 32n;
    this.cur = undefined;
    this.error = undefined;
    this.earlyRaised = false;
    this.cache = this.cacheMode === 'none' ? undefined : new Map();
    this.cacheFilled = false;
    this.active = true;
    // Read ahead now, at the enable (§4.8): what the tables say at TraceEn 0→1 is what the CPU uses,
    // even if the driver edits them afterwards with TraceEn=1.
    if (this.cache) this.fillCache();
  }

  /** TraceEn 1→0: drop the cache, deliver a PMI still in its skid, return the exact pointers. */
  disable(): { outputBase: bigint; maskPtrs: bigint } {
    this.active = false;
    this.cache = undefined;
    this.flushPmi();
    return {
      outputBase: this.tableBase,
      maskPtrs: (this.outputOffset << 32n) | ((this.tableOffset >> 3n) << 7n) | 0x7fn,
    };
  }

  /** Writes trace bytes into the regions the tables describe (§4.3). Synchronous: the generator's sink is. */
  writeBytes(bytes: Uint8Array): void {
    let pos = 0;
    while (pos < bytes.length && this.active && this.file.triggerEn) {
      const e = this.cur ?? this.reach();
      if (!e) break;
      const size = BigInt(regionSize(e));
      let n = Math.min(bytes.length - pos, Number(size - this.outputOffset));
      if (this.pmiSkidLeft !== undefined) n = Math.min(n, Math.max(this.pmiSkidLeft, 1));
      const early = this.earlyPoint(e);
      if (early !== undefined && this.outputOffset < early) n = Math.min(n, Number(early - this.outputOffset));
      if (!(this.store(e.base + this.outputOffset, bytes.subarray(pos, pos + n)))) break;
      pos += n;
      this.written += n;
      this.outputOffset += BigInt(n);
      this.countSkid(n);
      if (early !== undefined && !this.earlyRaised && this.outputOffset >= early) {
        this.earlyRaised = true;
        this.file.markPendTopaPmi();
        this.schedulePmi();
      }
      if (this.outputOffset === size) this.regionFilled(e);
    }
  }

  /** MENTRY=0 with INT: the offset at which the early PMI is due (§4.6). */
  private earlyPoint(e: TopaEntry): bigint | undefined {
    if (this.mentry || !e.INT) return undefined;
    const at = BigInt(regionSize(e)) - BigInt(this.margin);
    return at > 0n ? at : 0n;
  }

  /** The region of `e` just became full: STOP first, then INT, then move on (§4.3–§4.5). */
  private regionFilled(e: TopaEntry): void {
    this.cur = undefined;
    if (e.STOP) {
      this.file.topaStop(); // OutputOffset stays = region size (Open Question 11)
      this.active = false;
    }
    if (e.INT && !(this.earlyRaised && !this.mentry)) {
      this.file.markPendTopaPmi();
      this.schedulePmi();
    }
    if (e.STOP) { this.flushPmi(); return; }
    this.tableOffset = this.tableOffset === MAX_TABLE_OFFSET ? 0n : this.tableOffset + 8n;
    this.outputOffset = 0n;
    this.earlyRaised = false;
  }

  /** Reads the entry at the table pointer, following END links lazily; undefined after an operational error. */
  private reach(): TopaEntry | undefined {
    for (let hops = 0; ; hops++) {
      const raw = this.readEntry(this.tableBase + this.tableOffset);
      if (raw === undefined) return this.fail('no-memory');
      const e = decodeTopaEntry(raw);
      const bad = topaEntryError(e, this.tableBase, this.tableOffset, this.file.caps.maxPhysAddr, this.mentry);
      if (bad) return this.fail(bad);
      if (e.END) {
        // A chain of END links without an output entry cannot exist: END in slot 0 is an error (4b).
        if (hops > CACHE_LIMIT) return this.fail('4b-end-in-entry-0');
        this.tableBase = e.base;
        this.tableOffset = 0n;
        this.outputOffset = 0n;
        continue;
      }
      if (this.outputOffset >= BigInt(regionSize(e))) return this.fail('3-output-offset'); // only when Stopped=0
      this.cur = e;
      return e;
    }
  }

  private readEntry(addr: bigint): bigint | undefined {
    if (this.cache && !this.cacheFilled) this.fillCache();
    const hit = this.cache?.get(addr);
    if (hit !== undefined) return hit;
    try {
      const b = this.phys.readNow(addr, 8);
      return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
    } catch (e) {
      if (e instanceof PtError && e.code === 'bad_address') return undefined;
      throw e;
    }
  }

  /** "all-reachable-at-enable": walk from the current pointer through END links, caching every entry. */
  private fillCache(): void {
    this.cacheFilled = true;
    const cache = this.cache!;
    let base = this.tableBase, off = this.tableOffset;
    while (cache.size < CACHE_LIMIT) {
      const addr = base + off;
      if (cache.has(addr)) return;
      let raw: bigint;
      try {
        const b = this.phys.readNow(addr, 8);
        raw = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
      } catch {
        return;
      }
      cache.set(addr, raw);
      const e = decodeTopaEntry(raw);
      if (topaEntryError(e, base, off, this.file.caps.maxPhysAddr, this.mentry)) return;
      if (e.END) { base = e.base; off = 0n; } else off = off === MAX_TABLE_OFFSET ? 0n : off + 8n;
    }
  }

  private store(addr: bigint, data: Uint8Array): boolean {
    try {
      this.phys.writeNow(addr, data);
      return true;
    } catch (e) {
      if (!(e instanceof PtError && e.code === 'bad_address')) throw e;
      this.fail('no-memory'); // model choice: output to memory the target does not back
      return false;
    }
  }

  /** Operational error (§4.7, §6): STATUS.Error := 1, TriggerEn := 0; the pointers stay at the entry. */
  private fail(rule: TopaErrorRule | 'no-memory'): undefined {
    this.error = rule;
    this.active = false;
    this.cur = undefined;
    this.file.operationalError();
    this.flushPmi();
    return undefined;
  }

  /** A PMI becomes due after `pmiSkid` more bytes; a second one merges with a pending one (§4.5). */
  private schedulePmi(): void {
    if (this.pmiSkidLeft !== undefined) return;
    if (this.skid <= 0) { this.file.signalTopaPmi(); return; }
    this.pmiSkidLeft = this.skid;
  }

  private countSkid(n: number): void {
    if (this.pmiSkidLeft === undefined) return;
    this.pmiSkidLeft -= n;
    if (this.pmiSkidLeft <= 0) this.flushPmi();
  }

  /**
   * A TraceStop set Stopped (docs/sdm/README.md §4.4): like a STOP, no byte follows until TraceEn is
   * set again, so a PMI still in its skid is raised now rather than at the next TraceEn 1→0 (model
   * choice, docs/sdm/output.md §4.5: the SDM only says the PMI is imprecise). The handler then finds
   * STATUS.Stopped=1 from the TraceStop, with TraceEn=1 and the pointer wherever the last byte went.
   */
  traceStopped(): void {
    this.flushPmi();
  }

  /** No more bytes will come (STOP, TraceStop, error, TraceEn 1→0): a PMI in its skid is raised now. */
  private flushPmi(): void {
    if (this.pmiSkidLeft === undefined) return;
    this.pmiSkidLeft = undefined;
    this.file.signalTopaPmi();
  }
}
