// The ToPA tables as the transcript builds them, line by line: every `alloc` adds a buffer role
// (the n-th allocation is `bufn`, as `ptlab diff` names it) and every `topa` line sets one entry
// (docs/transcript.md: a table write is recorded as the entries it changed, and an allocation is
// zero-filled, so the lines are enough to rebuild a table).
import { TOPA_ENTRY, topaSizeBytes } from '../../../driver/hw/topa.js';
import { BufferRoles } from '../../rundir/buffer-roles.js';
import { hexField, strField, type TLine } from './transcript-lines.js';


/** One entry as last written (SDM Vol. 3C "ToPA Table Entry Format"). */
export interface TopaEntryState {
  /** The region's base (END: the next table's). */
  readonly base: bigint;
  /** Region bytes (4 KiB << Size); an END entry's Size is ignored by the CPU. */
  readonly size: number;
  readonly int: boolean;
  readonly stop: boolean;
  readonly end: boolean;
  readonly writes: number;
}

/** What one `topa` line changed. */
export interface TopaChange {
  readonly table: bigint;
  readonly index: number;
  readonly before?: TopaEntryState;
  readonly after: TopaEntryState;
}

/** Tables by physical address, entries by index; buffers by allocation order. */
export class TopaState {
  readonly roles = new BufferRoles();
  /** Tables in the order their first entry was written. */
  readonly tables = new Map<bigint, Map<number, TopaEntryState>>();
  /** `outputs` of each table since its last change (a long run asks at every pointer sample). */
  private readonly outputsCache = new Map<bigint, [number, TopaEntryState][]>();

  /** Applies one transcript line; returns the entry a `topa` line changed. */
  apply(l: TLine): TopaChange | undefined {
    if (l.op === 'alloc') {
      const base = hexField(l, 'result'), size = strField(l, 'value')?.split('/')[0];
      if (base !== undefined && size !== undefined && /^0x[0-9a-f]+$/.test(size)) this.roles.add(base, BigInt(size));
      return undefined;
    }
    if (l.op !== 'topa') return undefined;
    const table = hexField(l, 'addr'), raw = hexField(l, 'value'), index = l.f.index;
    if (table === undefined || raw === undefined || !Number.isSafeInteger(index)) return undefined;
    const d = TOPA_ENTRY.decode(raw);
    this.outputsCache.delete(table);
    const entries = this.tables.get(table) ?? new Map<number, TopaEntryState>();
    this.tables.set(table, entries);
    const before = entries.get(index as number);
    const after: TopaEntryState = {
      base: d.Base, size: d.END ? 0 : Number(topaSizeBytes(d.Size)), int: d.INT, stop: d.STOP, end: d.END, writes: (before?.writes ?? 0) + 1,
    };
    entries.set(index as number, after);
    return { table, index: index as number, ...(before ? { before } : {}), after };
  }

  /** `addr` by buffer role (`buf3`, `buf3+0x80`), or its hex when no allocation holds it. */
  name(addr: bigint): string {
    return this.roles.name(addr).replace(/^@/, '');
  }

  /** The tables other than `target` with an END entry that links to it (the CPU goes on into `target` from them). */
  linkingTo(target: bigint): bigint[] {
    return [...this.tables].filter(([t, es]) => t !== target && [...es.values()].some((e) => e.end && e.base === target)).map(([t]) => t);
  }

  /** The output entries of `table` in index order (END entries left out). */
  outputs(table: bigint): [number, TopaEntryState][] {
    let out = this.outputsCache.get(table);
    if (out === undefined) {
      out = [...(this.tables.get(table) ?? [])].filter(([, e]) => !e.end).sort((a, b) => a[0] - b[0]);
      this.outputsCache.set(table, out);
    }
    return out;
  }
}
