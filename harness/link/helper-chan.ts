// The host end of the guest helper's line protocol (guest/helper/ptlab-helper.c: one request
// line "<id> <verb> args…", one response "<id> ok …" or "<id> err <code> <message>"), over the
// helper's virtio-serial port — the primary low-latency channel (docs/qemu.md §3: 0.4 ms ping) —
// or, for the ssh target, over the stdin/stdout of the helper run through SSH.
import type { Duplex } from 'node:stream';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import { sleep, withDeadline, type TimedOpts } from './deadline.js';
import { HelperError, StateError, TargetError } from './errors.js';
import { fieldsOf, parseKstate, type ModuleState } from './kstate.js';
import { AsyncQueue, awaitReply, type PendingReply } from './queue.js';
import { connectUnix, isNotListening, LineSplitter } from './socket.js';

/** Connection states. */
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

/** An unsolicited helper line "* <kind> <values…>" (PMI events, workload exits). */
export interface HelperEvent {
  readonly kind: string;
  readonly fields: readonly string[];
}

/** One op of `msrs`; the helper's reply per executed op is the value or "gp". */
export type HelperMsrOp = { readonly op: 'rdmsr'; readonly msr: number } | { readonly op: 'wrmsr'; readonly msr: number; readonly value: bigint };

/** How the module's top half treats a ToPA PMI on an armed CPU (guest/kmod/ptlab_uapi.h PTLAB_PMI_*). */
export interface PmiArming {
  /** Clear IA32_RTIT_CTL.TraceEn in the NMI handler. */
  readonly clearTraceEn: boolean;
  /** SIGSTOP the CPU's workload before the host hears of the PMI (it runs on at `cont`). */
  readonly freeze: boolean;
}

/** A workload started held: its pid, and the CR3 its user code runs under when the module can tell. */
export interface HeldRun {
  readonly pid: number;
  readonly cr3: bigint | undefined;
}

/** A result of `msrBatch`: a value, or the #GP that ended the batch. */
export type HelperMsrResult = { readonly ok: true; readonly value: bigint } | { readonly ok: false };

/** The most ops one `msrs` request carries (guest/kmod/ptlab_uapi.h PTLAB_MAX_BATCH). */
export const HELPER_MAX_BATCH = 256;
/** The most bytes one `bufread` returns (guest/helper/kverbs.c BUFREAD_MAX). */
export const HELPER_MAX_BUFREAD = 256 * 1024;

type Pending = PendingReply<string[], string>;

/**
 * Asked when a request timed out: why the machine behind the helper is not responding, or
 * undefined when it is alive (the request was only slow). The qemu target asks QMP and the agent.
 */
export type LivenessProbe = () => Promise<string | undefined>;

/** A client of the guest helper on the host end of its port. */
export class HelperChannel implements AsyncDisposable {
  private lost: string | undefined;
  private stateNow: HelperState = 'idle';
  private sock: Duplex | undefined;
  private readonly listeners = new Set<AsyncQueue<HelperEvent>>();
  private readonly lines = new LineSplitter();
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private liveness: LivenessProbe | undefined;
  /** The probe in progress: requests timing out together ask once. */
  private probing: Promise<string | undefined> | undefined;

  /** `path`: the helper's unix socket (QEMU's chardev); a description when `stream` is given. */
  constructor(readonly path: string, private readonly stream?: Duplex) {}

  get state(): HelperState {
    return this.stateNow;
  }

