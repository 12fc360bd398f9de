// Errors of the SSH transport: a code from driver/base/errors.ts plus why, so callers
// branch on `failure`, never on the message.
import { PtError } from '../../driver/base/errors.js';

/** Why an SSH operation failed. */
export type SshFailure =
  /** The server's host key is not the pinned one (possible man in the middle): never connected. */
  | 'host_key_mismatch'
  /** The server's host key is marked @revoked for it in the known-hosts file: never connected. */
  | 'host_key_revoked'
  /** The host name does not resolve (or names nothing): final, not retried. */
  | 'no_such_host'
  /** The server refused our key. */
  | 'auth'
  /** TCP or protocol failure while connecting. */
  | 'connect'
  /** The deadline passed. */
  | 'timeout'
  /** The connection closed under a request. */
  | 'closed';

/** An SSH connection or command failed. */
export class SshError extends PtError {
  override readonly name = 'SshError';
  constructor(readonly failure: SshFailure, message: string, readonly host?: string, options?: ErrorOptions) {
    super('target_failed', `ssh: ${message}`, options);
  }
}
