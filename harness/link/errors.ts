// Errors of the real targets, shared through the guest link by the qemu and the ssh
// target: a code from driver/base/errors.ts, the phase that failed, why, and the evidence a reader
// needs (argv, exit code, console log tail) — after QEMU's `VMLaunchFailure` and
// `ExecuteError(sent, received)`. QEMU's own QMP error (QmpError) stays with the qemu target.
import { PtError } from '../../driver/base/errors.js';

/** Which step of the target's life failed (the qemu phases too: one TargetError serves both targets). */
export type TargetPhase =
  | 'launch'
  | 'qmp-connect'
  | 'qmp-command'
  | 'qga-connect'
  | 'qga-sync'
  | 'qga-command'
  | 'boot'
  | 'memory'
  | 'helper-connect'
  | 'helper-command'
  | 'shutdown';

/** Why it failed; callers branch on this (and `phase`), never on the message. */
export type TargetFailure =
  /** QEMU refused the Intel PT CPU feature (`+intel-pt,enforce` on a host or accelerator without it). */
  | 'pt_refused'
  /** The QEMU process exited (or could not be started). */
  | 'exited'
  /** A deadline passed before the answer arrived. */
  | 'timeout'
  /** A request timed out and the machine behind it was asked and did not answer either (harness/qemu/liveness.ts). */
  | 'not_responding'
  /** The socket closed under a pending request. */
  | 'closed'
  /** The peer sent something the protocol does not allow. */
  | 'protocol'
  /** The VM did not stop on `quit` and had to be killed, or died by a signal. */
  | 'abnormal_shutdown'
  /** A file or socket operation on the host failed. */
  | 'io';

/** What was seen when it failed. */
export interface TargetEvidence {
  readonly argv?: readonly string[];
  readonly pid?: number;
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly stderr?: string;
  /** The last lines of the guest's serial console. */
  readonly consoleTail?: string;
  readonly consoleLog?: string;
  /** The request that was in flight, as sent. */
  readonly sent?: unknown;
  readonly received?: unknown;
}

/** A real target's operation failed (qemu or ssh); `phase` and `failure` say where and why. */
export class TargetError extends PtError {
  override readonly name = 'TargetError';
  constructor(
    readonly phase: TargetPhase,
    readonly failure: TargetFailure,
    message: string,
    readonly evidence: TargetEvidence = {},
    options?: ErrorOptions,
  ) {
    super('target_failed', `${phase}: ${message}`, options);
  }
}

/** A call in the wrong connection or lifecycle state (QEMU's `@require`); names both states. */
export class StateError extends PtError {
  override readonly name = 'StateError';
  constructor(readonly operation: string, readonly state: string, readonly required: readonly string[]) {
    super('bad_state', `${operation} needs state ${required.join(' | ')}, but the state is ${state}`);
  }
}

/** The guest helper's error codes (guest/helper/ptlab-helper.c). */
export type HelperErrorCode = 'gp' | 'nodev' | 'unsupported' | 'nomem' | 'noent' | 'inval' | 'perm' | 'busy' | 'unknown' | 'io';

/** The guest helper answered `err` (other than a #GP, which is a GeneralProtectionError). */
export class HelperError extends PtError {
  override readonly name = 'HelperError';
  constructor(readonly helperCode: HelperErrorCode | string, readonly detail: string, readonly sent: string) {
    super('target_failed', `guest helper: ${helperCode}: ${detail} (request: ${sent})`);
  }
}
