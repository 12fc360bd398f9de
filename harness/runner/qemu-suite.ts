// `ptlab run --target qemu`: ONE guest for the whole suite (docs/design.md "qemu"). With `--pt model`
// the reference model is the guest's PT unit and every run gets it fresh from reset
// (QemuTarget.resetModel) with the run's profile, seed and model settings, so a run equals the
// sim's byte for byte (test/runner/qemu-agreement.test.ts). With `--pt hardware` (the default)
// the guest CPU's own PT is driven, refused when CPUID does not enumerate it (under TCG it never
// does: harness/qemu/pt-probe.ts); the profile is what the guest's CPUID says.
import { UnsupportedError } from '../../driver/errors.js';
import { chooseAccel, probeHostAccel } from '../qemu/accel.js';
import type { QemuConfig } from '../qemu/config.js';
import { findGuestImage, findOnPath, QEMU_BINARY } from '../qemu/images.js';
import { QemuTarget } from '../qemu/qemu-target.js';
import { freeLeftovers, HelperPtSuite } from './helper-suite.js';
import { probedProfile } from './probed-profile.js';
import { TargetUnavailableError, throwIfInterrupted, type RunCpu, type RunNeeds, type SuiteTarget } from './suite-target.js';
import { modelTrace, SIM_DEFAULTS, type QemuReach } from './targets.js';

/** Guest RAM of the suite's VM: room for every scenario's buffers (the module hands out ≤ 4 MiB blocks). */
const GUEST_MEMORY_MIB = 256;
/** Bound of boot + helper connection (TCG boots in about 4 s: docs/qemu.md §2). */
const LAUNCH_TIMEOUT_MS = 120_000;

const MODEL_HINT = 'use --pt model to run the reference model as the guest\'s PT unit; `ptlab doctor` shows what this host can run';

/** Boots the suite's guest as `reach` says; TargetUnavailableError when QEMU, the image or PT is missing. */
export async function openQemuSuite(reach: QemuReach, signal?: AbortSignal): Promise<SuiteTarget> {
  if ((await findOnPath(QEMU_BINARY)) === undefined) {
    throw new TargetUnavailableError('qemu', `${QEMU_BINARY} is not installed`, '`ptlab doctor` says what is missing');
  }
  const found = await findGuestImage();
  if ('missing' in found) throw new TargetUnavailableError('qemu', found.missing, 'build it with `npm run images`');
  const choice = chooseAccel(reach.accel, await probeHostAccel());
  const config: QemuConfig = { accel: choice.accel, cpu: choice.cpu, smp: 1, memoryMiB: GUEST_MEMORY_MIB, kernel: found.image.kernel, initrd: found.image.initrd };
  let t: QemuTarget;
  try {
    t = await QemuTarget.launch(config, { pt: reach.pt, timeoutMs: LAUNCH_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  } catch (e) {
    throwIfInterrupted(signal, e);
    const where = `qemu:${choice.accel} (${choice.reason})`;
    if (e instanceof UnsupportedError) throw new TargetUnavailableError('qemu', `${where}: ${e.message}`, MODEL_HINT, { cause: e });
    throw new TargetUnavailableError('qemu', `${where}: ${(e as Error).message}`, reach.pt === 'hardware' ? MODEL_HINT : undefined, { cause: e });
  }
  try {
    return reach.pt === 'model' ? new QemuModelSuite(t, `qemu:${choice.accel}+model`) : new HelperPtSuite('qemu', t, await probedProfile(t, signal ? { signal } : {}));
  } catch (e) {
    await t.dispose();
    throw e;
  }
}


/** `--pt model`: the model, reset per run, over the one guest. */
class QemuModelSuite implements SuiteTarget {
  readonly kind = 'qemu';
  readonly rules = 'sim';
  readonly probed = undefined;

  /** `description`: "qemu:tcg+model" (each run's profile is its own: RunCpu.description). */
  constructor(private readonly t: QemuTarget, readonly description: string) {}

  lost(): string | undefined {
    return this.t.lost;
  }

  async prepare(run: RunNeeds): Promise<RunCpu> {
    const t = this.t;
    await t.ptModel?.stop();
    // The sim's options for the same run (targets.ts createSim), so both write the same bytes.
    const model = await t.resetModel({
      profile: run.profile, seed: run.seed,
      topa: { pmiSkid: run.settings.pmiSkid ?? SIM_DEFAULTS.pmiSkid },
      trace: modelTrace(run.settings),
      ...(run.settings.topHalf ? { topHalf: run.settings.topHalf } : {}),
    });
    const before = new Set(t.moduleBuffers().map((b) => b.base));
    return {
      target: t, model: model.sim, description: t.description,
      release: async () => { await model.stop(); await freeLeftovers(t, before); },
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.t.dispose();
  }
}

