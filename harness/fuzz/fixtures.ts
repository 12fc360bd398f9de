// The right files the CLI fuzz starts from, made once per campaign with ptlab itself: two suites
// of one run, two shards, a sequence file, an SSH key with its known_hosts line, an inventory.
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { FixtureFacts } from './commands.js';

/** Makes the fixtures under `dir` by running `cli` (dist/harness/cli/ptlab.js); returns their facts. */
export async function makeFixtures(cli: string, dir: string): Promise<FixtureFacts> {
  await mkdir(dir, { recursive: true });
  const ptlab = (...argv: string[]): void => {
    try {
      execFileSync(process.execPath, [cli, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      const status = (e as { status?: number }).status;
      if (status !== 0 && status !== 1) throw e;
    }
  };
  ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', join(dir, 'suite'));
  ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', join(dir, 'suite2'));
  ptlab('run', 'topa-grow', 'topa-chain', '--cpu', 'skylake', '--shard', '1/2', '--out', join(dir, 'shard1'));
  ptlab('run', 'topa-grow', 'topa-chain', '--cpu', 'skylake', '--shard', '2/2', '--out', join(dir, 'shard2'));
  // The repository's own sequence of the SDM's enable and disable order (cli is <repo>/dist/harness/cli/).
  await copyFile(join(dirname(cli), '..', '..', '..', 'sequences', 'enable-disable.yaml'), join(dir, 'seq.yaml'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ptlab-fuzz', '-f', join(dir, 'key')]);
  const pub = (await readFile(join(dir, 'key.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
  const closedPort = await freePort();
  // OpenSSH's form for a port other than 22 (sshd(8) SSH_KNOWN_HOSTS FILE FORMAT).
  await writeFile(join(dir, 'known_hosts'), `[127.0.0.1]:${closedPort} ${pub}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'hosts.yaml'), `hosts:\n  - name: fuzz-1\n    host: 127.0.0.1\n    port: ${closedPort}\n` +
    `    key: ${join(dir, 'key')}\n    known-host: ${join(dir, 'known_hosts')}\n`);
  const imageJson = JSON.parse(await readFile(join(dir, 'suite/topa-grow/skylake/image.json'), 'utf8')) as { base: string };
  return { imageBase: imageJson.base, closedPort };
}

/** A local port nothing listens on (bound once, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr !== null ? addr.port : 0));
    });
  });
}
