// `--pt model` (docs/qemu.md §5, docs/design.md "qemu"): the reference model attached to a QEMU
// guest as its PT unit. A SimTarget (harness/sim/sim-target.ts, the one place the model is composed)
// is built over the guest's RAM — borrowed through QemuTarget.guestRamView and restricted to the
// module buffers — so its output engine reads ToPA tables from and writes trace into the real
// guest memory; a RoutingTarget (routing-target.ts) then sends the PT unit's work to the model and
// the rest to the guest. One VM can serve many runs, each with a fresh model: attach, run, dispose.
import { PtError } from '../../driver/base/errors.js';
import type { CallOpts, Target } from '../../driver/target.js';
import type { GuestRamView } from '../qemu/qemu-target.js';
import type { TraceModelOptions } from '../sim/exec/cpu-trace.js';
import type { TopHalf } from '../sim/exec/execution.js';
import type { TopaOptions } from '../sim/output/topa.js';
import { getProfile, type CpuProfile, type ProfileName } from '../sim/profiles.js';
import type { Realism } from '../sim/realism.js';
import { SimTarget } from '../sim/sim-target.js';
import { BorrowedMemory } from './borrowed-memory.js';
import { GuestRamSync } from './guest-ram-sync.js';
import { RoutingTarget } from './routing-target.js';

/** The model's knobs, as SimTargetOptions has them (so a run can match a SimTarget's). */
export interface PtModelOptions {
  /** A `--cpu` name or a profile object. Default 'skylake'. */
  readonly profile?: ProfileName | CpuProfile;
  /** Recorded with the run (nothing in the model is random yet), as on SimTarget. */
  readonly seed?: number;
  readonly topa?: TopaOptions;
  readonly trace?: TraceModelOptions;
  /** CR3 the workloads run under. Default exec/engine.ts DEFAULT_CR3. */
  readonly cr3?: bigint;
  /** What the model's PMI top half does before the driver sees the event (SimTargetOptions.topHalf). Default: nothing. */
  readonly topHalf?: TopHalf;
  /** CPUs another agent already traces on (SimTargetOptions.foreignOwner). */
  readonly foreignOwner?: readonly number[];
  /** How close to a lab machine the model runs (SimTargetOptions.realism). */
  readonly realism?: Realism;
}

/** What attachModel needs of the guest; QemuTarget is one. */
export interface ModelHost extends Target {
  /** Logical processors: the model gets one PT unit for each. */
  readonly cpus: number;
  /** The guest module's NMI handler clears TraceEn (a Linux-style top half of the guest's own PT). */
  readonly nmiClearsTraceEn: boolean;
  /** Guest RAM restricted to module buffers; PtError('bad_config') when it is not shared with the host. */
  guestRamView(): GuestRamView;
}

/** How to attach the model. */
export interface AttachModelOptions extends PtModelOptions, CallOpts {
  /**
   * The routing target disposes the guest too. Default false: the guest's owner disposes it (the
   * runner keeps ONE VM for a suite and attaches a fresh model per run). The model is always the
   * routing target's.
   */
  readonly ownsGuest?: boolean;
}

/**
 * `o` checked for the model: a known profile (PtError bad_config otherwise), and no Linux-style
 * NMI handler on the guest (`pmiClearsTraceEn` is the guest module's: with the model the PMI top
 * half is the model's, asked for with `topHalf`). Returns the options SimTarget.create gets.
 */
export function modelOptions(guest: Pick<ModelHost, 'nmiClearsTraceEn' | 'description'>, o: PtModelOptions): PtModelOptions & { readonly profile: ProfileName | CpuProfile } {
  if (guest.nmiClearsTraceEn) {
    throw new PtError('bad_config', `--pt model: ${guest.description} was launched with pmiClearsTraceEn, a guest-module option; the model's PMI top half is set with topHalf`);
  }
  const profile = o.profile ?? 'skylake';
  if (typeof profile === 'string') getProfile(profile);
  return {
    profile,
    ...(o.seed === undefined ? {} : { seed: o.seed }),
    ...(o.topa === undefined ? {} : { topa: o.topa }),
    ...(o.trace === undefined ? {} : { trace: o.trace }),
    ...(o.cr3 === undefined ? {} : { cr3: o.cr3 }),
    ...(o.topHalf === undefined ? {} : { topHalf: o.topHalf }),
    ...(o.foreignOwner === undefined ? {} : { foreignOwner: o.foreignOwner }),
    ...(o.realism === undefined ? {} : { realism: o.realism }),
  };
}

/**
 * A fresh model in its reset state (what SimTarget.create gives) as the PT unit of `guest`, with
 * one PT unit per guest CPU, over the guest's module buffers: `qemu:tcg+model:skylake`. The
 * returned target owns the model (disposing it stops the model's runs) and, with `ownsGuest`, the
 * guest. Throws PtError('bad_config') for a bad option or a guest whose RAM is not shared.
 */
export async function attachModel<G extends ModelHost>(guest: G, opts: AttachModelOptions = {}): Promise<RoutingTarget<G, SimTarget>> {
  const o = modelOptions(guest, opts);
  const phys = new BorrowedMemory(new GuestRamSync(guest.guestRamView()));
  const model = await SimTarget.create({ ...o, cpus: guest.cpus, phys, label: 'model' }, opts);
  return new RoutingTarget({ guest, model, owns: { guest: opts.ownsGuest ?? false, model: true }, beforeFree: (r) => model.checkFree(r) });
}
