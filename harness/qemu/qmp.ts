// A small typed QMP client (QEMU Machine Protocol: greeting, `qmp_capabilities`, commands with
// ids, asynchronous events). node-qemu has no command timeout (docs/qemu.md §3), so we keep our own.
// One QMP socket takes one client (docs/qemu.md §3).
import type { Socket } from 'node:net';
import { withDeadline, type TimedOpts } from '../link/deadline.js';
import { QmpError } from './errors.js';
import { StateError, TargetError } from '../link/errors.js';
import { abortError, AsyncQueue, awaitReply, type PendingReply } from '../link/queue.js';
import { connectUnix, LineSplitter } from '../link/socket.js';

/** Connection states. */
export type QmpState = 'idle' | 'connecting' | 'running' | 'disconnecting' | 'closed';

/** An asynchronous event as QEMU sends it. */
export interface QmpEvent {
  readonly event: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly timestamp: { readonly seconds: number; readonly microseconds: number };
}

/** The greeting's `QMP` member. */
export interface QmpGreeting {
  readonly version: { readonly qemu: { readonly major: number; readonly minor: number; readonly micro: number }; readonly package: string };
  readonly capabilities: readonly string[];
}

/** Default per-command timeout. */
export const QMP_COMMAND_TIMEOUT_MS = 10_000;

type Pending = PendingReply<unknown, unknown>;

/** The events of one consumer; unsubscribes on dispose. */
export class QmpSubscription extends AsyncQueue<QmpEvent> implements Disposable {
  constructor(readonly names: ReadonlySet<string> | undefined, private readonly unsubscribe: (s: QmpSubscription) => void) {
    super();
  }

  /** The next event named `name` (others are skipped); rejects on abort or when the connection closes. */
  async waitFor(name: string, opts: { signal?: AbortSignal } = {}): Promise<QmpEvent> {
    for (;;) {
      const r = await this.take(opts);
      if (r.done === true) throw new TargetError('qmp-command', 'closed', `QMP closed while waiting for event ${name}`);
      if (r.value.event === name) return r.value;
    }
  }

  [Symbol.dispose](): void {
    this.unsubscribe(this);
    this.close();
  }
}

/** A QMP client on a unix socket. */
export class QmpClient implements AsyncDisposable {
  private stateNow: QmpState = 'idle';
  private sock: Socket | undefined;
  private readonly lines = new LineSplitter();
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly subs = new Set<QmpSubscription>();
  private greetingWaiter: ((g: QmpGreeting) => void) | undefined;
  private closeWaiters: (() => void)[] = [];
  /** The greeting QEMU sent, once connected. */
  greeting: QmpGreeting | undefined;

  constructor(readonly path: string) {}

  /** The connection state. */
  get state(): QmpState {
    return this.stateNow;
  }

