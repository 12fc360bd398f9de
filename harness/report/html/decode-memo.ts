// Register decodes for the report, remembered by raw value: a run's transcript reads the same CTL,
// GLOBAL_STATUS and STATUS values thousands of times, and a decode walks the whole field table
// (driver/hw/field.ts). One memo per codec, bounded so a long run cannot grow it without end.
import type { Decoded, FieldTable, RegisterCodec } from '../../../driver/hw/field.js';

const LIMIT = 4096;

/** `codec.decode`, remembered for the last LIMIT distinct values. */
export function memoDecode<T extends FieldTable<C>, C>(codec: RegisterCodec<T, C>): (raw: bigint) => Decoded<T> {
  const memo = new Map<bigint, Decoded<T>>();
  return (raw) => {
    let d = memo.get(raw);
    if (d === undefined) {
      if (memo.size >= LIMIT) memo.clear();
      d = codec.decode(raw);
      memo.set(raw, d);
    }
    return d;
  };
}
