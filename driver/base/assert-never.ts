// Exhaustiveness checks: a new member of a union (a packet type, an event kind,
// an MSR rule) breaks every switch that misses it, at compile time.

/** Ends a `switch` over a union: unreachable while every member has its case. */
export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`);
}
