// Connecting to QEMU's unix-socket chardevs (QMP, guest agent, helper port).
import { createConnection, type Socket } from 'node:net';
import { abortError } from './queue.js';

/** Opens a unix socket; rejects with the socket error (ENOENT, ECONNREFUSED …) or on abort. */
export function connectUnix(path: string, signal?: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const sock = createConnection({ path });
    const cleanup = (): void => {
      sock.off('connect', onConnect);
      sock.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    const onConnect = (): void => {
      cleanup();
      resolve(sock);
    };
    const onError = (e: Error): void => {
      cleanup();
      sock.destroy();
      reject(e);
    };
    const onAbort = (): void => {
      cleanup();
      sock.destroy();
      reject(abortError(signal!));
    };
    sock.once('connect', onConnect);
    sock.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** True for the errors of a socket file that is not there or not listening yet. */
export function isNotListening(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

/**
 * Splits a text stream into its non-empty lines, trimmed (QMP and the helper both speak one
 * message per line): `push` returns the lines a chunk completes and keeps the partial tail.
 */
export class LineSplitter {
  private tail = '';

  push(chunk: string): string[] {
    if (!chunk.includes('\n')) { // a long line in many chunks: only the newest one is scanned
      this.tail += chunk;
      return [];
    }
    const parts = (this.tail + chunk).split('\n');
    this.tail = parts.pop()!;
    return parts.map((l) => l.trim()).filter((l) => l !== '');
  }
}
