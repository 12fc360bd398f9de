// An inventory's stand-in lab machine (`pt: model`, docs/hosts.md): a machine without Intel PT
// reached over SSH, one connection for the suite, whose helper link and MSRs outside the PT unit
// are driven as a lab machine's are, with a fresh reference model attached per run as its PT unit
// (harness/hybrid/attach-own-model.ts). The model keeps its own memory: there is no guest RAM to
// borrow over SSH. Each run starts with a round trip to the helper, so a machine that went away
// between runs makes that run an error ("the target died") instead of a model-only pass.
import { TargetError } from '../link/errors.js';
import { attachOwnModel } from '../hybrid/attach-own-model.js';
import type { RoutingTarget } from '../hybrid/routing-target.js';
import { applyKnobs } from '../sim/knobs/knobs.js';
import type { SimTarget } from '../sim/sim-target.js';
import type { SshTarget } from '../ssh/ssh-target.js';
import { RunModelSlot } from './run-model-slot.js';
import type { RunCpu, RunNeeds, SuiteTarget } from './suite-target.js';
import { runModelOptions } from './targets.js';

/** The model's memory: the sim's (targets.ts createSim), so a run writes the sim's bytes. */
const MODEL_RAM = { ramSize: 64 * 2 ** 20 };
/** Bound of the per-run round trip to the helper. */
const PING_TIMEOUT_MS = 10_000;

/** A machine over SSH with the model as its PT unit: "ssh:lab1+model". */
export class SshModelSuite implements SuiteTarget {
  readonly kind = 'ssh';
  /** The model is the PT unit, so the sim's applicability rules hold (suite-target.ts). */
  readonly rules = 'sim';
  readonly probed = undefined;
  private readonly held = new RunModelSlot<RoutingTarget<SshTarget, SimTarget>>();

  constructor(private readonly t: SshTarget) {}

  get description(): string {
    return `${this.t.description}+model`;
  }

  lost(): string | undefined {
    return this.t.lost;
  }

  async prepare(run: RunNeeds): Promise<RunCpu> {
    await this.held.clear();
    const lost = this.t.lost;
    if (lost !== undefined) throw new TargetError('helper-command', 'closed', `${this.t.description}: ${lost}`);
    await this.t.helper.ping({ timeoutMs: PING_TIMEOUT_MS });
    // The sim's options for the same run (targets.ts createSim), so both write the same bytes.
    const target = await attachOwnModel(this.t, { ...runModelOptions(run.profile, run.seed, run.knobs, run.settings), memory: MODEL_RAM });
    applyKnobs(target.model, run.knobs);
    this.held.hold(target);
    return {
      target, model: target.model, description: target.description,
      release: () => this.held.release(target),
    };
  }

  /** Stops the run's model, then the helper and the connection. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.held.disposeThen(() => this.t.dispose());
  }
}