  /** Connects and pings until the helper answers (it starts at the end of the guest's boot). */
  async connect(opts: TimedOpts = {}): Promise<void> {
    this.require('connect', 'idle');
    this.stateNow = 'connecting';
    try {
      await withDeadline(opts, 60_000, 'helper-connect', `guest helper connect to ${this.path}`, async (signal) => {
        while (this.stream === undefined) {
          try {
            this.sock = await connectUnix(this.path, signal);
            break;
          } catch (e) {
            if (!isNotListening(e)) throw e;
            await sleep(20, signal);
          }
        }
        if (this.stream !== undefined) this.sock = this.stream;
        this.attach(this.sock!);
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

  /** Whether the module is loaded in the guest, and how many CPUs are online. */
  async info(opts: TimedOpts = {}): Promise<{ module: boolean; cpus: number }> {
    const [m, n] = await this.request('info', [], opts);
    return { module: BigInt(m!) === 1n, cpus: Number(BigInt(n!)) };
  }

  /** One batch in one round trip (one IPI through the module); stops after the first #GP. */
  async msrBatch(cpu: number, ops: readonly HelperMsrOp[], opts: TimedOpts = {}): Promise<HelperMsrResult[]> {
    if (ops.length > HELPER_MAX_BATCH) throw new TargetError('helper-command', 'protocol', `a batch holds at most ${HELPER_MAX_BATCH} ops, got ${ops.length}`);
    const args = ops.map((o) => (o.op === 'rdmsr' ? `r${hex(o.msr)}` : `w${hex(o.msr)}=0x${o.value.toString(16)}`));
    const r = await this.request('msrs', [dec(cpu), ...args], opts);
    return r.map((v) => (v === 'gp' ? { ok: false } : { ok: true, value: BigInt(v) }));
  }

  /** A zeroed, physically contiguous, size-aligned module buffer: its id and physical address. */
  async alloc(size: number, opts: TimedOpts = {}): Promise<{ id: number; phys: bigint }> {
    const [id, phys] = await this.request('alloc', [hex(size)], opts);
    return { id: Number(BigInt(id!)), phys: BigInt(phys!) };
  }

  /** Frees module buffer `id`. */
  async free(id: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('free', [dec(id)], opts);
  }

  /** Frees every module buffer. */
  async freeAll(opts: TimedOpts = {}): Promise<void> {
    await this.request('freeall', [], opts);
  }

  /** Reads bytes of a module buffer inside the guest (at most HELPER_MAX_BUFREAD per call). */
  async bufRead(id: number, offset: number, length: number, opts: TimedOpts = {}): Promise<Uint8Array> {
    const [data] = await this.request('bufread', [dec(id), hex(offset), hex(length)], opts);
    return unhex(data!);
  }

  /** Writes bytes into a module buffer inside the guest. */
  async bufWrite(id: number, offset: number, data: Uint8Array, opts: TimedOpts = {}): Promise<void> {
    await this.request('bufwrite', [dec(id), hex(offset), data.length === 0 ? '-' : Buffer.from(data).toString('hex')], opts);
  }

  /** Fills a whole module buffer in the guest with the xorshift32 stream of `seed` (see `xorshiftBytes`). */
  async bufFill(id: number, seed: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('buffill', [dec(id), hex(seed)], opts);
  }

  /** SHA-256 of a module buffer (or a range of it), computed inside the guest; lowercase hex. */
  async hash(id: number, range?: { offset: number; length: number }, opts: TimedOpts = {}): Promise<string> {
    const args = range === undefined ? [dec(id)] : [dec(id), hex(range.offset), hex(range.length)];
    const [h] = await this.request('hash', args, { timeoutMs: 60_000, ...opts });
    return h!;
  }

  /** XSAVES of `rfbm` on `cpu` with IA32_XSS[8] set around it; HelperError 'unsupported' when CPUID lacks it. */
  async xsaves(cpu: number, rfbm: bigint, opts: TimedOpts = {}): Promise<Uint8Array> {
    const [area] = await this.request('xsaves', [dec(cpu), `0x${rfbm.toString(16)}`], opts);
    return unhex(area!);
  }

  /** XRSTORS of an area made by `xsaves`. */
  async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts: TimedOpts = {}): Promise<void> {
    await this.request('xrstors', [dec(cpu), `0x${rfbm.toString(16)}`, area.length === 0 ? '-' : Buffer.from(area).toString('hex')], opts);
  }

  /**
   * The module claims the ToPA PMIs of `cpu` for this helper's file (refused, `busy`, where someone
   * else traces or another file armed it); the helper keeps itself off `cpu` from then on.
   */
  async pmiArm(cpu: number, how: PmiArming, opts: TimedOpts = {}): Promise<void> {
    await this.request('arm', [dec(cpu), hex((how.clearTraceEn ? 2 : 0) | (how.freeze ? 4 : 0))], opts);
  }

  /** The module stops claiming the PMIs of `cpu`; a workload its top half froze runs on. */
  async pmiDisarm(cpu: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('disarm', [dec(cpu)], opts);
  }

  /** The task the top half of `cpu` freezes (0: none); `run` and `pmiArm` set the CPU's workload themselves. */
  async pmiTask(cpu: number, pid: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('task', [dec(cpu), dec(pid)], opts);
  }

  /** Unmasks the LVT performance-monitor entry on `cpu` (delivery mode NMI). */
  async pmiUnmask(cpu: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('unmask', [dec(cpu)], opts);
  }

  /** Makes the module record a synthetic event on `cpu` (tests the event path; flags bit 2). */
  async pmiTest(cpu: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('pmitest', [dec(cpu)], opts);
  }

  /** Starts or stops the stream of "* pmi" events. */
  async pmiEvents(on: boolean, opts: TimedOpts = {}): Promise<void> {
    await this.request('events', [on ? 'on' : 'off'], opts);
  }

  /** Writes a file in the guest. */
  async put(path: string, data: Uint8Array, opts: TimedOpts = {}): Promise<void> {
    await this.request('put', [path, data.length === 0 ? '-' : Buffer.from(data).toString('hex')], opts);
  }

  /** Starts the image at `path` loaded at `base`, pinned to `cpu`; its end is an "exit" event. Returns the pid. */
  async run(cpu: number, path: string, base: bigint, entry: bigint, opts: TimedOpts = {}): Promise<number> {
    const [pid] = await this.request('run', runArgs(cpu, path, base, entry), opts);
    return Number(BigInt(pid!));
  }

  /**
   * Starts the image held: the answer comes once the child waits at its entry (traced, its image
   * mapped, nothing of it run), with the CR3 its user code runs under; `go` lets it run.
   */
  async runHeld(cpu: number, path: string, base: bigint, entry: bigint, opts: TimedOpts = {}): Promise<HeldRun> {
    const [pid, cr3] = await this.request('run', [...runArgs(cpu, path, base, entry), 'held'], opts);
    return { pid: Number(BigInt(pid!)), cr3: cr3 === undefined || cr3 === '-' ? undefined : BigInt(cr3) };
  }

  /** A held workload runs from its entry: its first user-mode instruction is the entry's. */
  async go(pid: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('go', [dec(pid)], opts);
  }

  /** SIGCONT to a workload (the module's top half froze it at a PMI). */
  async cont(pid: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('cont', [dec(pid)], opts);
  }

  /** Kills a workload started by `run`. */
  async kill(pid: number, opts: TimedOpts = {}): Promise<void> {
    await this.request('kill', [dec(pid)], opts);
  }

  /** The module's state: buffers, armed and programmed CPUs, orphans, its interface version. */
  async kstate(opts: TimedOpts = {}): Promise<ModuleState> {
    return parseKstate(await this.request('kstate', [], opts));
  }

  /** Closes the helper's file of the module (its release: PT stopped, buffers freed, CPUs disarmed). */
  async closeModule(opts: TimedOpts = {}): Promise<void> {
    await this.request('close', [], opts);
  }

  /** Closes the helper's file of the module if open, and opens it again. */
  async reopen(opts: TimedOpts = {}): Promise<void> {
    await this.request('reopen', [], opts);
  }

  /** The machine's facts for `ptlab doctor` (the `state` verb: guest/helper/state.c), by key. */
  async facts(opts: TimedOpts = {}): Promise<ReadonlyMap<string, string>> {
    const [text] = await this.request('state', [], opts);
    const lines = new TextDecoder().decode(unhex(text!)).split('\n').filter((l) => l !== '');
    return fieldsOf(lines);
  }

  /** A queue of the helper's unsolicited events from now on; dispose it to unsubscribe. */
  subscribe(): AsyncQueue<HelperEvent> & Disposable {
    const q = new AsyncQueue<HelperEvent>() as AsyncQueue<HelperEvent> & Disposable;
    this.listeners.add(q);
    q[Symbol.dispose] = (): void => {
      this.listeners.delete(q);
      q.close();
    };
    return q;
  }

  /**
   * From now on a request that times out asks `probe` whether the machine still runs; when it does
   * not, the connection is lost with the probe's reason (`lostBecause`), every pending and later
   * request fails at once, and the timed-out request throws TargetError('not_responding').
   */
  watchLiveness(probe: LivenessProbe): void {
    this.liveness = probe;
  }

  /** Sends `verb args…` and returns the fields after `ok`. */
  async request(verb: string, args: readonly string[], opts: TimedOpts = {}): Promise<string[]> {
    this.require(verb, 'running');
    const sent = `${verb} ${args.join(' ')}`;
    try {
      return await withDeadline(opts, HELPER_REQUEST_TIMEOUT_MS, 'helper-command', `guest helper ${verb}`,
        (signal) => this.send(verb, args, signal), () => ({ sent }));
    } catch (e) {
      const silent = e instanceof TargetError && e.failure === 'timeout' ? await this.whySilent() : undefined;
      if (silent === undefined) throw e;
      const why = `${silent} (after guest helper ${verb} timed out)`;
      this.teardown(new Error(why));
      throw new TargetError('helper-command', 'not_responding', why, { sent }, { cause: e });
    }
  }

  /** The liveness probe's verdict after a timeout (one probe for requests timing out together). */
  private async whySilent(): Promise<string | undefined> {
    if (this.liveness === undefined || this.stateNow !== 'running') return undefined;
    this.probing ??= this.liveness().catch(() => undefined).finally(() => { this.probing = undefined; });
    return this.probing;
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

  private attach(sock: Duplex): void {
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
    return awaitReply(this.pending, id, line, signal, () => sock.write(`${id} ${line}\n`));
  }

  private onData(chunk: string): void {
    for (const line of this.lines.push(chunk)) this.onLine(line);
  }

  private onLine(line: string): void {
    const [id, status, ...rest] = line.split(' ');
    if (id === '*') {
      for (const q of this.listeners) q.push({ kind: status ?? '', fields: rest });
      return;
    }
    const p = id === undefined ? undefined : this.pending.get(id);
    if (p === undefined) return; // a reply to a request that timed out
    this.pending.delete(id!);
    if (status === 'ok') p.resolve(rest);
    else if (status === 'err') p.reject(new HelperError(rest[0] ?? 'unknown', rest.slice(1).join(' '), p.sent));
    else p.reject(new TargetError('helper-command', 'protocol', `guest helper sent: ${line.slice(0, 200)}`, { sent: p.sent, received: line }));
  }

  /** Why the connection closed when the other side (or its transport) closed it; undefined while open or closed by us. */
  get lostBecause(): string | undefined {
    return this.lost;
  }

  private teardown(reason: Error): void {
    if (this.stateNow === 'closed') return;
    if (this.stateNow !== 'disconnecting') this.lost = reason.message;
    this.stateNow = 'closed';
    this.sock?.destroy();
    for (const p of this.pending.values()) {
      p.reject(new TargetError('helper-command', 'closed', `guest helper closed before the reply: ${reason.message}`, { sent: p.sent }, { cause: reason }));
    }
    this.pending.clear();
    for (const q of this.listeners) q.close(new TargetError('helper-command', 'closed', `guest helper closed: ${reason.message}`));
    this.listeners.clear();
  }
}

function runArgs(cpu: number, path: string, base: bigint, entry: bigint): string[] {
  return [dec(cpu), `${path}@0x${base.toString(16)}`, `0x${entry.toString(16)}`];
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

/** The bytes `bufFill(id, seed)` writes: successive xorshift32 states (x ^= x<<13; x ^= x>>17; x ^= x<<5), little-endian. */
export function xorshiftBytes(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const view = new DataView(out.buffer);
  let x = seed >>> 0;
  for (let i = 0; i + 4 <= length; i += 4) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    view.setUint32(i, x, true);
  }
  return out;
}
