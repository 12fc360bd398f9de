// Errors of the qemu target alone: QEMU's answer to a QMP or guest-agent command.
// The errors both real targets share (TargetError, StateError, HelperError) are in
// harness/link/errors.ts.
import { PtError } from '../../driver/base/errors.js';

/** QEMU answered a QMP (or guest-agent) command with an error object. */
export class QmpError extends PtError {
  override readonly name = 'QmpError';
  constructor(
    /** The error class QEMU reported, e.g. "GenericError", "CommandNotFound". */
    readonly errorClass: string,
    readonly desc: string,
    /** The command as it was sent. */
    readonly sent: unknown,
  ) {
    super('target_failed', `${errorClass}: ${desc}`);
  }
}
