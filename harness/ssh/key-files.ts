// The client key and the known-hosts file of an SSH connection, read as OpenSSH reads them (ssh(1)
// "FILES"): each bounded by what it is, a private key refused when others may read it ("UNPROTECTED
// PRIVATE KEY FILE"), when it is a public key, or when it cannot be used (encrypted, damaged).
// Each refusal is PtError('bad_config'): the command line names a file that cannot serve.
import { stat } from 'node:fs/promises';
import ssh2 from 'ssh2';
import { PtError } from '../../driver/base/errors.js';
import { readBoundedText } from '../files/read-input.js';
import { checkPrivateKey } from './known-hosts.js';

/** A private key is a few kB; a known_hosts file of a large site a few MB. */
export const CLIENT_KEY_MAX_BYTES = 64 << 10, KNOWN_HOSTS_MAX_BYTES = 16 << 20;

/** `path`'s text, at most `max` bytes of a regular file; PtError('bad_config') naming `what` otherwise. */
async function readOne(path: string, max: number, what: string): Promise<string> {
  try {
    return await readBoundedText(path, max, what);
  } catch (e) {
    if (e instanceof PtError) throw e;
    throw new PtError('bad_config', `cannot read ${what} ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** The client's private key at `path`, checked as OpenSSH checks it before use. */
export async function readClientKey(path: string, flag = '--key'): Promise<Buffer> {
  const text = await readOne(path, CLIENT_KEY_MAX_BYTES, `a private key (${flag})`);
  const key = Buffer.from(text, 'utf8');
  checkPrivateKey(key, path, flag);
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new PtError('bad_config', `${flag} ${path} is readable by others (mode ${mode.toString(8).padStart(4, '0')}); a private key must not be, and OpenSSH refuses it too: chmod 600 ${path}`);
  }
  const parsed = ssh2.utils.parseKey(key);
  if (parsed instanceof Error) {
    const encrypted = /passphrase|encrypted/i.test(parsed.message);
    throw new PtError('bad_config', `${flag} ${path} cannot be used: ${encrypted ? 'it is encrypted (ptlab asks for no passphrase: give a key without one, kept private)' : parsed.message}`);
  }
  return key;
}

/** The known-hosts (or public key) file at `path`, as text. */
export function readKnownHosts(path: string, flag = '--known-host'): Promise<string> {
  return readOne(path, KNOWN_HOSTS_MAX_BYTES, `a known-hosts file (${flag})`);
}
