// A QEMU guest-agent client (docs/qemu.md §3): the agent has no greeting and no ids, so every
// exchange is one request at a time, and the stream is synchronised by sending 0xFF (which
// resets the agent's parser) and `guest-sync-delimited` with a random id, then skipping the
// reply up to its 0xFF. A request that times out leaves its reply in flight (a stopped VM
// answers after `cont`), so the next request resynchronises first.
import { randomInt } from 'node:crypto';
import type { Socket } from 'node:net';
import { ByteReader } from './byte-reader.js';
import { sleep, withDeadline, type TimedOpts } from '../link/deadline.js';
import { QmpError } from './errors.js';
import { StateError, TargetError } from '../link/errors.js';
import { abortError } from '../link/queue.js';
import { connectUnix } from '../link/socket.js';

/** Connection states. */
export type QgaState = 'idle' | 'connecting' | 'running' | 'disconnecting' | 'closed';

/** What `guest-exec` produced. */
export interface ExecResult {
  /** The exit code, or null when the process died by a signal. */
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The agent cut the captured output short. */
  readonly truncated: boolean;
}

/** Default timeout of one agent request. */
export const QGA_REQUEST_TIMEOUT_MS = 10_000;
/** Default timeout of `exec` (the whole run, polling included). */
export const QGA_EXEC_TIMEOUT_MS = 60_000;
const SYNC_BYTE = 0xff;
const FILE_CHUNK = 48 * 1024;

/** A guest-agent client on the host end of the agent's virtio-serial port. */
export class QgaClient implements AsyncDisposable {
  private stateNow: QgaState = 'idle';
  private sock: Socket | undefined;
  private reader = new ByteReader();
  private synced = false;
  private lock: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  /** The connection state. */
  get state(): QgaState {
    return this.stateNow;
  }

  /** Opens the socket and synchronises with the agent (which must be running in the guest). */
  async connect(opts: TimedOpts = {}): Promise<void> {
    this.require('connect', 'idle');
    this.stateNow = 'connecting';
    try {
      await withDeadline(opts, QGA_REQUEST_TIMEOUT_MS, 'qga-connect', `guest agent connect to ${this.path}`, async (signal) => {
        await this.exclusive(signal, async () => {
          await this.open(signal);
          await this.sync(signal);
        });
      });
      this.stateNow = 'running';
    } catch (e) {
      this.stateNow = 'closed';
      this.sock?.destroy();
      throw e;
    }
  }

  /** Sends one command and returns its `return` value; QmpError if the agent answers with an error. */
  async request<T = unknown>(command: string, args?: Readonly<Record<string, unknown>>, opts: TimedOpts = {}): Promise<T> {
    this.require(command, 'running');
    const sent = args === undefined ? { execute: command } : { execute: command, arguments: args };
    return withDeadline(opts, QGA_REQUEST_TIMEOUT_MS, 'qga-command', `guest agent ${command}`, (signal) =>
      this.exclusive(signal, async () => {
        await this.ensureSynced(signal);
        // Until the reply is read, a timeout leaves it in flight: resync next time.
        this.synced = false;
        this.write(`${JSON.stringify(sent)}\n`);
        const reply = await this.readReply(signal);
        this.synced = true;
        const err = reply['error'] as { class?: string; desc?: string } | undefined;
        if (err !== undefined) throw new QmpError(err.class ?? 'unknown', err.desc ?? '', sent);
        return reply['return'] as T;
      }), () => ({ sent })) ;
  }

  /** `guest-ping`: resolves when the agent answers. */
  async ping(opts: TimedOpts = {}): Promise<void> {
    await this.request('guest-ping', undefined, opts);
  }