  /** Connects, reads the greeting and leaves capabilities negotiation mode. */
  async connect(opts: TimedOpts = {}): Promise<QmpGreeting> {
    this.require('connect', 'idle');
    this.stateNow = 'connecting';
    try {
      return await withDeadline(opts, QMP_COMMAND_TIMEOUT_MS, 'qmp-connect', `QMP connect to ${this.path}`, async (signal) => {
        const sock = await connectUnix(this.path, signal);
        this.attach(sock);
        const greeting = await this.waitGreeting(signal);
        this.greeting = greeting;
        await this.send('qmp_capabilities', undefined, signal);
        this.stateNow = 'running';
        return greeting;
      });
    } catch (e) {
      this.teardown(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
  }

  /** Runs one command and returns its `return` value; QmpError if QEMU answers with an error. */
  async execute<T = unknown>(command: string, args?: Readonly<Record<string, unknown>>, opts: TimedOpts = {}): Promise<T> {
    this.require(command, 'running');
    return withDeadline(opts, QMP_COMMAND_TIMEOUT_MS, 'qmp-command', `QMP ${command}`, (signal) =>
      this.send(command, args, signal), () => ({ sent: { execute: command, arguments: args } })) as Promise<T>;
  }

  /** Runs an HMP command line through `human-monitor-command` and returns its text output. */
  hmp(commandLine: string, opts: TimedOpts = {}): Promise<string> {
    return this.execute<string>('human-monitor-command', { 'command-line': commandLine }, opts);
  }

  /** A queue of the events named in `names` (all events when omitted) from now on. */
  subscribe(names?: readonly string[]): QmpSubscription {
    const sub = new QmpSubscription(names === undefined ? undefined : new Set(names), (s) => this.subs.delete(s));
    if (this.stateNow === 'closed') sub.close();
    else this.subs.add(sub);
    return sub;
  }

  /** Closes the connection (idempotent). Pending commands fail with TargetError('closed'). */
  async close(): Promise<void> {
    if (this.stateNow === 'closed') return;
    if (this.stateNow === 'disconnecting') {
      await new Promise<void>((r) => this.closeWaiters.push(r));
      return;
    }
    this.stateNow = 'disconnecting';
    const sock = this.sock;
    if (sock !== undefined && !sock.destroyed) {
      await new Promise<void>((resolve) => {
        sock.once('close', () => resolve());
        sock.end();
        setTimeout(() => sock.destroy(), 1000).unref();
      });
    }
    this.teardown(new TargetError('qmp-command', 'closed', 'QMP connection closed by the client'));
  }

  /** Resolves when the connection has closed, for whatever reason. */
  closed(): Promise<void> {
    if (this.stateNow === 'closed') return Promise.resolve();
    return new Promise((r) => this.closeWaiters.push(r));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private require(operation: string, ...states: QmpState[]): void {
    if (!states.includes(this.stateNow)) throw new StateError(`QMP ${operation}`, this.stateNow, states);
  }

  private attach(sock: Socket): void {
    this.sock = sock;
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => this.onData(chunk));
    sock.on('error', () => undefined); // 'close' follows and does the work
    sock.on('close', () => this.teardown(new TargetError('qmp-command', 'closed', 'QMP socket closed')));
  }

  private waitGreeting(signal: AbortSignal): Promise<QmpGreeting> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      this.greetingWaiter = (g) => {
        signal.removeEventListener('abort', onAbort);
        resolve(g);
      };
    });
  }

  private send(command: string, args: Readonly<Record<string, unknown>> | undefined, signal: AbortSignal): Promise<unknown> {
    const sock = this.sock;
    if (sock === undefined || sock.destroyed) {
      return Promise.reject(new TargetError('qmp-command', 'closed', `QMP ${command}: not connected`));
    }
    const id = `ptlab-${this.nextId++}`;
    const msg = args === undefined ? { execute: command, id } : { execute: command, arguments: args, id };
    return awaitReply(this.pending, id, msg as unknown, signal, () => sock.write(`${JSON.stringify(msg)}\n`));
  }

  private onData(chunk: string): void {
    for (const line of this.lines.push(chunk)) this.onMessage(line);
  }

  private onMessage(line: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch (e) {
      this.sock?.destroy();
      this.teardown(new TargetError('qmp-command', 'protocol', `QMP sent invalid JSON: ${line.slice(0, 200)}`, { received: line }, { cause: e }));
      return;
    }
    if ('QMP' in msg) {
      this.greetingWaiter?.(msg['QMP'] as QmpGreeting);
      this.greetingWaiter = undefined;
    } else if (typeof msg['event'] === 'string') {
      const ev: QmpEvent = {
        event: msg['event'],
        data: (msg['data'] ?? {}) as Record<string, unknown>,
        timestamp: (msg['timestamp'] ?? { seconds: 0, microseconds: 0 }) as QmpEvent['timestamp'],
      };
      for (const s of this.subs) if (s.names === undefined || s.names.has(ev.event)) s.push(ev);
    } else if (typeof msg['id'] === 'string') {
      const p = this.pending.get(msg['id']);
      if (p === undefined) return; // a reply to a command that timed out
      this.pending.delete(msg['id']);
      const err = msg['error'] as { class?: string; desc?: string } | undefined;
      if (err !== undefined) p.reject(new QmpError(err.class ?? 'unknown', err.desc ?? '', p.sent));
      else p.resolve(msg['return']);
    }
  }

  private teardown(reason: Error): void {
    if (this.stateNow === 'closed') return;
    this.stateNow = 'closed';
    this.sock?.destroy();
    for (const p of this.pending.values()) {
      p.reject(new TargetError('qmp-command', 'closed', `QMP closed before the reply: ${reason.message}`, { sent: p.sent }, { cause: reason }));
    }
    this.pending.clear();
    for (const s of this.subs) s.close();
    this.subs.clear();
    for (const w of this.closeWaiters.splice(0)) w();
  }
}

/** True if `e` is QEMU's answer that the command does not exist. */
export function isCommandNotFound(e: unknown): boolean {
  return e instanceof QmpError && e.errorClass === 'CommandNotFound';
}
