// Issues recorded transcript operations again on another target (docs/replay.md): one step is one
// recorded target call — an MSR access, CPUID, an allocation, a ToPA table write (its changed
// entries), a plain write, XSAVES/XRSTORS, a PMI unmask, a workload start, the next event of an
// execution, or its end. Physical addresses move with their buffer: the n-th allocation of the
// recording is the n-th of the replay (its role), at whatever base this target gives it.
import type { Execution, PhysRegion, TargetEvent } from '../../driver/target.js';
import type { RecordingTarget } from '../rundir/recording-target.js';
import { buildPtXsaveArea, PT_STATE_LAYOUT, ptStateBytes, type PtState } from '../../driver/hw/xsave.js';
import { TOPA_ENTRY_BYTES } from '../../driver/hw/topa.js';
import { BufferRoles } from '../rundir/buffer-roles.js';
import { OUTPUT_BASE_MSR } from '../rundir/normalize-transcript.js';
import { NotReplayableError } from './errors.js';
import { workloadOfRecipe } from './workload.js';

/** A parsed transcript line (docs/transcript.md); any key may be missing in a damaged file. */
export type RecordedLine = Readonly<Record<string, unknown>>;

/** Ops that are an event of an execution, pulled rather than issued. */
export const EVENT_OPS: ReadonlySet<string> = new Set(['pmi', 'slice', 'exit', 'fault']);

/** The recorded lines [from, to) that one target call made (a table write: one line per changed entry). */
export interface Step { readonly from: number; readonly to: number }

/** The step that starts at line `i`: consecutive `topa` lines of one table with rising indices are one write. */
export function stepAt(lines: readonly RecordedLine[], i: number): Step {
  const l = lines[i]!;
  let j = i + 1;
  if (l.op === 'topa') {
    while (j < lines.length && lines[j]!.op === 'topa' && lines[j]!.addr === l.addr && Number(lines[j]!.index) > Number(lines[j - 1]!.index)) j++;
  }
  // What the model's memory oracle saw during the call is part of its outcome (docs/transcript.md `corrupt`).
  while (j < lines.length && lines[j]!.op === 'corrupt') j++;
  return { from: i, to: j };
}

const OUTPUT_BASE_OFFSET = PT_STATE_LAYOUT.find((x) => x.msr.name === 'IA32_RTIT_OUTPUT_BASE')!.offset;
const PAGE_MASK = 0xfffn;

function big(v: unknown, what: string, line: number): bigint {
  if (typeof v !== 'string' || !/^0x[0-9a-f]+$/.test(v)) throw new NotReplayableError(`${what} is not a hex number: ${JSON.stringify(v)}`, line);
  return BigInt(v);
}

function int(v: unknown, what: string, line: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new NotReplayableError(`${what} is not an integer: ${JSON.stringify(v)}`, line);
  return v;
}

function bytesOf(v: unknown, what: string, line: number): Uint8Array {
  if (typeof v !== 'string' || !/^([0-9a-f]{2})*$/.test(v)) throw new NotReplayableError(`${what} was not recorded (no data)`, line);
  return new Uint8Array(Buffer.from(v, 'hex'));
}

interface Running {
  readonly exec: Execution;
  readonly events: AsyncIterator<TargetEvent>;
}

/** Replays steps in order on `rec` (the new target, recorded); `replayRoles` are the roles of rec's own transcript. */
export class StepIssuer implements AsyncDisposable {
  /** The recording's buffers, as its alloc lines are replayed. */
  private readonly recordedRoles = new BufferRoles();
  private readonly regions = new Map<number, PhysRegion>();
  /** Each ToPA table's entries as the recording last wrote them, by the recording's table address. */
  private readonly tables = new Map<bigint, bigint[]>();
  private readonly running = new Map<number, Running>();

  constructor(private readonly rec: RecordingTarget, private readonly replayRoles: BufferRoles) {}

