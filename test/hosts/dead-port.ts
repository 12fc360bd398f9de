// A local port where no SSH server answers, held for the whole test file: a listener that drops
// every connection at once. A port merely closed again could be taken meanwhile by another test's
// QEMU (hostfwd on port 0) or dropbear, and then something would answer there.
import { createServer } from 'node:net';
import { afterAll } from 'vitest';

/** The port; the listener closes after the file's tests. */
export async function deadPort(): Promise<number> {
  const s = createServer((sock) => sock.destroy());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  afterAll(() => new Promise<void>((r) => s.close(() => r())));
  return (s.address() as { port: number }).port;
}
