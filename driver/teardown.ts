// Every way out of a run (docs/design.md "The invariant"): nothing PT may write is freed while
// TraceEn may be 1. Before memory goes back, TraceEn=0 is written and read back on every CPU that
// may trace into it; where that cannot be confirmed (the target stopped answering, the read-back
// says 1), the memory is left allocated and reported as leaked instead of freed. Linux does the
// same in arch/x86/events/intel/pt.c: pt_event_del runs pt_event_stop (pt_config_stop clears
// TraceEn) before the AUX buffer can reach pt_buffer_free_aux (docs/sdm/output.md §9).
import { PtError } from './base/errors.js';
import { traceEnOf, withoutTraceEn } from './ctl.js';
import { IA32_RTIT_CTL } from './hw/msrs.js';
import type { PhysMemory, PhysRegion, Target } from './target.js';

/** What a teardown needs of a target: one MSR batch per CPU, and frees. */
export type TeardownTarget = Pick<Target, 'msrBatch'> & { readonly phys: Pick<PhysMemory, 'free'> };

/**
 * How long a teardown's own calls may take. They run with their own deadline, never the run's
 * signal: a run that was aborted or timed out needs its disable sequence most of all.
 */
export const TEARDOWN_TIMEOUT_MS = 10_000;

/** A buffer the driver owns, with what it holds ("ToPA table", "output region", "buffer"). */
export interface OwnedBuffer {
  readonly region: PhysRegion;
  readonly role: string;
}

/** What a teardown did with the memory it was given. */
export interface Teardown {
  /** Every CPU that may have traced was confirmed off (TraceEn=0 written and read back), or none had to be. */
  readonly traceOff: boolean;
  /** Bytes given back. */
  readonly freed: number;
  /** Buffers left allocated: tracing could not be confirmed off, or their free failed. */
  readonly leaked: readonly OwnedBuffer[];
  /** Why something was leaked. */
  readonly why?: string;
}

/** A CPU that may be tracing, with the IA32_RTIT_CTL value last written to it (kept but for TraceEn). */
export interface TracingCpu {
  readonly cpu: number;
  readonly ctl: bigint;
}

/** A teardown that had nothing to do. */
export const NOTHING_TORN_DOWN: Teardown = { traceOff: true, freed: 0, leaked: [] };

/**
 * TraceEn=0 written (the rest of `ctl` kept) and IA32_RTIT_CTL read back on `cpu`, in one batch.
 * Returns undefined once the read-back says TraceEn=0, else why it could not be confirmed.
 */
export async function confirmTraceOff(target: TeardownTarget, cpu: number, ctl: bigint, signal: AbortSignal): Promise<string | undefined> {
  try {
    const res = await target.msrBatch(cpu, [
      { op: 'wrmsr', msr: IA32_RTIT_CTL.address, value: withoutTraceEn(ctl) },
      { op: 'rdmsr', msr: IA32_RTIT_CTL.address },
    ], { signal });
    const bad = res.find((r) => !r.ok);
    if (bad && !bad.ok) return `CPU ${cpu}: the disable faulted: ${bad.fault.reason}`;
    const back = res[1];
    if (!back?.ok) return `CPU ${cpu}: IA32_RTIT_CTL was not read back`;
    return traceEnOf(back.value) ? `CPU ${cpu}: IA32_RTIT_CTL still reads TraceEn=1 (0x${back.value.toString(16)}) after the disable` : undefined;
  } catch (e) {
    return `CPU ${cpu}: ${(e as Error).message}`;
  }
}

/**
 * Gives `buffers` back safely: first tracing confirmed off on every CPU of `cpus`, then each buffer
 * freed. If any CPU cannot be confirmed off, nothing is freed — every buffer is leaked — since
 * the driver cannot tell which of them that CPU still writes. A free that fails leaks its buffer.
 */
export async function freeOrLeak(target: TeardownTarget, buffers: readonly OwnedBuffer[], cpus: readonly TracingCpu[], timeoutMs = TEARDOWN_TIMEOUT_MS): Promise<Teardown> {
  const signal = AbortSignal.timeout(timeoutMs);
  const unconfirmed: string[] = [];
  for (const c of cpus) {
    const why = await confirmTraceOff(target, c.cpu, c.ctl, signal);
    if (why !== undefined) unconfirmed.push(why);
  }
  if (unconfirmed.length > 0) {
    return { traceOff: false, freed: 0, leaked: [...buffers], why: `tracing could not be confirmed off (${unconfirmed.join('; ')}): left allocated rather than freed` };
  }
  let freed = 0;
  const leaked: OwnedBuffer[] = [];
  const failures: string[] = [];
  for (const b of buffers) {
    const why = await freeOnce(target, b.region, signal);
    if (why === undefined) freed += b.region.size;
    else { leaked.push(b); failures.push(`0x${b.region.base.toString(16)}: ${why}`); }
  }
  return { traceOff: true, freed, leaked, ...(failures.length ? { why: `the free failed (${failures.join('; ')})` } : {}) };
}

/**
 * Frees `region`, asking twice when the first answer is an error: a free may take effect and lose
 * its answer, and then the second finds nothing there (PtError 'bad_address'), which means freed.
 * Returns undefined once freed, else why not.
 */
async function freeOnce(target: TeardownTarget, region: PhysRegion, signal: AbortSignal): Promise<string | undefined> {
  try {
    await target.phys.free(region, { signal });
    return undefined;
  } catch (first) {
    try {
      await target.phys.free(region, { signal });
      return undefined;
    } catch (again) {
      return again instanceof PtError && again.code === 'bad_address' ? undefined : (first as Error).message;
    }
  }
}

/** "2 buffers, 12288 bytes: ToPA table 0x100000+4096, output region 0x101000+8192". */
export function describeLeaks(leaked: readonly OwnedBuffer[]): string {
  const bytes = leaked.reduce((n, b) => n + b.region.size, 0);
  return `${leaked.length} buffer${leaked.length === 1 ? '' : 's'}, ${bytes} bytes: ${leaked.map((b) => `${b.role} 0x${b.region.base.toString(16)}+${b.region.size}`).join(', ')}`;
}
