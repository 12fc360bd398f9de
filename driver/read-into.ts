// Where a physical read puts its bytes (Target `PhysMemory.read` with `ReadOpts.into`): the
// caller's array when it gives one, so collection reads straight into its stream with no
// allocation and no second copy; else a new array.
import { PtError } from './base/errors.js';

/** The first `length` bytes of `into`, or a new zero-filled array; throws PtError('bad_config') when `into` is too short. */
export function readDestination(length: number, into: Uint8Array | undefined): Uint8Array {
  if (into === undefined) return new Uint8Array(length);
  if (into.length < length) {
    throw new PtError('bad_config', `read of ${length} bytes into an array of ${into.length}: \`into\` must hold at least \`length\` bytes`);
  }
  return into.length === length ? into : into.subarray(0, length);
}
