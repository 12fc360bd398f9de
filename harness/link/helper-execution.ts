// A workload running in the guest through the helper (`put` + `run`), as an Execution
// (driver/target.ts): its events are the helper's "* pmi" lines for its CPU (the module's NMI
// handler: guest/kmod/ptlab.c) and one "exit" (or "fault" when a signal ended it). Started held,
// it waits at its entry until `go` (the late enable: docs/design.md "Realism").
import { PtError } from '../../driver/base/errors.js';
import type { CallOpts, Execution, Placement, StartOpts, TargetEvent, Workload } from '../../driver/target.js';
import { HelperError } from './errors.js';
import type { HelperChannel, HelperEvent } from './helper-chan.js';
import { within } from './deadline.js';
import { AsyncQueue } from './queue.js';

/** PMI event flags (guest/kmod/ptlab_uapi.h PTLAB_EV_*). */
const EV_ACKED = 1n;
const EV_TRACEEN_CLEARED = 2n;
const EV_FROZEN = 8n;

/** Exit statuses the helper's child uses for its own failures (guest/helper/run.c). */
const CHILD_FAILURES: Readonly<Record<number, string>> = {
  123: 'a held workload was resumed without go',
  124: 'the image returned instead of calling exit',
  125: 'the image could not be mapped at its base address',
  126: 'the child could not be pinned to the CPU',
};

/** Turns one "* pmi <cpu> <flags> <seq> <gs> <ctl> <status> <tsc>" line into a TargetEvent. */
export function pmiEventOf(fields: readonly string[]): TargetEvent & { kind: 'pmi' } {
  const [cpu, flags, , gs, ctl, status] = fields.map((f) => BigInt(f));
  return {
    kind: 'pmi',
    cpu: Number(cpu),
    globalStatus: gs!,
    ctl: ctl!,
    status: status!,
    acked: (flags! & EV_ACKED) !== 0n,
    traceEnCleared: (flags! & EV_TRACEEN_CLEARED) !== 0n,
    // The module's top half sent the CPU's workload SIGSTOP before it woke the helper.
    frozen: (flags! & EV_FROZEN) !== 0n,
  };
}

/** One workload run by the guest helper. */
export class HelperExecution implements Execution {
  private readonly queue = new AsyncQueue<TargetEvent>();
  private pidNow: number | undefined;
  private finished = false;
  private held: boolean;
  /** The last event handed to the driver was a frozen PMI: the workload waits for `cont`. */
  private frozenOut = false;
  private readonly placement: Promise<Placement>;
  private settlePlacement!: { resolve: (p: Placement) => void; reject: (e: Error) => void };
  private ran: Promise<void> = Promise.resolve();

  readonly events: AsyncIterable<TargetEvent> = {
    [Symbol.asyncIterator]: () => {
      const it = this.queue[Symbol.asyncIterator]();
      return {
        next: async () => {
          await this.thaw();
          const r = await it.next();
          if (!r.done && r.value.kind === 'pmi' && r.value.frozen === true) this.frozenOut = true;
          return r;
        },
        return: async (v?: unknown) => (it.return ? it.return(v) : { done: true as const, value: undefined }),
      };
    },
  };

  private constructor(private readonly helper: HelperChannel, private readonly cpu: number, held: boolean, private readonly onDone: () => void) {
    this.held = held;
    this.placement = new Promise<Placement>((resolve, reject) => { this.settlePlacement = { resolve, reject }; });
    this.placement.catch(() => undefined); // a run never asked where it waits
  }

  /** Copies the image to `path` in the guest and starts it pinned to `cpu` (held at its entry with `opts.held`). */
  static start(helper: HelperChannel, workload: Workload, cpu: number, path: string, opts: StartOpts | undefined, onDone: () => void): HelperExecution {
    const x = new HelperExecution(helper, cpu, opts?.held === true, onDone);
    x.ran = x.run(workload, path, opts);
    return x;
  }

