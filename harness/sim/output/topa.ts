// ToPA output (docs/sdm/output.md §4): the table walk, END (followed lazily),
// STOP, INT with a PMI after a configurable skid (cut short by a stop or a
// TraceStop), the maximum-table wrap,
// the §4.7 operational errors, single-entry (MENTRY=0) CPUs with their early
// PMI, and the entry cache knob (§4.8). With a guard (output-guard.ts), every table read, the
// table pointer loaded at enable and every trace write is checked against the memory the driver
// owns (the memory oracle); an access outside it is reported and stops the output.
import { PtError } from '../../../driver/base/errors.js';
import { span } from '../memory-oracle.js';
import type { MsrFile } from '../msr-file.js';
import type { OutputGuard, Reachable } from './output-guard.js';
import { readU64, type SyncPhysMemory } from './sync-phys.js';
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
  /** The §4.7 rule of the last operational error, if any ('unowned': the memory oracle stopped the output). */
  error: TopaErrorRule | 'no-memory' | 'unowned' | undefined;

  constructor(private readonly file: MsrFile, private readonly phys: SyncPhysMemory, o: TopaOptions = {}, private readonly guard?: OutputGuard) {
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
    // The first entry the CPU will read is at the pointer just loaded (§4.1): it must be the driver's.
    const first = this.tableBase + this.tableOffset;
    if (this.guard && !this.guard.owns(first, 8)) {
      this.guard.corrupt('output-base', first, 8, `TraceEn 0→1 loaded the ToPA table pointer ${span(first, 8)} (OUTPUT_BASE 0x${this.tableBase.toString(16)}, entry ${this.tableOffset >> 3n}), which the driver does not own`);
      this.fail('unowned');
      return;
    }
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
    if (this.unownedTable(addr)) return undefined;
    return readU64(this.phys, addr);
  }

  /** "all-reachable-at-enable": walk from the current pointer through END links, caching every entry. */
  private fillCache(): void {
    this.cacheFilled = true;
    const cache = this.cache!;
    let base = this.tableBase, off = this.tableOffset;
    while (cache.size < CACHE_LIMIT) {
      const addr = base + off;
      if (cache.has(addr)) return;
      if (this.unownedTable(addr)) return; // the read-ahead stops; reaching the entry fails later
      const raw = readU64(this.phys, addr);
      if (raw === undefined) return;
      cache.set(addr, raw);
      const e = decodeTopaEntry(raw);
      if (topaEntryError(e, base, off, this.file.caps.maxPhysAddr, this.mentry)) return;
      if (e.END) { base = e.base; off = 0n; } else off = off === MAX_TABLE_OFFSET ? 0n : off + 8n;
    }
  }

  /** A table entry at `addr` outside the driver's memory: reported (the memory oracle), true. */
  private unownedTable(addr: bigint): boolean {
    if (!this.guard || this.guard.owns(addr, 8)) return false;
    this.guard.corrupt('topa-read', addr, 8, `the ToPA engine read the table entry at ${span(addr, 8)}${this.cache ? ' (or read it ahead into its cache)' : ''}, which the driver does not own`);
    return true;
  }

  private store(addr: bigint, data: Uint8Array): boolean {
    if (this.guard && !this.guard.owns(addr, data.length)) {
      const e = this.cur;
      this.guard.corrupt('trace-write', addr, data.length, `trace written at ${span(addr, data.length)}${e ? ` (output region 0x${e.base.toString(16)}, table 0x${this.tableBase.toString(16)} entry ${this.tableOffset >> 3n})` : ''}, which the driver does not own`);
      this.fail('unowned');
      return false;
    }
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
  private fail(rule: TopaErrorRule | 'no-memory' | 'unowned'): undefined {
    this.error = rule;
    this.active = false;
    this.cur = undefined;
    this.file.operationalError();
    this.flushPmi();
    return undefined;
  }

  /**
   * What PT may still touch while TraceEn=1 (a free must not): every table reachable from the
   * current table through END links, each output region they name, and what the entry cache holds.
   */
  reachable(): Reachable[] {
    const out = reachableTopa((a) => readU64(this.phys, a), this.tableBase);
    for (const raw of this.cache?.values() ?? []) {
      const e = decodeTopaEntry(raw);
      if (!e.END) out.push({ base: e.base, size: regionSize(e), what: 'output region (cached ToPA entry)' });
    }
    return out;
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

/**
 * The tables reachable from the one at `tableBase` through END links, and the output regions their
 * entries name, read with `read` (conservative: each table from entry 0 to its END, since an END
 * can lead back; bounded by CACHE_LIMIT entries).
 */
export function reachableTopa(read: (addr: bigint) => bigint | undefined, tableBase: bigint): Reachable[] {
  const out: Reachable[] = [];
  const tables = new Set<bigint>();
  const pages = new Set<bigint>();
  const regions = new Set<bigint>();
  const todo = [tableBase & ~0xfffn];
  let entries = 0;
  while (todo.length > 0 && entries < CACHE_LIMIT) {
    const base = todo.pop()!;
    if (tables.has(base)) continue;
    tables.add(base);
    for (let off = 0n; off <= MAX_TABLE_OFFSET && entries < CACHE_LIMIT; off += 8n, entries++) {
      const addr = base + off, page = addr & ~0xfffn;
      if (!pages.has(page)) { pages.add(page); out.push({ base: page, size: 4096, what: `ToPA table 0x${base.toString(16)}` }); }
      const raw = read(addr);
      if (raw === undefined) break;
      const e = decodeTopaEntry(raw);
      if (e.END) { todo.push(e.base); break; }
      if (regions.has(e.base)) continue;
      regions.add(e.base);
      out.push({ base: e.base, size: regionSize(e), what: `output region (table 0x${base.toString(16)}, entry ${off >> 3n})` });
    }
  }
  return out;
}
