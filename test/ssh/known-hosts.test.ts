// known_hosts as OpenSSH writes it (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT") and the --key check.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../harness/cli/main.js';
import { checkPrivateKey, pinnedHostKey } from '../../harness/ssh/known-hosts.js';
import { tmpRoot } from '../scenarios/tmp.js';

const KEY = 'AAAAC3NzaC1lZDI1NTE5AAAAIGq0fakefakefakefakefakefakefakefakefakefake';
const OTHER = 'AAAAC3NzaC1lZDI1NTE5AAAAIOtherothe';

/** A hashed known_hosts name for `host`, as `ssh-keygen -H` writes it. */
function hashed(host: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(host).digest('base64')}`;
}

describe('pinnedHostKey', () => {
  test('an earlier line whose host name starts with "ssh-" is a known_hosts line, not a public key file', () => {
    const text = `ssh-gateway ssh-ed25519 ${OTHER}\nlab1 ssh-ed25519 ${KEY}\n`;
    expect(pinnedHostKey(text, 'lab1')).toBe(`ssh-ed25519 ${KEY}`);
  });

  test('a hashed name matches its host (and only it), on port 22 and as [host]:port', () => {
    const text = `${hashed('lab9')} ssh-ed25519 ${OTHER}\n${hashed('lab1')} ssh-ed25519 ${KEY}\n${hashed('[lab1]:2222')} ssh-rsa AAAAB3Nzaport\n`;
    expect([pinnedHostKey(text, 'lab1'), pinnedHostKey(text, 'lab1', 2222)]).toEqual([`ssh-ed25519 ${KEY}`, 'ssh-rsa AAAAB3Nzaport']);
  });

  test('@cert-authority lines are not host keys; a key marked @revoked for the host is refused', () => {
    const ca = `@cert-authority *.lab ssh-ed25519 ${OTHER}\nlab1 ssh-ed25519 ${KEY}\n`;
    const revoked = `lab1 ssh-ed25519 ${KEY}\n@revoked lab1 ssh-ed25519 ${KEY}\n`;
    expect(pinnedHostKey(ca, 'lab1')).toBe(`ssh-ed25519 ${KEY}`);
    expect(() => pinnedHostKey(revoked, 'lab1', 22, 'kh')).toThrow(expect.objectContaining({ code: 'bad_config', message: 'the host key of lab1 in kh is marked @revoked' }));
  });
});

describe('checkPrivateKey', () => {
  test('a public key given as --key is a usage error naming the private key file', () => {
    expect(() => checkPrivateKey(Buffer.from(`ssh-ed25519 ${KEY} me@host\n`), '/home/me/.ssh/id_ed25519.pub'))
      .toThrow(expect.objectContaining({ code: 'bad_config', message: '--key /home/me/.ssh/id_ed25519.pub is a public key; give the private key (e.g. /home/me/.ssh/id_ed25519)' }));
  });

  test('an OpenSSH private key passes', () => {
    expect(() => checkPrivateKey(Buffer.from('-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n'), 'k')).not.toThrow();
  });
});

describe('ptlab run --target ssh --key PUBLIC', () => {
  test('exits 2 at once with the usage error, before any connection attempt', async () => {
    const dir = await tmpRoot('ptlab-key-');
    const pub = join(dir, 'id_ed25519.pub'), kh = join(dir, 'known_hosts');
    await writeFile(pub, `ssh-ed25519 ${KEY} me@host\n`);
    await writeFile(kh, `127.0.0.1 ssh-ed25519 ${KEY}\n`);
    const err: string[] = [];
    const t0 = Date.now();
    const code = await main(['run', '--all', '--target', 'ssh', '--host', '127.0.0.1', '--port', '9', '--key', pub, '--known-host', kh, '--out', join(dir, 'runs')],
      { out: () => undefined, err: (s) => err.push(s) });
    expect([code, err.join('\n').includes(`--key ${pub} is a public key`), Date.now() - t0 < 5000]).toEqual([2, true, true]);
  });
});
