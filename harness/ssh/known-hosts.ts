// The pinned host key of an SSH lab machine, from what OpenSSH users already have: a public key
// file ("TYPE BASE64 [comment]") or a known_hosts file, read per sshd(8) "SSH_KNOWN_HOSTS FILE
// FORMAT": an optional marker (@cert-authority, @revoked), comma-separated host patterns or one
// hashed name (|1|salt|hmac), the key type, the key, a comment. Host patterns here are literal
// names and `[host]:port`; wildcard and negated patterns are not matched.
import { createHmac } from 'node:crypto';
import { PtError } from '../../driver/base/errors.js';

/** Key types of OpenSSH public keys ("ssh-ed25519", "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com"). */
const KEY_TYPE = /^(ssh-|ecdsa-|sk-)/;

/** True when `entry` (one known_hosts host field) names `want`: a literal list, or a hashed name. */
function names(entry: string, want: string): boolean {
  if (entry.startsWith('|1|')) {
    const [, , salt, mac] = entry.split('|');
    if (salt === undefined || mac === undefined) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(want).digest('base64') === mac;
  }
  return entry.split(',').includes(want);
}

/**
 * The host key line ("TYPE BASE64") for `host`:`port` in `text`: the first key of an OpenSSH
 * public key file, or the known_hosts entry that names `host` (port 22) or `[host]:port`.
 * A key the file marks @revoked for the host is refused; @cert-authority lines are not host keys.
 * PtError('bad_config') when no key is found.
 */
export function pinnedHostKey(text: string, host: string, port = 22, file = 'the key file'): string {
  const want = port === 22 ? host : `[${host}]:${port}`;
  const revoked = new Set<string>();
  let found: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const f = line.split(/\s+/);
    const marker = f[0]!.startsWith('@') ? f.shift()! : undefined;
    // known_hosts: HOSTS TYPE KEY; a public key file: TYPE KEY [comment]. A host name may itself
    // start with "ssh-", so the known_hosts reading is tried first.
    if (f.length >= 3 && KEY_TYPE.test(f[1]!)) {
      if (!names(f[0]!, want)) continue;
      const key = `${f[1]} ${f[2]}`;
      if (marker === '@revoked') revoked.add(key);
      else if (marker === undefined) found ??= key;
      continue;
    }
    if (marker === undefined && KEY_TYPE.test(f[0]!) && f[1] !== undefined) found ??= `${f[0]} ${f[1]}`;
  }
  if (found !== undefined && revoked.has(found)) throw new PtError('bad_config', `the host key of ${want} in ${file} is marked @revoked`);
  if (found === undefined) throw new PtError('bad_config', `no host key for ${want} in ${file}`);
  return found;
}

/** Refuses a public key given where the private key belongs (`--key id_ed25519.pub`). */
export function checkPrivateKey(bytes: Buffer, file: string): void {
  const text = bytes.toString('utf8').trim();
  if (!text.includes('PRIVATE KEY') && KEY_TYPE.test(text)) {
    throw new PtError('bad_config', `--key ${file} is a public key; give the private key (e.g. ${file.replace(/\.pub$/, '')})`);
  }
}