  /** `addr` of the recording moved to the same role and offset here (unchanged outside every buffer). */
  move(addr: bigint): bigint {
    const r = this.recordedRoles.find(addr);
    const base = r === undefined ? undefined : this.replayRoles.baseOf(r.role);
    return r === undefined || base === undefined ? addr : base + r.off;
  }

  /** A ToPA entry (or any word whose page is in a buffer) with its page moved and its low 12 bits kept. */
  private moveEntry(e: bigint): bigint {
    const page = e & ~PAGE_MASK;
    return this.recordedRoles.find(page) === undefined ? e : this.move(page) | (e & PAGE_MASK);
  }

  /** Issues step `s` of `lines`. A fault the target raises is recorded by `rec` and is not an error here. */
  async issue(lines: readonly RecordedLine[], s: Step): Promise<void> {
    const l = lines[s.from]!;
    const at = s.from + 1;
    const cpu = typeof l.cpu === 'number' ? l.cpu : 0;
    const t = this.rec;
    const quiet = (p: Promise<unknown>): Promise<void> => p.then(() => undefined, () => undefined);
    switch (l.op) {
      case 'cpuid': {
        const [leaf, sub] = String(l.value).split('.');
        return quiet(t.cpuid(Number(big(leaf, 'CPUID leaf', at)), Number(sub ?? 0), cpu));
      }
      case 'rdmsr': return quiet(t.rdmsr(cpu, Number(big(l.msr, 'msr', at))));
      case 'wrmsr': {
        const v = big(l.value, 'value', at);
        return quiet(t.wrmsr(cpu, Number(big(l.msr, 'msr', at)), l.msr === OUTPUT_BASE_MSR ? this.move(v) : v));
      }
      case 'alloc': return this.alloc(l, at);
      case 'free': {
        const r = this.recordedRoles.find(big(l.value, 'freed base', at));
        const region = r === undefined ? undefined : this.regions.get(r.role);
        if (region === undefined) throw new NotReplayableError(`free of ${String(l.value)}, which no replayed allocation holds`, at);
        return quiet(t.phys.free(region));
      }
      case 'topa': return this.writeTable(lines, s);
      case 'write': {
        const data = bytesOf(l.data, 'the written bytes', at);
        if (data.length % 8 === 0) {
          const dv = new DataView(data.buffer);
          for (let i = 0; i < data.length; i += 8) dv.setBigUint64(i, this.moveEntry(dv.getBigUint64(i, true)), true);
        }
        return quiet(t.phys.write(this.move(big(l.addr, 'addr', at)), data));
      }
      case 'xsaves': return quiet(t.xsaves(cpu, big(l.value, 'RFBM', at)));
      case 'xrstors': return quiet(t.xrstors(cpu, this.area(l, at), big(l.value, 'RFBM', at)));
      case 'pmi-enable': return quiet(t.pmiEnable(cpu));
      case 'note': t.note(cpu, String(l.value)); return;
      case 'corrupt': return; // the model reports it; nothing to issue
      case 'start': return this.start(l, cpu, at);
      case 'placed': return quiet(this.execution(l, at).placed());
      case 'go': return quiet(this.execution(l, at).go());
      case 'end': return this.end(int(l.exec, 'exec', at));
      default:
        if (EVENT_OPS.has(String(l.op))) return this.nextEvent(l, at);
        throw new NotReplayableError(`unknown op ${JSON.stringify(l.op)}`, at);
    }
  }

  private async alloc(l: RecordedLine, at: number): Promise<void> {
    const [size, align] = String(l.value).split('/');
    const region = await this.rec.phys.alloc(Number(big(size, 'size', at)), Number(big(align, 'alignment', at))).catch(() => undefined);
    if (typeof l.result !== 'string') return; // the recording's allocation failed: nothing to map
    const base = big(l.result, 'base', at);
    const role = this.recordedRoles.add(base, big(size, 'size', at));
    this.tables.delete(base); // zero-filled again
    if (region) this.regions.set(role, region);
  }

