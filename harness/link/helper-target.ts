// The Target (driver/target.ts) behind the guest helper's line protocol, shared by the qemu
// target (helper on a virtio-serial port) and the ssh target (helper on stdin/stdout over SSH):
// MSRs, batches and CPUID go through the module (guest/kmod), physical memory is the module's
// contiguous buffers, and workloads run in the guest through `run`. Subclasses add how guest
// RAM is reached (QEMU: the shared memory file) and the lifetime of the connection.
import { AllocationError, PtError, UnsupportedError, throwIfAborted } from '../../driver/base/errors.js';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import type { CallOpts, Execution, MsrOp, MsrResult, PhysMemory, PhysRegion, ReadOpts, StartOpts, Target, Workload } from '../../driver/target.js';
import { readDestination } from '../../driver/read-into.js';
import { describeLeaks, freeOrLeak } from '../../driver/teardown.js';
import { TraceEnWatch } from '../../driver/trace-watch.js';
import { CpuFaultError } from '../../driver/hw/cpu-fault.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import type { TimedOpts } from './deadline.js';
import { HelperError, StateError, TargetError } from './errors.js';
import { HELPER_MAX_BATCH, HELPER_MAX_BUFREAD, type HelperChannel } from './helper-chan.js';
import { HelperExecution } from './helper-execution.js';
import { checkWrites } from './msr-allowlist.js';
import { probePt, ptRefusal, type PtProbe } from './pt-probe.js';

/** The largest module buffer: order 10 pages (guest/kmod PTLAB_MAX_ORDER; docs/qemu.md §6). */
export const MODULE_MAX_CONTIGUOUS = 4 << 20;
const PAGE = 4096;

/** A module buffer as the host tracks it. */
export interface ModuleBuffer {
  readonly id: number;
  readonly base: bigint;
  /** The module's block size (a power of two ≥ the requested size). */
  readonly blockSize: number;
}

/** The smallest power of two ≥ max(size, align, 4096). */
export function moduleBlockSize(size: number, align: number): number {
  let n = PAGE;
  while (n < size || n < align) n *= 2;
  return n;
}

/** Lifecycle of a helper-backed target. */
export type HelperTargetState = 'running' | 'disposing' | 'disposed';

/** How a helper target treats the machine. */
export interface HelperTargetOptions {
  /** The module's NMI handler clears TraceEn at once. Default false. */
  readonly pmiClearsTraceEn?: boolean;
  /**
   * WRMSR to MSRs outside the PT and ToPA-PMI allowlist (msr-allowlist.ts) is sent on
   * (`ptlab seq --allow-msr`; the module refuses it still, unless its `allow_msr=` lists the MSR).
   * Default false: refused with MsrNotAllowedError before anything is sent.
   */
  readonly allowMsr?: boolean;
}

/** How long a dispose may take for all its requests together (HelperTarget.releaseBuffers). */
export const RELEASE_TIMEOUT_MS = 5000;

/** A Target whose CPU is reached through the guest helper. */
export abstract class HelperTarget implements Target {
  abstract readonly description: string;
  protected stateNow: HelperTargetState = 'running';
  protected readonly buffers = new Map<bigint, ModuleBuffer>();
  private nextImage = 1;
  /** CPUs with a workload running (one at a time per CPU). */
  private readonly busy = new Set<number>();
  /** The CPUs this target may have left tracing: its own CTL writes, XRSTORS and XSAVES (driver/trace-watch.ts). */
  protected readonly watch = new TraceEnWatch();
  /** Calls on their way to the helper: a dispose waits for them before it reads `watch`. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** CPUs whose ToPA PMIs the module claims for this target (armed once per run: pmiEnable). */
  private readonly armed = new Set<number>();
  private streaming = false;
  protected readonly pmiClearsTraceEn: boolean;
  private readonly allowMsr: boolean;
  readonly phys: PhysMemory;

