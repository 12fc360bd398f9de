// A suite target driving a CPU's own PT through ptlab-helper (a QEMU/KVM guest with
// `--pt hardware`, or a lab machine over SSH): each run claims its CPU first (claim.ts: refused
// when someone else traces there, taken back only with --reclaim). What a run leaves allocated is
// given back by the run itself (run-scenario.ts: tracing confirmed off first); a buffer it leaked
// stays allocated, since PT may still write it.
import type { Target } from '../../driver/target.js';
import type { HelperTarget } from '../link/helper-target.js';
import type { CpuProfile } from '../sim/profiles.js';
import { claimCpu } from './claim.js';
import { CpuMapTarget } from './cpu-map.js';
import type { RunCpu, SuiteTarget } from './suite-target.js';

/** How long freeLeftovers may take for all its frees together. */
export const LEFTOVERS_TIMEOUT_MS = 5000;

/**
 * Frees the module buffers allocated since `before` was taken. Only where no PT unit can write
 * them any more: a `--pt model` run's buffers once its model is disposed (the guest has no PT).
 * One deadline for all the frees: a guest that stopped answering costs it once, and the frees
 * after it fail at once (the buffers stay the module's, reclaimed with the guest).
 */
export async function freeLeftovers(t: HelperTarget, before: ReadonlySet<bigint>, timeoutMs = LEFTOVERS_TIMEOUT_MS): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  for (const b of t.moduleBuffers()) {
    if (!before.has(b.base)) await t.phys.free({ base: b.base, size: b.blockSize }, { signal }).catch(() => undefined);
  }
}

/**
 * What the suite needs of the target: a Target that can say it was lost (HelperTarget is one),
 * and disarm a CPU's ToPA PMIs at the end of a run (a target without it arms nothing).
 */
export type RealPtTarget = Target & Pick<HelperTarget, 'lost'> & Partial<Pick<HelperTarget, 'pmiDisarm'>> & { readonly cpus?: number };

/** How a real-PT suite uses its machine. */
export interface RealPtOptions {
  /** `--reclaim`: take the CPU back from another tracer (claim.ts). */
  readonly reclaim?: boolean;
  /** The machine's CPU the runs trace on (a lane's own: cpu-map.ts). Default 0. */
  readonly cpu?: number;
}

/** The target's real PT, one connection or VM for the whole suite; its profile is what CPUID says. */
export class HelperPtSuite implements SuiteTarget {
  readonly rules: 'qemu' | 'ssh';

  private readonly reclaim: boolean;
  /** The machine's CPU this suite's runs trace on. */
  readonly cpu: number;
  /** CPUs online on the machine (what more lanes may use: cpu-map.ts laneCpus). */
  readonly online: number;

  constructor(readonly kind: 'qemu' | 'ssh', private readonly t: RealPtTarget, readonly probed: CpuProfile, o: RealPtOptions = {}) {
    this.rules = kind;
    this.reclaim = o.reclaim ?? false;
    this.cpu = o.cpu ?? 0;
    this.online = t.cpus ?? 1;
  }

  /** The machine's name, as the refusal of too many lanes names it. */
  get machine(): string {
    return this.t.description;
  }

  get description(): string {
    return this.cpu === 0 ? this.t.description : `${this.t.description} CPU ${this.cpu}`;
  }

  lost(): string | undefined {
    return this.t.lost;
  }

  /**
   * Claims the suite's CPU for the run (CpuClaimedError when someone else traces there, unless
   * --reclaim). The run's end disarms the CPU: its PMIs are the module's only while ptlab traces.
   */
  async prepare(): Promise<RunCpu> {
    const t = this.t;
    const taken = await claimCpu(t, this.cpu, { reclaim: this.reclaim });
    // Scenarios trace on the run's CPU 0: put it on the suite's CPU of the machine.
    const target = this.cpu === 0 ? t : new CpuMapTarget(t, this.cpu);
    return {
      target, model: undefined, description: this.description,
      release: async () => {
        try {
          await t.pmiDisarm?.(this.cpu, { signal: AbortSignal.timeout(LEFTOVERS_TIMEOUT_MS) });
        } finally {
          await taken?.restore();
        }
      },
      ...(taken ? { notes: [taken.note] } : {}),
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.t[Symbol.asyncDispose]();
  }
}