  /** One table write: the recorded table with this step's changed entries, each moved with its buffer. */
  private async writeTable(lines: readonly RecordedLine[], s: Step): Promise<void> {
    const base = big(lines[s.from]!.addr, 'table address', s.from + 1);
    const entries = this.tables.get(base) ?? [];
    for (let i = s.from; i < s.to; i++) {
      const index = int(lines[i]!.index, 'index', i + 1);
      entries[index] = big(lines[i]!.value, 'entry', i + 1);
    }
    this.tables.set(base, entries);
    const bytes = new Uint8Array(entries.length * TOPA_ENTRY_BYTES);
    const dv = new DataView(bytes.buffer);
    entries.forEach((e, i) => dv.setBigUint64(i * TOPA_ENTRY_BYTES, this.moveEntry(e ?? 0n), true));
    await this.rec.phys.write(this.move(base), bytes, { content: 'topa-table' }).catch(() => undefined);
  }

  /**
   * The recorded XRSTORS area, its IA32_RTIT_OUTPUT_BASE moved with its buffer: the recorded bytes,
   * or, where the recorder left them out because the MSRs say all of it, the area built from them.
   */
  private area(l: RecordedLine, at: number): Uint8Array {
    const area = l.data === undefined ? this.canonicalArea(l.area, at) : bytesOf(l.data, 'the XRSTORS area', at);
    let pt: Uint8Array | undefined;
    try { pt = ptStateBytes(area); } catch { pt = undefined; } // a malformed area goes as recorded
    if (pt) {
      const dv = new DataView(pt.buffer, pt.byteOffset, pt.byteLength);
      dv.setBigUint64(OUTPUT_BASE_OFFSET, this.move(dv.getBigUint64(OUTPUT_BASE_OFFSET, true)), true);
    }
    return area;
  }

  private canonicalArea(fields: unknown, at: number): Uint8Array {
    if (fields === null || typeof fields !== 'object') throw new NotReplayableError('an XRSTORS area with neither its bytes nor its MSRs recorded', at);
    const state: Record<string, bigint> = {};
    for (const { msr } of PT_STATE_LAYOUT) state[msr.name] = big((fields as Record<string, unknown>)[msr.name], `area ${msr.name}`, at);
    return buildPtXsaveArea({ state: state as PtState });
  }

  private start(l: RecordedLine, cpu: number, at: number): void {
    const w = workloadOfRecipe(l.workload as Readonly<Record<string, string | number>> | undefined, String(l.value), at);
    const exec = this.rec.start(w, cpu, {
      ...(typeof l.sliceBranches === 'number' ? { sliceBranches: l.sliceBranches } : {}),
      ...(l.thread === true ? { thread: true } : {}),
      ...(l.held === true ? { held: true } : {}),
    });
    this.running.set(int(l.exec, 'exec', at), { exec, events: exec.events[Symbol.asyncIterator]() });
  }

  /** The running execution a `placed` or `go` line names. */
  private execution(l: RecordedLine, at: number): Execution {
    const r = this.running.get(int(l.exec, `the ${String(l.op)} line's exec`, at));
    if (r === undefined) throw new NotReplayableError(`a ${String(l.op)} line of no running execution`, at);
    return r.exec;
  }

  private async nextEvent(l: RecordedLine, at: number): Promise<void> {
    // Every event line names its execution (docs/transcript.md); a transcript from before that has
    // no workload recipes either, and was refused at its first start.
    const r = this.running.get(int(l.exec, `the ${String(l.op)} event's exec`, at));
    if (r === undefined) throw new NotReplayableError(`a ${String(l.op)} event of no running execution`, at);
    // A target error ends the execution: the missing event line is the divergence.
    await r.events.next().catch(() => undefined);
  }

  private async end(id: number): Promise<void> {
    const r = this.running.get(id);
    if (r === undefined) return;
    this.running.delete(id);
    await r.events.return?.(undefined).catch(() => undefined);
    await r.exec[Symbol.asyncDispose]();
  }

  /** Ends every execution the replay still holds (a divergence stops it midway). */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const id of [...this.running.keys()]) await this.end(id).catch(() => undefined);
  }
}
