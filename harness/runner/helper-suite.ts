// A suite target driving a CPU's own PT through ptlab-helper (a QEMU/KVM guest with
// `--pt hardware`, or a lab machine over SSH): each run starts from a scrubbed PT unit. What a
// run leaves allocated is given back by the run itself (run-scenario.ts: tracing confirmed off
// first); a buffer it leaked stays allocated, since PT may still write it.
import type { HelperTarget } from '../link/helper-target.js';
import type { CpuProfile } from '../sim/profiles.js';
import { scrubPt } from './probed-profile.js';
import type { RunCpu, SuiteTarget } from './suite-target.js';

/**
 * Frees the module buffers allocated since `before` was taken. Only where no PT unit can write
 * them any more: a `--pt model` run's buffers once its model is disposed (the guest has no PT).
 */
export async function freeLeftovers(t: HelperTarget, before: ReadonlySet<bigint>): Promise<void> {
  for (const b of t.moduleBuffers()) {
    if (!before.has(b.base)) await t.phys.free({ base: b.base, size: b.blockSize }).catch(() => undefined);
  }
}

/** The target's real PT, one connection or VM for the whole suite; its profile is what CPUID says. */
export class HelperPtSuite implements SuiteTarget {
  readonly rules: 'qemu' | 'ssh';

  constructor(readonly kind: 'qemu' | 'ssh', private readonly t: HelperTarget, readonly probed: CpuProfile) {
    this.rules = kind;
  }

  get description(): string {
    return this.t.description;
  }

  lost(): string | undefined {
    return this.t.lost;
  }

  async prepare(): Promise<RunCpu> {
    const t = this.t;
    await scrubPt(t);
    return { target: t, model: undefined, description: t.description, release: async () => undefined };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.t[Symbol.asyncDispose]();
  }
}
