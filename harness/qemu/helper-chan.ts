// The host end of the guest helper's line protocol (guest/helper/ptlab-helper.c: one request
// line "<id> <verb> args…", one response "<id> ok …" or "<id> err <code> <message>"), over the
// helper's virtio-serial port — the primary low-latency channel (qemu-notes §3: 0.4 ms ping).
import type { Socket } from 'node:net';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import { GeneralProtectionError } from '../../driver/errors.js';
import { sleep, withDeadline, type TimedOpts } from './deadline.js';
import { HelperError, StateError, TargetError } from './errors.js';
import { abortError } from './queue.js';
import { connectUnix, isNotListening } from './socket.js';

/** Connection states (STYLE §6). */
export type HelperState = 'idle' | 'connecting' | 'running' | 'disconnecting' | 'closed';

/** What `exec` returns: the exit status and the captured output. */
export interface HelperExecResult {
  /** The exit code, or null when the command died by a signal. */
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
}

/** Default per-request timeout. */
export const HELPER_REQUEST_TIMEOUT_MS = 10_000;
/** One ping attempt while waiting for the helper to start. */
const CONNECT_PING_MS = 2_000;

interface Pending {
  readonly sent: string;
  resolve(fields: string[]): void;
  reject(e: Error): void;
}

/** A client of the guest helper on the host end of its port. */
export class HelperChannel implements AsyncDisposable {
  private stateNow: HelperState = 'idle';
  private sock: Socket | undefined;
  private text = '';
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();

  constructor(readonly path: string) {}

  get state(): HelperState {
    return this.stateNow;
  }

