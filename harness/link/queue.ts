// An unbounded async queue with one consumer: events are pushed as they arrive and taken in
// order (one async-iterable queue per consumer, subscribed before acting).
import { PtError } from '../../driver/base/errors.js';

interface Waiter<T> {
  resolve(r: IteratorResult<T>): void;
  reject(e: unknown): void;
}

/** A FIFO that a producer pushes into and one consumer awaits. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly waiters: Waiter<T>[] = [];
  private done = false;
  private failure: Error | undefined;

  /** Adds an item; ignored after close. */
  push(item: T): void {
    if (this.done) return;
    const w = this.waiters.shift();
    if (w !== undefined) w.resolve({ done: false, value: item });
    else this.items.push(item);
  }

  /** Ends the queue: buffered items are still delivered, then `done` (or `error`). */
  close(error?: Error): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    for (const w of this.waiters.splice(0)) {
      if (error === undefined) w.resolve({ done: true, value: undefined });
      else w.reject(error);
    }
  }

  /** The number of items waiting to be taken. */
  get size(): number {
    return this.items.length;
  }

  /** The next item, or done once closed and drained; rejects with PtError('aborted') on abort. */
  take(opts: { signal?: AbortSignal } = {}): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ done: false, value: this.items.shift() as T });
    if (this.done) {
      return this.failure === undefined ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(this.failure);
    }
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(abortError(signal!));
      };
      const waiter: Waiter<T> = {
        resolve: (r) => { signal?.removeEventListener('abort', onAbort); resolve(r); },
        reject: (e) => { signal?.removeEventListener('abort', onAbort); reject(e); },
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const r = await this.take();
      if (r.done === true) return;
      yield r.value;
    }
  }
}

/** The error an aborted wait rejects with: the signal's reason when it is already an Error. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new PtError('aborted', `aborted: ${String(reason)}`, { cause: reason });
}

/** A request waiting for its reply, keyed by id in a client's table. */
export interface PendingReply<T, S> {
  readonly sent: S;
  resolve(value: T): void;
  reject(e: Error): void;
}

/**
 * Registers request `id` in `pending`, sends it, and settles when the client resolves or rejects
 * its entry — or rejects at once when `signal` aborts (a late reply carries the id and is dropped).
 */
export function awaitReply<T, S>(
  pending: Map<string, PendingReply<T, S>>, id: string, sent: S, signal: AbortSignal, send: () => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      pending.delete(id);
      reject(abortError(signal));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    pending.set(id, {
      sent,
      resolve: (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      reject: (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    });
    send();
  });
}
