// known_hosts as OpenSSH writes it (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT") and the --key check.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { chmod, copyFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { main } from '../../harness/cli/main.js';
import { checkPrivateKey, pinnedHostKeys } from '../../harness/ssh/known-hosts.js';
import { tmpRoot } from '../scenarios/tmp.js';

/** A real private key (an RSA key in PEM, which ssh2 reads as OpenSSH does), written 0600. */
const keyDir = await tmpRoot('ptlab-rsa-');
const GUEST_KEY = join(keyDir, 'id_rsa');
await writeFile(GUEST_KEY, generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'pkcs1', format: 'pem' } }).privateKey, { mode: 0o600 });

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
    expect(pinnedHostKeys(text, 'lab1').keys[0]).toBe(`ssh-ed25519 ${KEY}`);
  });

  test('a hashed name matches its host (and only it), on port 22 and as [host]:port', () => {
    const text = `${hashed('lab9')} ssh-ed25519 ${OTHER}\n${hashed('lab1')} ssh-ed25519 ${KEY}\n${hashed('[lab1]:2222')} ssh-rsa AAAAB3Nzaport\n`;
    expect([pinnedHostKeys(text, 'lab1').keys, pinnedHostKeys(text, 'lab1', 2222).keys]).toEqual([[`ssh-ed25519 ${KEY}`], ['ssh-rsa AAAAB3Nzaport']]);
  });

  test('@cert-authority lines are not host keys; a key marked @revoked for the host is refused', () => {
    const ca = `@cert-authority *.lab ssh-ed25519 ${OTHER}\nlab1 ssh-ed25519 ${KEY}\n`;
    const revoked = `lab1 ssh-ed25519 ${KEY}\n@revoked lab1 ssh-ed25519 ${KEY}\n`;
    expect(pinnedHostKeys(ca, 'lab1').keys[0]).toBe(`ssh-ed25519 ${KEY}`);
    expect(() => pinnedHostKeys(revoked, 'lab1', 22, 'kh')).toThrow(expect.objectContaining({ code: 'bad_config', message: 'the host key of lab1 in kh is marked @revoked' }));
  });
});