  /** Runs `path` with `args` in the guest, waits for it to exit, and returns its output. */
  async exec(path: string, args: readonly string[] = [], opts: TimedOpts & { readonly input?: Uint8Array } = {}): Promise<ExecResult> {
    return withDeadline(opts, QGA_EXEC_TIMEOUT_MS, 'qga-command', `guest exec ${path}`, async (signal) => {
      const start: Record<string, unknown> = { path, arg: [...args], 'capture-output': true };
      if (opts.input !== undefined) start['input-data'] = Buffer.from(opts.input).toString('base64');
      const { pid } = await this.request<{ pid: number }>('guest-exec', start, { signal });
      for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
        const st = await this.request<ExecStatus>('guest-exec-status', { pid }, { signal });
        if (st.exited) {
          return {
            exitCode: st.exitcode ?? null,
            signal: st.signal ?? null,
            stdout: decode(st['out-data']),
            stderr: decode(st['err-data']),
            truncated: st['out-truncated'] === true || st['err-truncated'] === true,
          };
        }
        await sleep(wait, signal);
      }
    });
  }

  /** Reads a whole guest file (guest-file-open/read/close). */
  async fileRead(path: string, opts: TimedOpts = {}): Promise<Uint8Array> {
    return withDeadline(opts, QGA_EXEC_TIMEOUT_MS, 'qga-command', `guest file read ${path}`, async (signal) => {
      const handle = await this.request<number>('guest-file-open', { path, mode: 'r' }, { signal });
      const parts: Buffer[] = [];
      try {
        for (;;) {
          const r = await this.request<{ count: number; 'buf-b64': string; eof: boolean }>(
            'guest-file-read', { handle, count: FILE_CHUNK }, { signal });
          parts.push(Buffer.from(r['buf-b64'], 'base64'));
          if (r.eof || r.count === 0) break;
        }
      } finally {
        await this.request('guest-file-close', { handle }, { signal }).catch(() => undefined);
      }
      return new Uint8Array(Buffer.concat(parts));
    });
  }

  /** `guest-shutdown` (no reply on success: the guest goes down). */
  async shutdown(mode: 'powerdown' | 'reboot' | 'halt' = 'powerdown', opts: TimedOpts = {}): Promise<void> {
    this.require('guest-shutdown', 'running');
    await withDeadline(opts, QGA_REQUEST_TIMEOUT_MS, 'qga-command', 'guest agent guest-shutdown', (signal) =>
      this.exclusive(signal, async () => {
        await this.ensureSynced(signal);
        this.synced = false;
        this.write(`${JSON.stringify({ execute: 'guest-shutdown', arguments: { mode } })}\n`);
      }));
  }

  /** Closes the socket (idempotent). */
  async close(): Promise<void> {
    if (this.stateNow === 'closed') return;
    this.stateNow = 'disconnecting';
    this.sock?.destroy();
    this.reader.end(new TargetError('qga-command', 'closed', 'guest agent connection closed by the client'));
    this.stateNow = 'closed';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private require(operation: string, ...states: QgaState[]): void {
    if (!states.includes(this.stateNow)) throw new StateError(`guest agent ${operation}`, this.stateNow, states);
  }

  /** Runs `fn` after every earlier request finished (one request at a time). */
  private async exclusive<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const before = this.lock;
    let release!: () => void;
    const mine = new Promise<void>((r) => { release = r; });
    this.lock = before.then(() => mine);
    try {
      await raceAbort(before, signal);
      return await fn();
    } finally {
      release();
    }
  }

  private async open(signal: AbortSignal): Promise<void> {
    const sock = await connectUnix(this.path, signal);
    const reader = new ByteReader();
    sock.on('data', (chunk: Buffer) => reader.push(chunk));
    sock.on('error', () => undefined);
    sock.on('close', () => reader.end(new TargetError('qga-command', 'closed', 'guest agent socket closed')));
    this.sock = sock;
    this.reader = reader;
    this.synced = false;
  }

  /** Reconnects if the socket closed under us, and resynchronises after any timeout. */
  private async ensureSynced(signal: AbortSignal): Promise<void> {
    if (this.sock === undefined || this.sock.destroyed) await this.open(signal);
    if (!this.synced) await this.sync(signal);
  }

  /** 0xFF, then guest-sync-delimited{id}; skip to the reply's 0xFF and match the id. */
  private async sync(signal: AbortSignal): Promise<void> {
    const id = randomInt(1, 2 ** 31);
    this.write(Buffer.from([SYNC_BYTE]));
    this.write(`${JSON.stringify({ execute: 'guest-sync-delimited', arguments: { id } })}\n`);
    for (;;) {
      await this.reader.skipPast(SYNC_BYTE, signal);
      const line = await this.reader.readLine(signal);
      const reply = parseJson(line);
      if (reply?.['return'] === id) break;
    }
    this.synced = true;
  }

  private async readReply(signal: AbortSignal): Promise<Record<string, unknown>> {
    for (;;) {
      const line = (await this.reader.readLine(signal)).trim();
      if (line === '') continue;
      const reply = parseJson(line);
      if (reply === undefined) throw new TargetError('qga-command', 'protocol', `guest agent sent invalid JSON: ${line.slice(0, 200)}`, { received: line });
      return reply;
    }
  }

  private write(data: string | Buffer): void {
    const sock = this.sock;
    if (sock === undefined || sock.destroyed) throw new TargetError('qga-command', 'closed', 'guest agent socket is closed');
    sock.write(data);
  }
}

interface ExecStatus {
  exited: boolean;
  exitcode?: number;
  signal?: number;
  'out-data'?: string;
  'err-data'?: string;
  'out-truncated'?: boolean;
  'err-truncated'?: boolean;
}

function decode(b64: string | undefined): string {
  return b64 === undefined ? '' : Buffer.from(b64, 'base64').toString('utf8');
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function raceAbort(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