  protected constructor(readonly helper: HelperChannel, o: HelperTargetOptions = {}) {
    this.pmiClearsTraceEn = o.pmiClearsTraceEn ?? false;
    this.allowMsr = o.allowMsr ?? false;
    this.phys = {
      maxContiguous: MODULE_MAX_CONTIGUOUS,
      alloc: (size, align, opts) => this.physAlloc(size, align, opts),
      free: (region, opts) => this.free(region, opts),
      read: (addr, length, opts) => this.physRead(addr, length, opts),
      write: (addr, data, opts) => this.physWrite(addr, data, opts),
    };
  }

  get state(): HelperTargetState {
    return this.stateNow;
  }

  /**
   * Why this target can no longer run anything (its guest helper connection was closed from the
   * other side: the guest or the machine went away), or undefined while it can. Not set by our
   * own dispose.
   */
  get lost(): string | undefined {
    return this.stateNow === 'running' ? this.helper.lostBecause : undefined;
  }

  /** Throws StateError (bad_state) after dispose, then PtError('aborted') for an aborted signal. */
  protected enter(operation: string, opts?: CallOpts): void {
    if (this.stateNow !== 'running') throw new StateError(`${this.description} ${operation}`, this.stateNow, ['running']);
    throwIfAborted(opts?.signal);
  }

  async cpuid(leaf: number, subleaf: number, cpu = 0, opts?: CallOpts): Promise<CpuidRegs> {
    this.enter('cpuid', opts);
    return this.helper.cpuid(cpu, leaf, subleaf, opts);
  }

  async rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint> {
    this.enter('rdmsr', opts);
    const v = await this.helper.rdmsr(cpu, msr, opts);
    if (msr === IA32_RTIT_CTL.address) this.watch.ctlRead(cpu, v);
    return v;
  }

