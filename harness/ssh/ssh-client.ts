// SSH with ssh2 and a pinned host key (docs/design.md "ssh"; docs/qemu.md §3: ssh2 works against the
// guest's dropbear with ed25519 keys). The server's key must equal the pinned OpenSSH public
// key exactly, else the connection is refused with SshError('host_key_mismatch') before any
// authentication. Commands run with `exec` (stdout, stderr, exit code) or as a raw stream.
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel } from 'ssh2';
import { PtError } from '../../driver/base/errors.js';
import { SshError } from './errors.js';
import type { PinnedKeys } from './known-hosts.js';
import { systemWords } from '../text/strerror.js';

/** Where and as whom to connect. */
export interface SshConfig {
  readonly host: string;
  readonly port?: number;
  readonly username: string;
  /** The client's private key (OpenSSH format). */
  readonly privateKey: string | Buffer;
  /**
   * The pinned host key: an OpenSSH public key line "ssh-ed25519 AAAA… [comment]", or the keys a
   * known_hosts file pins for the host (any is accepted, a revoked one never: known-hosts.ts).
   */
  readonly hostKey: string | PinnedKeys;
}

/** What a command did. */
export interface SshExecResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
}

/** Default bound of a connection attempt. */
export const SSH_CONNECT_TIMEOUT_MS = 20_000;

/** How long a refused or reset connection is tried again (a booting guest starts its sshd a moment after its agent). */
export const SSH_REFUSED_RETRY_MS = 5_000;

/** getaddrinfo's answers for a name that does not resolve: final, unlike a refused connection. */
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_NODATA', 'EAI_FAIL']);

/** The key blob of an OpenSSH public key line (the base64 field), for comparing with what the server sends. */
export function hostKeyBlob(line: string): Buffer {
  const fields = line.trim().split(/\s+/);
  if (fields.length < 2 || !/^[A-Za-z0-9+/=]+$/.test(fields[1]!)) throw new PtError('bad_config', `not an OpenSSH public key line: ${line.slice(0, 60)}`);
  return Buffer.from(fields[1]!, 'base64');
}

/** Reads the pinned host key and the client key of a built guest image (images/out/keys). */
export async function imageSshKeys(hostKeyPub: string, clientKey: string): Promise<{ hostKey: string; privateKey: Buffer }> {
  return { hostKey: await readFile(hostKeyPub, 'utf8'), privateKey: await readFile(clientKey) };
}

/** An open SSH connection. */
export class SshClient implements AsyncDisposable {
  private closed = false;

  private constructor(private readonly conn: Client, readonly host: string) {
    conn.on('close', () => { this.closed = true; });
  }

