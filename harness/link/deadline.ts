// Deadlines for blocking calls: the caller's signal combined with a per-call
// timeout, and the two told apart afterwards — an aborted caller gets PtError('aborted'), an
// expired timeout a TargetError(phase, 'timeout') with the evidence.
import { PtError } from '../../driver/base/errors.js';
import { TargetError, type TargetEvidence, type TargetPhase } from './errors.js';

/** Options of every blocking call on the real targets (qemu, ssh). */
export interface TimedOpts {
  readonly signal?: AbortSignal;
  /** Overrides the call's default timeout. */
  readonly timeoutMs?: number;
}

/** Runs `fn` with a signal that fires on the caller's abort or after the timeout; classifies the failure. */
export async function withDeadline<T>(
  opts: TimedOpts,
  defaultMs: number,
  phase: TargetPhase,
  what: string,
  fn: (signal: AbortSignal) => Promise<T>,
  evidence: () => TargetEvidence = () => ({}),
): Promise<T> {
  const ms = opts.timeoutMs ?? defaultMs;
  if (opts.signal?.aborted) {
    throw new PtError('aborted', `${what}: aborted: ${String(opts.signal.reason)}`, { cause: opts.signal.reason });
  }
  const timer = AbortSignal.timeout(ms);
  const signal = opts.signal === undefined ? timer : AbortSignal.any([opts.signal, timer]);
  try {
    return await fn(signal);
  } catch (e) {
    if (opts.signal?.aborted) {
      throw new PtError('aborted', `${what}: aborted: ${String(opts.signal.reason)}`, { cause: opts.signal.reason });
    }
    if (timer.aborted) throw new TargetError(phase, 'timeout', `${what} timed out after ${ms} ms`, evidence(), { cause: e });
    throw e;
  }
}

/** Resolves after `ms`, or rejects when `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `p`'s value if it settles within `ms`, else undefined (the timer is cleared either way). */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms); });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