describe('pinnedHostKeys, as OpenSSH reads known_hosts (sshd(8) "PATTERNS")', () => {
  test('a host listed with two keys: both are accepted, in file order', () => {
    const text = `lab1 ssh-ed25519 ${KEY}\nlab1 ssh-rsa AAAAB3Nzarsa\n`;
    expect(pinnedHostKeys(text, 'lab1').keys).toEqual([`ssh-ed25519 ${KEY}`, 'ssh-rsa AAAAB3Nzarsa']);
  });

  test.for([
    { pattern: '*.lab', host: 'pt1.lab', hit: true },
    { pattern: 'pt?.lab', host: 'pt7.lab', hit: true },
    { pattern: 'pt?.lab', host: 'pt10.lab', hit: false },
    { pattern: '*.lab,!pt2.lab', host: 'pt2.lab', hit: false },
    { pattern: '*.lab,!pt2.lab', host: 'pt3.lab', hit: true },
    { pattern: 'PT1.LAB', host: 'pt1.lab', hit: true },
    { pattern: '[*.lab]:2222', host: '[pt1.lab]:2222', hit: true },
  ])('the pattern $pattern names $host: $hit', ({ pattern, host, hit }) => {
    const [name, port] = host.startsWith('[') ? [host.slice(1, host.indexOf(']')), Number(host.slice(host.lastIndexOf(':') + 1))] : [host, 22];
    const text = `${pattern} ssh-ed25519 ${KEY}\n`;
    const got = (() => { try { return pinnedHostKeys(text, name, port).keys.length > 0; } catch { return false; } })();
    expect(got).toBe(hit);
  });

  test('@revoked * marks a key revoked for every host: it is refused, and kept as revoked for the connection', () => {
    const text = `lab1 ssh-ed25519 ${KEY}\nlab1 ssh-rsa AAAAB3Nzarsa\n@revoked * ssh-ed25519 ${KEY}\n`;
    expect(pinnedHostKeys(text, 'lab1')).toEqual({ keys: ['ssh-rsa AAAAB3Nzarsa'], revoked: [`ssh-ed25519 ${KEY}`] });
    expect(() => pinnedHostKeys(`lab1 ssh-ed25519 ${KEY}\n@revoked * ssh-ed25519 ${KEY}\n`, 'lab1', 22, 'kh')).toThrow(/marked @revoked/);
  });

  test('a host known only through @cert-authority is refused with what to do', () => {
    expect(() => pinnedHostKeys(`@cert-authority *.lab ssh-ed25519 ${OTHER}\n`, 'pt1.lab', 22, 'kh'))
      .toThrow(expect.objectContaining({ code: 'bad_config', message: expect.stringMatching(/kh knows pt1\.lab only through @cert-authority.*pin the host's own key/) }));
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

describe('the client key and the known-hosts file, as OpenSSH takes them', () => {
  const ssh = (dir: string, key: string, kh: string, host = '127.0.0.1', port = '9') =>
    ['run', '--all', '--target', 'ssh', '--host', host, '--port', port, '--key', key, '--known-host', kh, '--out', join(dir, 'runs')];

  async function ptlab(argv: string[]): Promise<{ code: number; err: string; ms: number }> {
    const err: string[] = [];
    const t0 = Date.now();
    const code = await main(argv, { out: () => undefined, err: (s) => err.push(s) });
    return { code, err: err.join('\n'), ms: Date.now() - t0 };
  }

  test.for([
    { what: 'a private key others may read (0644)', key: async (p: string) => { await copyFile(GUEST_KEY, p); await chmod(p, 0o644); }, msg: /is readable by others \(mode 0644\).*chmod 600/ },
    { what: 'a key that is no key', key: async (p: string) => { await writeFile(p, '-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64\n-----END OPENSSH PRIVATE KEY-----\n', { mode: 0o600 }); }, msg: /cannot be used/ },
    { what: '/dev/zero', key: async (p: string) => { await symlink('/dev/zero', p); }, msg: /is not a regular file/ },
  ])('$what as --key: exit 2 at once, before any connection', async ({ key, msg }) => {
    const dir = await tmpRoot('ptlab-key-');
    const k = join(dir, 'id'), kh = join(dir, 'known_hosts');
    await key(k);
    await writeFile(kh, `127.0.0.1 ssh-ed25519 ${KEY}\n`);
    const r = await ptlab(ssh(dir, k, kh));
    expect([r.code, msg.test(r.err), r.ms < 5000]).toEqual([2, true, true]);
  });

  test('/dev/zero as --known-host: exit 2 at once', async () => {
    const dir = await tmpRoot('ptlab-kh-');
    const k = join(dir, 'id');
    await copyFile(GUEST_KEY, k);
    await chmod(k, 0o600);
    const r = await ptlab(ssh(dir, k, '/dev/zero'));
    expect([r.code, /is not a regular file/.test(r.err), r.ms < 5000]).toEqual([2, true, true]);
  });

  test('an empty --host is a usage error; a name that does not resolve is not retried', async () => {
    const dir = await tmpRoot('ptlab-host-');
    const k = join(dir, 'id'), kh = join(dir, 'known_hosts');
    await copyFile(GUEST_KEY, k);
    await chmod(k, 0o600);
    await writeFile(kh, `* ssh-ed25519 ${KEY}\n`);
    const empty = await ptlab(ssh(dir, k, kh, ''));
    const nx = await ptlab(ssh(dir, k, kh, 'no-such-host.invalid', '22'));
    expect([empty.code, /--host must name a machine/.test(empty.err), nx.code, /does not resolve/.test(nx.err), nx.ms < 10_000]).toEqual([2, true, 3, true, true]);
  });

  test('a closed port is tried again for a few seconds only, then exit 3', async () => {
    const dir = await tmpRoot('ptlab-port-');
    const k = join(dir, 'id'), kh = join(dir, 'known_hosts');
    await copyFile(GUEST_KEY, k);
    await chmod(k, 0o600);
    await writeFile(kh, `[127.0.0.1]:9 ssh-ed25519 ${KEY}\n`);
    const r = await ptlab(ssh(dir, k, kh));
    expect([r.code, r.ms < 15_000]).toEqual([3, true]);
  });
});