  async wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    this.enter('wrmsr', opts);
    if (!this.allowMsr) checkWrites([{ op: 'wrmsr', msr }], this.description);
    return this.tracked(this.wrmsrWatched(cpu, msr, value, opts));
  }

  private async wrmsrWatched(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void> {
    try {
      await this.helper.wrmsr(cpu, msr, value, opts);
    } catch (e) {
      if (msr === IA32_RTIT_CTL.address) this.watch.ctlWrite(cpu, value, e instanceof CpuFaultError ? 'faulted' : 'unknown');
      throw e;
    }
    if (msr === IA32_RTIT_CTL.address) this.watch.ctlWrite(cpu, value, 'done');
  }

  /** One round trip per HELPER_MAX_BATCH ops (one IPI each in the guest); stops at the first #GP. */
  async msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]> {
    this.enter('msrBatch', opts);
    if (!this.allowMsr) checkWrites(ops, this.description);
    return this.tracked(this.batchWatched(cpu, ops, opts));
  }

  private async batchWatched(cpu: number, ops: readonly MsrOp[], opts?: TimedOpts): Promise<MsrResult[]> {
    let out: MsrResult[] | undefined;
    try {
      out = await this.batchChunks(cpu, ops, opts);
      return out;
    } finally {
      this.watch.batch(cpu, ops, out);
    }
  }

  /** `p`, counted in `inFlight` until it settles. */
  private tracked<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = (): void => { this.inFlight.delete(p); };
    p.then(done, done);
    return p;
  }

  private async batchChunks(cpu: number, ops: readonly MsrOp[], opts?: TimedOpts): Promise<MsrResult[]> {
    const out: MsrResult[] = [];
    for (let i = 0; i < ops.length; i += HELPER_MAX_BATCH) {
      const chunk = ops.slice(i, i + HELPER_MAX_BATCH);
      const res = await this.helper.msrBatch(cpu, chunk, opts);
      for (const [j, r] of res.entries()) {
        const op = chunk[j]!;
        if (r.ok) {
          out.push({ ok: true, op: op.op, msr: op.msr, value: r.value });
        } else {
          const value = op.op === 'wrmsr' ? op.value : undefined;
          out.push({ ok: false, op: op.op, msr: op.msr, fault: new GeneralProtectionError({ op: op.op, msr: op.msr, ...(value === undefined ? {} : { value }), reason: 'the guest module caught #GP (rdmsrl_safe/wrmsrl_safe returned -EIO)' }).fault });
          return out;
        }
      }
    }
    return out;
  }

  /**
   * Unmasks LVTPC on `cpu`. The first time in a run it also arms the CPU: the module claims its
   * ToPA PMIs (refused where someone else traces), its top half freezes the CPU's workload, and
   * its events are streamed; pmiDisarm ends that at the run's end.
   */
  async pmiEnable(cpu: number, opts?: CallOpts): Promise<void> {
    this.enter('pmiEnable', opts);
    if (!this.armed.has(cpu)) {
      await this.helper.pmiArm(cpu, { clearTraceEn: this.pmiClearsTraceEn, freeze: true }, opts);
      this.armed.add(cpu);
      if (!this.streaming) {
        await this.helper.pmiEvents(true, opts);
        this.streaming = true;
      }
    }
    await this.helper.pmiUnmask(cpu, opts);
  }

  /** The module stops claiming the PMIs of `cpu` (the end of a run); nothing when it was not armed. */
  async pmiDisarm(cpu: number, opts?: CallOpts): Promise<void> {
    this.enter('pmiDisarm', opts);
    if (!this.armed.has(cpu)) return;
    this.armed.delete(cpu);
    await this.helper.pmiDisarm(cpu, opts);
  }

  /** The CPUs armed now. */
  armedCpus(): readonly number[] {
    return [...this.armed];
  }

  /**
   * Closes the helper's file of the module and opens a new one: the module's release stops PT on
   * the CPUs the file programmed, disarms its CPUs and frees its buffers, and this target forgets
   * them. For tests and tools that check what a release leaves.
   */
  async reopenModule(opts?: CallOpts): Promise<void> {
    this.enter('reopenModule', opts);
    this.forgetModuleFile();
    await this.helper.reopen(opts);
  }

  /** Closes the helper's file of the module (its release), and forgets what the file held. */
  async closeModule(opts?: CallOpts): Promise<void> {
    this.enter('closeModule', opts);
    this.forgetModuleFile();
    await this.helper.closeModule(opts);
  }

  private forgetModuleFile(): void {
    this.armed.clear();
    this.streaming = false;
    this.buffers.clear();
  }

  async xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array> {
    this.enter('xsaves', opts);
    const area = await this.helper.xsaves(cpu, rfbm, opts).catch((e: unknown) => { throw xsaveError(e, 'xsaves', rfbm); });
    this.watch.xsaves(cpu, 'done');
    return area;
  }

  async xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    this.enter('xrstors', opts);
    return this.tracked(this.xrstorsWatched(cpu, area, rfbm, opts));
  }

  private async xrstorsWatched(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void> {
    try {
      await this.helper.xrstors(cpu, area, rfbm, opts).catch((e: unknown) => { throw xsaveError(e, 'xrstors', rfbm); });
    } catch (e) {
      this.watch.xrstors(cpu, area, e instanceof CpuFaultError ? 'faulted' : 'unknown');
      throw e;
    }
    this.watch.xrstors(cpu, area, 'done');
  }

  /** CPUID-only PT probe (never MSR reads: docs/qemu.md §5). */
  async ptAvailable(opts?: CallOpts): Promise<PtProbe> {
    this.enter('ptAvailable', opts);
    return probePt((leaf, sub) => this.helper.cpuid(0, leaf, sub, opts));
  }

  /** Throws the typed `--pt hardware` refusal when the CPU does not enumerate PT. */
  async requirePt(opts?: CallOpts): Promise<void> {
    const p = await this.ptAvailable(opts);
    if (!p.available) throw ptRefusal(p, `the CPU of ${this.description}`);
  }

  /** Copies the image into the guest and runs it there, pinned to `cpu` (docs/design.md "Workloads"). */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution {
    this.enter('start', opts);
    if (this.busy.has(cpu)) throw new PtError('bad_state', `CPU ${cpu} of ${this.description} is already running a workload`);
    const path = `/tmp/ptlab-image-${process.pid}-${this.nextImage++}.bin`;
    this.busy.add(cpu);
    return HelperExecution.start(this.helper, workload, cpu, path, opts, () => this.busy.delete(cpu));
  }

  /** The module buffer allocated at `base` (its id names it to the helper's buffer verbs). */
  moduleBuffer(base: bigint): ModuleBuffer | undefined {
    return this.buffers.get(base);
  }

  /** Every module buffer this target holds now, in allocation order. */
  moduleBuffers(): readonly ModuleBuffer[] {
    return [...this.buffers.values()];
  }

  /** The module buffer holding [addr, addr+length), if any. */
  protected bufferAt(addr: bigint, length: number): { buf: ModuleBuffer; offset: number } | undefined {
    for (const buf of this.buffers.values()) {
      if (addr >= buf.base && addr + BigInt(length) <= buf.base + BigInt(buf.blockSize)) return { buf, offset: Number(addr - buf.base) };
    }
    return undefined;
  }

  /** Allocates a module buffer (an order-n block holding `size` at `align`). */
  protected async physAlloc(size: number, align: number, opts?: CallOpts): Promise<PhysRegion> {
    this.enter('alloc', opts);
    if (!Number.isSafeInteger(size) || size <= 0 || !Number.isSafeInteger(align) || align <= 0) {
      throw new AllocationError(size, align, MODULE_MAX_CONTIGUOUS, 'size and alignment must be positive integers');
    }
    const block = moduleBlockSize(size, align);
    if (block > MODULE_MAX_CONTIGUOUS) throw new AllocationError(size, align, MODULE_MAX_CONTIGUOUS, `the module allocates at most order-10 blocks (${MODULE_MAX_CONTIGUOUS} bytes)`);
    try {
      const { id, phys } = await this.helper.alloc(block, opts);
      this.buffers.set(phys, { id, base: phys, blockSize: block });
      return { base: phys, size };
    } catch (e) {
      if (e instanceof HelperError && (e.helperCode === 'nomem' || e.helperCode === 'inval')) {
        throw new AllocationError(size, align, MODULE_MAX_CONTIGUOUS, `the guest module refused: ${e.detail}`);
      }
      throw e;
    }
  }

  private async free(region: PhysRegion, opts?: CallOpts): Promise<void> {
    this.enter('free', opts);
    const buf = this.buffers.get(region.base);
    if (buf === undefined) throw new PtError('bad_address', `0x${region.base.toString(16)} is not the base of a buffer of ${this.description}`);
    try {
      await this.helper.free(buf.id, opts);
    } catch (e) {
      if (!(e instanceof HelperError && e.helperCode === 'noent')) throw e;
      // The module no longer has it: an earlier free whose answer was lost did free it.
      this.buffers.delete(region.base);
      throw new PtError('bad_address', `buffer ${buf.id} at 0x${region.base.toString(16)} is no longer a buffer of the module of ${this.description}`);
    }
    this.buffers.delete(region.base);
  }

  /** Reads physical memory: module buffers through the helper; subclasses reach more of RAM. */
  protected async physRead(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> {
    this.enter('phys.read', opts);
    const at = this.bufferAt(addr, length);
    if (at === undefined) throw badAddress(addr, length, this.description);
    const out = readDestination(length, opts?.into);
    for (let done = 0; done < length; done += HELPER_MAX_BUFREAD) {
      const n = Math.min(HELPER_MAX_BUFREAD, length - done);
      out.set(await this.helper.bufRead(at.buf.id, at.offset + done, n, opts), done);
    }
    return out;
  }

  /** Writes physical memory: only inside module buffers (never over the guest kernel's memory). */
  protected async physWrite(addr: bigint, data: Uint8Array, opts?: CallOpts): Promise<void> {
    this.enter('phys.write', opts);
    const at = this.bufferAt(addr, data.length);
    if (at === undefined) throw badAddress(addr, data.length, this.description);
    for (let done = 0; done < data.length; done += HELPER_MAX_BUFREAD) {
      await this.helper.bufWrite(at.buf.id, at.offset + done, data.subarray(done, done + HELPER_MAX_BUFREAD), opts);
    }
  }

  /**
   * Gives every module buffer back before the connection goes (dispose; docs/design.md "The
   * invariant"): no new call is taken (the state is `disposing`), the calls already on their way
   * are waited for, the armed CPUs disarmed, then TraceEn=0 is written and read back on every CPU
   * this target may have left tracing, then each buffer is freed. When a CPU cannot be confirmed
   * off, no buffer is freed — PT may still write them — and what was left allocated is returned
   * in words (undefined when everything went back). All of it shares one deadline of `timeoutMs`:
   * a machine that stopped answering costs that once, not once per buffer.
   */
  protected async releaseBuffers(timeoutMs = RELEASE_TIMEOUT_MS): Promise<string | undefined> {
    this.stateNow = 'disposing';
    const end = Date.now() + timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const within = (signal?: AbortSignal): { signal: AbortSignal } => ({ signal: signal ? AbortSignal.any([signal, deadline]) : deadline });
    await untilAborted(Promise.allSettled([...this.inFlight]), deadline);
    for (const cpu of this.armed) await this.helper.pmiDisarm(cpu, within()).catch(() => undefined);
    this.armed.clear();
    const buffers = [...this.buffers.values()].map((b) => ({ region: { base: b.base, size: b.blockSize }, role: 'module buffer' }));
    const raw = {
      msrBatch: (cpu: number, ops: readonly MsrOp[], o?: CallOpts) => this.batchWatched(cpu, ops, within(o?.signal)),
      phys: {
        free: async (r: PhysRegion, o?: CallOpts) => {
          const b = this.buffers.get(r.base);
          if (b) await this.helper.free(b.id, within(o?.signal));
        },
      },
    };
    const t = await freeOrLeak(raw, buffers, this.watch.tracing(), Math.max(1, end - Date.now()));
    this.buffers.clear();
    return t.leaked.length === 0 ? undefined : `${this.description}: left ${describeLeaks(t.leaked)} allocated in the module: ${t.why ?? ''}`;
  }

  /**
   * The dispose of a target whose machine outlives it (ssh): the module's buffers go back safely
   * first (releaseBuffers: tracing confirmed off, or the buffers stay), then `close` ends the link;
   * idempotent. Throws TargetError('shutdown') after closing when buffers had to be left allocated,
   * so the suite says so.
   */
  protected async disposeSafely(close: () => Promise<void>): Promise<void> {
    if (this.stateNow !== 'running') return;
    let left: string | undefined;
    try {
      left = await this.releaseBuffers();
    } finally {
      try {
        await close();
      } finally {
        this.stateNow = 'disposed';
      }
    }
    if (left !== undefined) throw new TargetError('shutdown', 'io', left);
  }

  abstract [Symbol.asyncDispose](): Promise<void>;
}

/** Resolves when `p` settles or `signal` fires, whichever comes first. */
function untilAborted(p: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => { signal.removeEventListener('abort', done); resolve(); };
    signal.addEventListener('abort', done, { once: true });
    p.then(done, done);
  });
}

export function badAddress(addr: bigint, length: number, where: string): PtError {
  return new PtError('bad_address', `0x${addr.toString(16)}+${length} is outside the memory ${where} backs`);
}

/** Maps the helper's XSAVES refusal and #GP to the driver's typed errors. */
function xsaveError(e: unknown, op: 'xsaves' | 'xrstors', rfbm: bigint): unknown {
  if (!(e instanceof HelperError)) return e;
  if (e.helperCode === 'unsupported') {
    return new UnsupportedError('XSAVES of PT state (IA32_XSS[8])', 'CPUID.(EAX=0DH,ECX=1):EAX[3] or ECX[8]',
      `XSAVES of PT state (component 8) is not supported by the guest CPU: CPUID.(EAX=0DH,ECX=1):EAX[3] (XSAVES) or ECX[8] (PT in IA32_XSS) is 0`);
  }
  if (e.helperCode === 'gp') return new GeneralProtectionError({ op, reason: `${op.toUpperCase()} with RFBM 0x${rfbm.toString(16)} raised #GP in the guest module` }, { cause: e });
  return e;
}