  /** The workload's process in the guest, once the helper started it. */
  get pid(): number | undefined {
    return this.pidNow;
  }

  /** Held: resolves with the child's CR3 once it waits at its entry. */
  placed(opts?: CallOpts): Promise<Placement> {
    if (!this.held) return Promise.reject(new PtError('bad_state', 'the workload was not started held'));
    return opts?.signal ? raceAbort(this.placement, opts.signal) : this.placement;
  }

  /** Held and placed: the child runs from its entry (the helper points its RIP there and detaches). */
  async go(opts?: CallOpts): Promise<void> {
    if (!this.held) throw new PtError('bad_state', 'the workload was not started held, or has been let go');
    await this.placed(opts);
    await this.helper.go(this.pidNow!, opts?.signal ? { signal: opts.signal } : {});
    this.held = false;
  }

  /** Before the driver waits for the next event after a frozen PMI: the workload runs on. */
  private async thaw(): Promise<void> {
    if (!this.frozenOut) return;
    this.frozenOut = false;
    if (this.finished || this.pidNow === undefined) return;
    await this.helper.cont(this.pidNow).catch((e: unknown) => {
      // It ended meanwhile: its exit event is on its way.
      if (!(e instanceof HelperError && e.helperCode === 'noent')) throw e;
    });
  }

  private async run(w: Workload, path: string, opts?: StartOpts): Promise<void> {
    const sub = this.helper.subscribe();
    const timed = opts?.signal ? { signal: opts.signal } : {};
    try {
      await this.helper.put(path, w.image, timed);
      if (this.held) {
        const r = await this.helper.runHeld(this.cpu, path, w.base, w.entry, timed);
        this.pidNow = r.pid;
        this.settlePlacement.resolve(r.cr3 === undefined ? {} : { cr3: r.cr3 });
      } else {
        this.pidNow = await this.helper.run(this.cpu, path, w.base, w.entry, timed);
      }
      for await (const ev of sub) {
        if (this.onEvent(ev)) break;
      }
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      if (this.pidNow === undefined) this.settlePlacement.reject(error);
      this.queue.push({ kind: 'fault', cpu: this.cpu, error });
    } finally {
      this.finished = true;
      this.settlePlacement.reject(new PtError('bad_state', 'the workload ended before it was placed'));
      this.onDone();
      sub[Symbol.dispose]();
      this.queue.close();
    }
  }

  /** Handles one helper event; true when the workload has ended. */
  private onEvent(ev: HelperEvent): boolean {
    if (ev.kind === 'pmi') {
      const pmi = pmiEventOf(ev.fields);
      if (pmi.cpu === this.cpu) this.queue.push(pmi);
      return false;
    }
    if (ev.kind !== 'exit' || Number(BigInt(ev.fields[0]!)) !== this.pidNow) return false;
    const status = Number(BigInt(ev.fields[1]!));
    if (status >= 0x100) {
      this.queue.push({ kind: 'fault', cpu: this.cpu, error: new PtError('target_failed', `the workload was killed by signal ${status - 0x100}`) });
    } else if (CHILD_FAILURES[status] !== undefined) {
      this.queue.push({ kind: 'fault', cpu: this.cpu, error: new PtError('target_failed', `the workload did not run: ${CHILD_FAILURES[status]}`) });
    } else {
      this.queue.push({ kind: 'exit', cpu: this.cpu, code: status });
    }
    return true;
  }

  /**
   * Kills the workload if it still runs, or still waits at its entry, and waits (2 s at most) for
   * its end to be reported, so its CPU can start the next one.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.finished || this.pidNow === undefined) return;
    await this.helper.kill(this.pidNow, { timeoutMs: 2000 }).catch(() => undefined);
    await within(this.ran, 2000);
  }
}

/** `p`, or PtError('aborted') once `signal` fires. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new PtError('aborted', 'aborted while waiting for the workload to be placed'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new PtError('aborted', 'aborted while waiting for the workload to be placed'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then((v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e); });
  });
}
