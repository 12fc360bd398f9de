// `ptlab run --target ssh --host H`: a lab machine's own PT through ptlab-helper over SSH
// (DESIGN.md "ssh"), one connection for the whole suite. The host key is pinned: taken from
// --known-host (an OpenSSH public key file, or a known_hosts file looked up by host and port),
// never trusted on first use. PT is required (requirePt): a CPU without it is refused.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PtError, UnsupportedError } from '../../driver/errors.js';
import { SshTarget } from '../ssh/ssh-target.js';
import { HelperPtSuite } from './helper-suite.js';
import { probedProfile } from './probed-profile.js';
import { TargetUnavailableError, throwIfInterrupted, type SuiteTarget } from './suite-target.js';
import type { SshReach } from './targets.js';

/** Bound of connect + helper start. */
const CONNECT_TIMEOUT_MS = 30_000;
/** Key types of OpenSSH public key lines ("ssh-ed25519 AAAA…", "ecdsa-sha2-nistp256 AAAA…"). */
const KEY_TYPE = /^(ssh-|ecdsa-|sk-)/;

/**
 * The pinned host key line ("TYPE BASE64") for `host`:`port` in `text`: the first key line of an
 * OpenSSH public key file, or the known_hosts entry naming `host` (port 22) or `[host]:port`.
 * Hashed (|1|…) and @-marker entries are not matched. PtError('bad_config') when none is found.
 */
export function pinnedHostKey(text: string, host: string, port = 22, file = 'the key file'): string {
  const want = port === 22 ? host : `[${host}]:${port}`;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('@')) continue;
    const f = line.split(/\s+/);
    if (KEY_TYPE.test(f[0]!) && f[1] !== undefined) return `${f[0]} ${f[1]}`;
    if (f.length >= 3 && KEY_TYPE.test(f[1]!) && f[0]!.split(',').includes(want)) return `${f[1]} ${f[2]}`;
  }
  throw new PtError('bad_config', `no host key for ${want} in ${file} (hashed known_hosts entries are not read: give the host's public key file with --known-host)`);
}

/** Connects to the lab machine as `reach` says; TargetUnavailableError when it cannot, or its CPU lacks PT. */
export async function openSshSuite(reach: SshReach, signal?: AbortSignal): Promise<SuiteTarget> {
  const keyFile = reach.key ?? join(homedir(), '.ssh', 'id_ed25519');
  const knownFile = reach.knownHost ?? join(homedir(), '.ssh', 'known_hosts');
  const read = async (f: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(f);
    } catch (e) {
      throw new PtError('bad_config', `cannot read ${what} ${f}: ${(e as Error).message}`, { cause: e });
    }
  };
  const privateKey = await read(keyFile, 'the client key (--key)');
  const hostKey = pinnedHostKey((await read(knownFile, 'the pinned host key (--known-host)')).toString('utf8'), reach.host, reach.port, knownFile);
  const where = `ssh:${reach.host}`;
  let t: SshTarget;
  try {
    t = await SshTarget.connect({
      host: reach.host, ...(reach.port === undefined ? {} : { port: reach.port }), username: reach.user ?? 'root',
      privateKey, hostKey, requirePt: true, timeoutMs: CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}),
    });
  } catch (e) {
    throwIfInterrupted(signal, e);
    const hint = e instanceof UnsupportedError ? 'run PT scenarios on the model (--target sim, or --target qemu --pt model)' : undefined;
    throw new TargetUnavailableError(where, `${where}: ${(e as Error).message}`, hint, { cause: e });
  }
  try {
    return new HelperPtSuite('ssh', t, await probedProfile(t, signal ? { signal } : {}));
  } catch (e) {
    await t.dispose();
    throw e;
  }
}

