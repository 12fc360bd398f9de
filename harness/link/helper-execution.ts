// A workload running in the guest through the helper (`put` + `run`), as an Execution
// (driver/target.ts): its events are the helper's "* pmi" lines for its CPU (the module's NMI
// handler: guest/kmod/ptlab.c) and one "exit" (or "fault" when a signal ended it).
import { PtError } from '../../driver/base/errors.js';
import type { CallOpts, Execution, Placement, StartOpts, TargetEvent, Workload } from '../../driver/target.js';
import type { HelperChannel, HelperEvent } from './helper-chan.js';
import { AsyncQueue } from './queue.js';

/** PMI event flags (guest/kmod/ptlab_uapi.h PTLAB_EV_*). */
const EV_ACKED = 1n;
const EV_TRACEEN_CLEARED = 2n;

/** Exit statuses the helper's child uses for its own failures (guest/helper/run.c). */
const CHILD_FAILURES: Readonly<Record<number, string>> = {
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
    // The module's NMI handler does not hold the traced task: it runs on while the host handles.
    frozen: false,
  };
}

/** One workload run by the guest helper. */
export class HelperExecution implements Execution {
  private readonly queue = new AsyncQueue<TargetEvent>();
  private pid: number | undefined;
  private finished = false;
  readonly events: AsyncIterable<TargetEvent> = { [Symbol.asyncIterator]: () => this.queue[Symbol.asyncIterator]() };

  private constructor(private readonly helper: HelperChannel, private readonly cpu: number, private readonly onDone: () => void) {}

  /** Copies the image to `path` in the guest and starts it pinned to `cpu`. */
  static start(helper: HelperChannel, workload: Workload, cpu: number, path: string, opts: StartOpts | undefined, onDone: () => void): HelperExecution {
    const x = new HelperExecution(helper, cpu, onDone);
    void x.run(workload, path, opts);
    return x;
  }

  private async run(w: Workload, path: string, opts?: StartOpts): Promise<void> {
    const sub = this.helper.subscribe();
    try {
      await this.helper.put(path, w.image, opts);
      this.pid = await this.helper.run(this.cpu, path, w.base, w.entry, opts);
      for await (const ev of sub) {
        if (this.onEvent(ev)) break;
      }
    } catch (e) {
      this.queue.push({ kind: 'fault', cpu: this.cpu, error: e instanceof Error ? e : new Error(String(e)) });
    } finally {
      this.finished = true;
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
    if (ev.kind !== 'exit' || Number(BigInt(ev.fields[0]!)) !== this.pid) return false;
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

  /** This helper starts workloads as they are: none is started held (StartOpts.held). */
  async placed(_opts?: CallOpts): Promise<Placement> {
    throw new PtError('bad_state', 'the workload was not started held (StartOpts.held)');
  }

  /** Not started held: nothing to let go. */
  async go(_opts?: CallOpts): Promise<void> {
    throw new PtError('bad_state', 'the workload was not started held (StartOpts.held)');
  }

  /** Kills the workload if it still runs. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.finished && this.pid !== undefined) await this.helper.kill(this.pid, { timeoutMs: 2000 }).catch(() => undefined);
  }
}
