// What an ssh connection that cannot be made says: the host and port, then the system's words
// (`ssh: 127.0.0.1:40000: Connection refused`), as ssh(1) says it — not Node's `connect ECONNREFUSED`.
import { createServer } from 'node:net';
import { utils } from 'ssh2';
import { expect, test } from 'vitest';
import { SshError } from '../../harness/ssh/errors.js';
import { SshClient } from '../../harness/ssh/ssh-client.js';

/** A local port nothing listens on: one the kernel just handed out and took back. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

test('a port nobody listens on: SshError connect, "ssh: HOST:PORT: Connection refused"', async () => {
  const port = await closedPort();
  const key = utils.generateKeyPairSync('ed25519');
  const e = await SshClient.connect({ host: '127.0.0.1', port, username: 'root', privateKey: key.private, hostKey: key.public }, { timeoutMs: 5000 })
    .catch((x: unknown) => x);
  expect([e instanceof SshError, (e as SshError).message]).toEqual([true, `ssh: 127.0.0.1:${port}: Connection refused`]);
});
