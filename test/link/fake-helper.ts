// A fake guest helper on a unix socket: only the transport edge is faked; the channel
// and the targets under test are the real ones.
import type { Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fake helper answering each request line with `answer(verb, args)` ('' = no answer). */
export async function fakeHelper(answer: (verb: string, args: string[]) => string): Promise<{ path: string } & AsyncDisposable> {
  const dir = await mkdtemp(join(tmpdir(), 'ptlab-fake-'));
  const path = join(dir, 'helper.sock');
  const socks = new Set<Socket>();
  const server = createServer((s) => {
    socks.add(s);
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      text += d;
      let nl: number;
      while ((nl = text.indexOf('\n')) >= 0) {
        const [id, verb, ...args] = text.slice(0, nl).split(' ');
        text = text.slice(nl + 1);
        const a = answer(verb!, args);
        if (a !== '') s.write(`${id} ${a}\n`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  return {
    path,
    async [Symbol.asyncDispose]() {
      for (const s of socks) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
