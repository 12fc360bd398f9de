// The pinned host keys of an SSH lab machine, from what OpenSSH users already have: a public key
// file ("TYPE BASE64 [comment]") or a known_hosts file, read as sshd(8) "SSH_KNOWN_HOSTS FILE
// FORMAT" and "PATTERNS" say: an optional marker (@cert-authority, @revoked), comma-separated host
// patterns (`*` and `?` wildcards, `!` negation, `[host]:port`) or one hashed name (|1|salt|hmac),
// the key type, the key, a comment. Every key listed for the host is accepted, as OpenSSH accepts
// any of them; a key marked @revoked for it (a `*` pattern included) never is. Host certificates
// (@cert-authority) cannot be checked here: a host known only through one is refused, said so.
import { createHmac } from 'node:crypto';
import { PtError } from '../../driver/base/errors.js';

/** Key types of OpenSSH public keys ("ssh-ed25519", "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com"). */
const KEY_TYPE = /^(ssh-|ecdsa-|sk-)/;

/** The host keys a file pins for one host: any of `keys` is accepted; one in `revoked` never is. */
export interface PinnedKeys {
  /** "TYPE BASE64" lines, in file order, none of them revoked. */
  readonly keys: readonly string[];
  /** "TYPE BASE64" lines the file marks @revoked for the host. */
  readonly revoked: readonly string[];
}

/** True when the pattern `p` (`*` any run, `?` any one character) matches `name`, case-insensitively as OpenSSH's match_pattern. */
function glob(p: string, name: string): boolean {
  const re = new RegExp(`^${[...p.toLowerCase()].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('')}$`);
  return re.test(name.toLowerCase());
}

/**
 * True when the host field `entry` names `want`: one hashed name, or a pattern list in which some
 * pattern matches and no negated one does (sshd(8) "PATTERNS").
 */
function names(entry: string, want: string): boolean {
  if (entry.startsWith('|1|')) {
    const [, , salt, mac] = entry.split('|');
    if (salt === undefined || mac === undefined) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(want).digest('base64') === mac;
  }
  let hit = false;
  for (const p of entry.split(',')) {
    if (p.startsWith('!')) { if (glob(p.slice(1), want)) return false; } else if (glob(p, want)) hit = true;
  }
  return hit;
}

/**
 * The host keys for `host`:`port` in `text`: the first key of an OpenSSH public key file, or every
 * known_hosts entry that names `host` (port 22) or `[host]:port`, less those marked @revoked.
 * PtError('bad_config') when none is left, saying why (no entry, all revoked, certificates only).
 */
export function pinnedHostKeys(text: string, host: string, port = 22, file = 'the key file'): PinnedKeys {
  const want = port === 22 ? host : `[${host}]:${port}`;
  const keys: string[] = [], revoked: string[] = [];
  let authorities = 0;
  let publicKey: string | undefined;
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
      if (marker === '@revoked') revoked.push(key);
      else if (marker === '@cert-authority') authorities++;
      else if (marker === undefined && !keys.includes(key)) keys.push(key);
      continue;
    }
    if (marker === undefined && KEY_TYPE.test(f[0]!) && f[1] !== undefined) publicKey ??= `${f[0]} ${f[1]}`;
  }
  if (keys.length === 0 && publicKey !== undefined) keys.push(publicKey);
  const accepted = keys.filter((k) => !revoked.includes(k));
  if (accepted.length === 0) {
    if (keys.length > 0) throw new PtError('bad_config', `the host key${keys.length > 1 ? 's' : ''} of ${want} in ${file} ${keys.length > 1 ? 'are' : 'is'} marked @revoked`);
    if (authorities > 0) throw new PtError('bad_config', `${file} knows ${want} only through @cert-authority, and ptlab cannot check host certificates: pin the host's own key (ssh-keyscan, or its /etc/ssh/ssh_host_*_key.pub)`);
    throw new PtError('bad_config', `no host key for ${want} in ${file}`);
  }
  return { keys: accepted, revoked };
}

/** Refuses a public key given where the private key belongs (`--key id_ed25519.pub`); `flag` names where it was given. */
export function checkPrivateKey(bytes: Buffer, file: string, flag = '--key'): void {
  const text = bytes.toString('utf8').trim();
  if (!text.includes('PRIVATE KEY') && KEY_TYPE.test(text)) {
    throw new PtError('bad_config', `${flag} ${file} is a public key; give the private key (e.g. ${file.replace(/\.pub$/, '')})`);
  }
}