  /** Connects, verifying the host key against the pinned one. */
  static async connect(cfg: SshConfig, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<SshClient> {
    const pinned = typeof cfg.hostKey === 'string' ? { keys: [cfg.hostKey], revoked: [] } : cfg.hostKey;
    const accepted = pinned.keys.map(hostKeyBlob), revoked = pinned.revoked.map(hostKeyBlob);
    const conn = new Client();
    let mismatch: Buffer | undefined, wasRevoked = false;
    const where = `${cfg.host}:${cfg.port ?? 22}`;
    return new Promise<SshClient>((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? SSH_CONNECT_TIMEOUT_MS;
      const fail = (e: Error): void => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        conn.end();
        reject(e);
      };
      const onAbort = (): void => fail(new PtError('aborted', `ssh connect to ${where} aborted: ${String(opts.signal?.reason)}`));
      const timer = setTimeout(() => fail(new SshError('timeout', `connect to ${where} timed out after ${timeoutMs} ms`, where)), timeoutMs);
      if (opts.signal?.aborted) { onAbort(); return; }
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      conn.on('ready', () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(new SshClient(conn, where));
      });
      conn.on('error', (e: Error & { level?: string }) => {
        if (mismatch !== undefined && wasRevoked) {
          fail(new SshError('host_key_revoked', `the host key of ${where} is marked @revoked in the known-hosts file (got ${keyText(mismatch)})`, where, { cause: e }));
        } else if (mismatch !== undefined) {
          fail(new SshError('host_key_mismatch', `the host key of ${where} is not ${accepted.length > 1 ? 'one of the pinned keys' : 'the pinned key'} (got ${keyText(mismatch)})`, where, { cause: e }));
        } else if (e.level === 'client-authentication') {
          fail(new SshError('auth', `${where} refused the client key for ${cfg.username}`, where, { cause: e }));
        } else if (NO_SUCH_HOST.has((e as NodeJS.ErrnoException).code ?? '')) {
          fail(new SshError('no_such_host', `${cfg.host} does not resolve (${(e as NodeJS.ErrnoException).code}): is the host name right?`, where, { cause: e }));
        } else {
          fail(new SshError('connect', `${where}: ${systemWords(e)}`, where, { cause: e }));
        }
      });
      const options = {
        host: cfg.host,
        port: cfg.port ?? 22,
        username: cfg.username,
        privateKey: cfg.privateKey,
        readyTimeout: timeoutMs,
        hostVerifier: (key: Buffer): boolean => {
          wasRevoked = revoked.some((r) => r.equals(key));
          if (!wasRevoked && accepted.some((k) => k.equals(key))) return true;
          mismatch = key;
          return false;
        },
      };
      // ssh2 throws at once for a client key it cannot parse: a final failure (no retry), with the timer cleared.
      try {
        conn.connect(options);
      } catch (e) {
        fail(e as Error);
      }
    });
  }

  /**
   * Connects, retrying refused or reset connections for `retryMs` (a booting guest starts dropbear a
   * moment after its guest agent); other failures are final, a name that does not resolve at once.
   */
  static async connectWhenReady(cfg: SshConfig, opts: { signal?: AbortSignal; timeoutMs?: number; retryMs?: number } = {}): Promise<SshClient> {
    const deadline = Date.now() + (opts.timeoutMs ?? SSH_CONNECT_TIMEOUT_MS);
    const retryUntil = Math.min(deadline, Date.now() + (opts.retryMs ?? SSH_REFUSED_RETRY_MS));
    for (;;) {
      try {
        return await SshClient.connect(cfg, { ...opts, timeoutMs: Math.max(1000, deadline - Date.now()) });
      } catch (e) {
        if (!(e instanceof SshError) || e.failure !== 'connect' || Date.now() > retryUntil) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Opens a command as a stream (its stdin/stdout); stderr is on `.stderr`. */
  openExec(command: string): Promise<ClientChannel & Duplex> {
    if (this.closed) return Promise.reject(new SshError('closed', `connection to ${this.host} is closed`, this.host));
    return new Promise((resolve, reject) => {
      this.conn.exec(command, (err, ch) => {
        if (err) reject(new SshError('closed', `exec on ${this.host}: ${err.message}`, this.host, { cause: err }));
        else resolve(ch);
      });
    });
  }

  /** Runs a command to its end and returns its exit status and output. */
  async exec(command: string, opts: { signal?: AbortSignal } = {}): Promise<SshExecResult> {
    const ch = await this.openExec(command);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    return new Promise((resolve, reject) => {
      let code: number | null = null;
      let sig: string | null = null;
      const onAbort = (): void => {
        ch.close();
        reject(new PtError('aborted', `ssh exec aborted: ${String(opts.signal?.reason)}`));
      };
      if (opts.signal?.aborted) { onAbort(); return; }
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      ch.on('data', (d: Buffer) => out.push(d));
      ch.stderr.on('data', (d: Buffer) => err.push(d));
      ch.on('exit', (c: number | null, s?: string) => { code = c; sig = s ?? null; });
      ch.on('close', () => {
        opts.signal?.removeEventListener('abort', onAbort);
        resolve({ exitCode: code, signal: sig, stdout: new Uint8Array(Buffer.concat(out)), stderr: new Uint8Array(Buffer.concat(err)) });
      });
      ch.stdin.end();
    });
  }

  /** Closes the connection (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => {
      this.conn.once('close', () => resolve());
      this.conn.end();
      setTimeout(resolve, 1000).unref();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function keyText(blob: Buffer): string {
  const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1');
  return `${type} ${blob.toString('base64')}`;
}
