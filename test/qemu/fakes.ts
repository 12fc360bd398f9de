// Fake QEMU endpoints on unix sockets: only the transport edge is faked; the
// clients under test are the real ones.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Json = Record<string, unknown>;

/** A unix-socket server calling `onLine` for each JSON line a client sends. */
export class FakeEndpoint implements AsyncDisposable {
  readonly received: Json[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(readonly dir: string, readonly path: string, onConnect: (s: Socket) => void, onLine: (msg: Json, s: Socket) => void) {
    this.server = createServer((s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
      let buf = Buffer.alloc(0);
      s.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        // 0xFF resets the agent's parser (docs/qemu.md §3): drop what came before it.
        const ff = buf.lastIndexOf(0xff);
        if (ff >= 0) buf = buf.subarray(ff + 1);
        let nl: number;
        while ((nl = buf.indexOf(0x0a)) >= 0) {
          const line = buf.subarray(0, nl).toString('utf8').trim();
          buf = buf.subarray(nl + 1);
          if (line === '') continue;
          const msg = JSON.parse(line) as Json;
          this.received.push(msg);
          onLine(msg, s);
        }
      });
      onConnect(s);
    });
  }

  /** Starts a server in a fresh temporary directory. */
  static async start(onConnect: (s: Socket) => void, onLine: (msg: Json, s: Socket) => void): Promise<FakeEndpoint> {
    const dir = await mkdtemp(join(tmpdir(), 'ptlab-fake-'));
    const ep = new FakeEndpoint(dir, join(dir, 'ep.sock'), onConnect, onLine);
    await new Promise<void>((resolve) => ep.server.listen(ep.path, resolve));
    return ep;
  }

  /** Drops every client connection. */
  dropClients(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** The commands received, in order. */
  commands(): string[] {
    return this.received.map((m) => String(m['execute']));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.dropClients();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Writes one JSON reply line. */
export function reply(s: Socket, msg: Json): void {
  s.write(`${JSON.stringify(msg)}\r\n`);
}

export const GREETING = { QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 }, package: 'fake' }, capabilities: ['oob'] } };