  /** Connects and pings until the helper answers (it starts at the end of the guest's boot). */
  async connect(opts: TimedOpts = {}): Promise<void> {
    this.require('connect', 'idle');
    this.stateNow = 'connecting';
    try {
      await withDeadline(opts, 60_000, 'helper-connect', `guest helper connect to ${this.path}`, async (signal) => {
        for (;;) {
          try {
            this.sock = await connectUnix(this.path, signal);
            break;
          } catch (e) {
            if (!isNotListening(e)) throw e;
            await sleep(20, signal);
          }
        }
        this.attach(this.sock);
        for (;;) {
          const attempt = AbortSignal.any([signal, AbortSignal.timeout(CONNECT_PING_MS)]);
          try {
            const r = await this.send('ping', [], attempt);
            if (r[0] === 'pong') break;
          } catch (e) {
            if (signal.aborted || this.stateNow === 'closed') throw e;
          }
        }
      });
      this.stateNow = 'running';
    } catch (e) {
      this.teardown(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
  }

  /** Round trip to the helper process. */
  async ping(opts: TimedOpts = {}): Promise<void> {
    await this.request('ping', [], opts);
  }

  /** CPUID leaf/subleaf on `cpu`, through the guest's /dev/cpu/N/cpuid. */
  async cpuid(cpu: number, leaf: number, subleaf: number, opts: TimedOpts = {}): Promise<CpuidRegs> {
    const r = await this.request('cpuid', [dec(cpu), hex(leaf), hex(subleaf)], opts);
    const [eax, ebx, ecx, edx] = r.map((v) => Number(BigInt(v)));
    return { eax: eax!, ebx: ebx!, ecx: ecx!, edx: edx! };
  }

  /** RDMSR on `cpu`; a #GP (EIO from the guest msr driver) throws GeneralProtectionError. */
  async rdmsr(cpu: number, msr: number, opts: TimedOpts = {}): Promise<bigint> {
    try {
      const r = await this.request('rdmsr', [dec(cpu), hex(msr)], opts);
      return BigInt(r[0]!);
    } catch (e) {
      if (e instanceof HelperError && e.helperCode === 'gp') {
        throw new GeneralProtectionError({ op: 'rdmsr', msr, reason: 'the guest msr driver reported EIO (#GP)' }, { cause: e });
      }
      throw e;
    }
  }

  /** WRMSR on `cpu`; a #GP throws GeneralProtectionError. */
  async wrmsr(cpu: number, msr: number, value: bigint, opts: TimedOpts = {}): Promise<void> {
    try {
      await this.request('wrmsr', [dec(cpu), hex(msr), `0x${value.toString(16)}`], opts);
    } catch (e) {
      if (e instanceof HelperError && e.helperCode === 'gp') {
        throw new GeneralProtectionError({ op: 'wrmsr', msr, value, reason: 'the guest msr driver reported EIO (#GP)' }, { cause: e });
      }
      throw e;
    }
  }

  /** Runs `/bin/sh -c command` in the guest and returns its status and output. */
  async exec(command: string, opts: TimedOpts = {}): Promise<HelperExecResult> {
    const [status, out, err] = await this.request('exec', [Buffer.from(command, 'utf8').toString('hex')], {
      timeoutMs: 60_000, ...opts,
    });
    const st = Number(BigInt(status!));
    return {
      exitCode: st >= 0x100 ? null : st,
      signal: st >= 0x100 ? st - 0x100 : null,
      stdout: unhex(out!),
      stderr: unhex(err!),
    };
  }

  /** Sends `verb args…` and returns the fields after `ok`. */
  async request(verb: string, args: readonly string[], opts: TimedOpts = {}): Promise<string[]> {
    this.require(verb, 'running');
    return withDeadline(opts, HELPER_REQUEST_TIMEOUT_MS, 'helper-command', `guest helper ${verb}`,
      (signal) => this.send(verb, args, signal), () => ({ sent: `${verb} ${args.join(' ')}` }));
  }

  /** Closes the connection (idempotent); pending requests fail with 'closed'. */
  async close(): Promise<void> {
    if (this.stateNow === 'closed') return;
    this.stateNow = 'disconnecting';
    this.teardown(new TargetError('helper-command', 'closed', 'guest helper connection closed by the client'));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private require(operation: string, ...states: HelperState[]): void {
    if (!states.includes(this.stateNow)) throw new StateError(`guest helper ${operation}`, this.stateNow, states);
  }

  private attach(sock: Socket): void {
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => this.onData(chunk));
    sock.on('error', () => undefined);
    sock.on('close', () => this.teardown(new TargetError('helper-command', 'closed', 'guest helper socket closed')));
  }

  private send(verb: string, args: readonly string[], signal: AbortSignal): Promise<string[]> {
    const sock = this.sock;
    if (sock === undefined || sock.destroyed) return Promise.reject(new TargetError('helper-command', 'closed', 'guest helper socket is closed'));
    const id = `h${this.nextId++}`;
    const line = [verb, ...args].join(' ');
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.pending.delete(id); // a late reply carries this id and is dropped
        reject(abortError(signal));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        sent: line,
        resolve: (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
        reject: (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
      });
      sock.write(`${id} ${line}\n`);
    });
  }

  private onData(chunk: string): void {
    this.text += chunk;
    let nl: number;
    while ((nl = this.text.indexOf('\n')) >= 0) {
      const line = this.text.slice(0, nl).trim();
      this.text = this.text.slice(nl + 1);
      if (line !== '') this.onLine(line);
    }
  }

  private onLine(line: string): void {
    const [id, status, ...rest] = line.split(' ');
    const p = id === undefined ? undefined : this.pending.get(id);
    if (p === undefined) return; // a reply to a request that timed out
    this.pending.delete(id!);
    if (status === 'ok') p.resolve(rest);
    else if (status === 'err') p.reject(new HelperError(rest[0] ?? 'unknown', rest.slice(1).join(' '), p.sent));
    else p.reject(new TargetError('helper-command', 'protocol', `guest helper sent: ${line.slice(0, 200)}`, { sent: p.sent, received: line }));
  }

  private teardown(reason: Error): void {
    if (this.stateNow === 'closed') return;
    this.stateNow = 'closed';
    this.sock?.destroy();
    for (const p of this.pending.values()) {
      p.reject(new TargetError('helper-command', 'closed', `guest helper closed before the reply: ${reason.message}`, { sent: p.sent }, { cause: reason }));
    }
    this.pending.clear();
  }
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function dec(n: number): string {
  return String(n);
}

function unhex(s: string): Uint8Array {
  return s === '-' ? new Uint8Array(0) : new Uint8Array(Buffer.from(s, 'hex'));
}
