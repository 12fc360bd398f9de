// The execution engine (docs/design.md "How the model runs"): replays a workload's
// path on one modelled CPU and stops at an instruction boundary when a PMI was
// delivered, at a slice point, or after the exit SYSCALL. Between runs the CPU
// is in the driver's untraced handler. Stretches of near branches go to the
// generator's `replayPath` over the packed path (exec/packed-model.ts) in one
// call; annotations, the exit, and every branch while the generator cannot
// replay (truth recording, IP filters, CYC) go through its TraceEvents one
// event at a time. Nothing is allocated per branch.
import type { Annotation } from '../workload/annotations.js';
import type { WorkloadModel } from '../workload/model.js';
import { K_FAR_CALL } from '../workload/ops.js';
import { ipFromBigInt, MODE_16, MODE_32, MODE_64, type ExecContext, type ExecMode } from '../trace/events.js';
import type { PacketGenerator } from '../trace/generator.js';
import { B_OTHER, type PackedPath } from '../trace/packed-path.js';
import { packedPath } from './packed-model.js';
import { KERNEL_SYSCALL, loaderThenEntry, loaderThenHold, otherCodeAfterExit, otherCodeThenResume } from './other-code.js';
import { assertNever } from '../../../driver/base/assert-never.js';

/** Why `run` returned ('budget': the cycle budget it was given ran out). */
export type StopReason = 'pmi' | 'slice' | 'exit' | 'budget';

/** What the engine needs of its CPU: the generator and the PMI latch (exec/cpu-trace.ts). */
export interface EngineCpu {
  readonly gen: PacketGenerator;
  readonly pmiPending: boolean;
}

/** Knobs of one execution. */
export interface EngineOptions {
  /** Stop for a `slice` event every this many branches (0 or absent: never). */
  readonly sliceBranches?: number;
  /** CR3 of the workload's address space. Default DEFAULT_CR3. */
  readonly cr3?: bigint;
  /** Other code runs around the workload (realism.ts `otherCode`: exec/other-code.ts). */
  readonly otherCode?: boolean;
}

/** CR3 the workload runs under unless told otherwise (model choice; any 4 KiB-aligned value). */
export const DEFAULT_CR3 = 0x1000n;
/** Where the exit SYSCALL goes (IA32_LSTAR of the model): kernel text, CPL 0. */
export const KERNEL_ENTRY = KERNEL_SYSCALL;
/** IRET with REX.W (48 CF) is 2 bytes: the Next IP of the handler's return. */
const IRET_LENGTH = 2;
const USER_CPL = 3;

/** Replays one WorkloadModel on one CPU, in steps. */
export class Engine {
  private readonly packed: PackedPath;
  private readonly path: Int32Array;
  private readonly annotations: readonly Annotation[];
  private nextAnn = 0;
  /** Branch index of the next annotation (Infinity when none is left). */
  private annAt: number;
  /** Index of the last retired branch (−1 before the first). */
  private index = -1;
  /** Offset (from the base) of the IP execution continues at. */
  private land: number;
  private cr3Now: number;
  private mode: ExecMode = MODE_64;
  private readonly slice: number;
  private nextSlice: number;
  private finished = false;
  private readonly otherCode: boolean;

  constructor(readonly model: WorkloadModel, private readonly cpu: EngineCpu, o: EngineOptions = {}) {
    this.packed = packedPath(model);
    this.path = this.packed.path;
    this.annotations = model.annotations;
    this.annAt = this.annotations[0]?.at ?? Infinity;
    this.land = model.entryOffset;
    this.cr3Now = Number(o.cr3 ?? DEFAULT_CR3);
    this.slice = o.sliceBranches && o.sliceBranches > 0 ? Math.floor(o.sliceBranches) : Infinity;
    this.nextSlice = this.slice;
    this.otherCode = o.otherCode ?? false;
  }

  /** Branches retired so far (the exit SYSCALL included once it ran). */
  get branches(): number { return this.index + 1; }
  /** The IP of the next instruction of the workload (the handler returns there). */
  get resumeIp(): number { return this.packed.base + this.land; }
  /** The CR3 of the workload's address space. */
  get cr3(): bigint { return BigInt(this.cr3Now); }
  /** True once the exit SYSCALL retired. */
  get done(): boolean { return this.finished; }

  /**
   * The handler returns into the workload: IRET to the resume IP, user context (TIP.PGE with
   * MODE.Exec). With other code, the scheduler runs another process and the kernel first
   * (`direct`: an NMI's return, straight back to the interrupted workload).
   */
  leaveHandler(direct = false): void {
    const ctx = this.context;
    if (this.otherCode && !this.placed) { this.placed = true; loaderThenEntry(this.cpu.gen, this.resumeIp, ctx); return; }
    if (this.otherCode && !direct) otherCodeThenResume(this.cpu.gen, this.resumeIp, ctx);
    else this.cpu.gen.untracedExit(this.resumeIp, ctx);
  }

  /**
   * The workload is put in place and held at its entry (StartOpts.held): with other code, the
   * loader runs now, in the workload's address space, and stops the child before its first
   * instruction; the CPU is back in the driver's handler. The first `leaveHandler` then enters
   * the workload at its entry, without the loader. Without other code there is nothing to run.
   */
  placeHeld(): void {
    if (this.placed) return;
    this.placed = true;
    if (!this.otherCode) return;
    loaderThenHold(this.cpu.gen, this.context);
    this.cpu.gen.flush();
  }

  /** The loader has run (or, without other code, nothing stands before the entry). */
  private placed = false;

  /** The workload's execution context (user mode, its CR3, its mode). */
  private get context(): ExecContext {
    return { cpl: USER_CPL, cr3: this.cr3Now, mode: this.mode };
  }

  /**
   * The CPU enters the driver's handler after the current instruction: FUP(next IP), TIP.PGD() when
   * PacketEn=1. With other code, after the workload's exit the kernel runs another process first.
   */
  enterHandler(): void {
    const g = this.cpu.gen;
    if (this.finished && this.otherCode && !this.afterExitRan) {
      this.afterExitRan = true;
      g.untracedEnter(otherCodeAfterExit(g, KERNEL_ENTRY));
    } else {
      g.untracedEnter(this.finished ? KERNEL_ENTRY : this.resumeIp);
    }
    g.flush();
  }

  /** Other code already ran after the exit. */
  private afterExitRan = false;

  /**
   * Executes until a PMI was delivered, a slice point, or the exit. The caller brackets it with
   * `leaveHandler` / `enterHandler` (the stop happens at an instruction boundary). Stretches of
   * near branches up to the next annotation or slice point go to the generator's `replayPath`
   * when it allows (truth off, no IP filter, CYCEn=0); a branch it leaves, and every branch when
   * it does not, is retired through the generator's event methods (`step`).
   */
  run(until = Infinity): StopReason {
    const g = this.cpu.gen;
    const cpu = this.cpu;
    const path = this.path;
    const offsetMask = this.packed.offsetMask;
    while (!this.finished) {
      if (cpu.pmiPending) return 'pmi';
      if (g.now >= until) return 'budget';
      const i = this.index + 1;
      if (i >= path.length) { this.finished = true; break; }
      let last = i;
      if (g.replayable) {
        // Under a cycle budget a stretch is at most the branches the budget can pay for (each costs ≥ one branch's cycles).
        const budget = until === Infinity ? Infinity : i + Math.max(1, Math.ceil((until - g.now) / Math.max(1, g.clock.cfg.cyclesPerBranch)));
        const end = Math.min(this.annAt + 1, this.nextSlice, path.length, budget);
        const next = g.replayPath(this.packed, i, end, this.land);
        if (next > i) {
          last = next - 1;
          this.index = last;
          this.land = path[last]! & offsetMask;
        } else if (this.step(i)) {
          return 'exit';
        }
      } else if (this.step(i)) {
        return 'exit';
      }
      if (last === this.annAt) this.annotate(last);
      if (last + 1 >= this.nextSlice) {
        this.nextSlice += this.slice;
        return 'slice';
      }
    }
    return 'exit';
  }

  /** Retires branch `i` through the generator's event methods; true after the exit SYSCALL. */
  private step(i: number): boolean {
    const g = this.cpu.gen;
    const p = this.packed;
    const e = this.path[i]!;
    const site = p.siteAt[this.land]!;
    if (e >= 0 && p.siteClass[site] !== B_OTHER) {
      g.retirePacked(p, site, e, p.insnsAt[this.land]!);
      this.index = i;
      this.land = e & p.offsetMask;
      return false;
    }
    const ip = p.base + p.siteOff[site]!;
    if (this.model.rowKind[site] !== K_FAR_CALL || e >= 0) {
      throw new RangeError(`engine: branch kind ${this.model.rowKind[site]} at 0x${ip.toString(16)} is not modelled`);
    }
    // The exit SYSCALL: a far transfer into CPL 0 (docs/sdm/README.md §1); the kernel runs the exit.
    const n = p.insnsAt[this.land]!;
    if (n > 0) g.instructions(n);
    g.farTransfer('syscall', ip, p.base + p.siteNext[site]!, KERNEL_ENTRY, 0, this.cr3Now, MODE_64);
    this.index = i;
    this.finished = true;
    return true;
  }

  /** The annotations after branch `at`, in array order (workload/annotations.ts), at the branch's `to` IP. */
  private annotate(at: number): void {
    const g = this.cpu.gen;
    const ip = this.resumeIp;
    for (;;) {
      const a = this.annotations[this.nextAnn];
      if (a === undefined || a.at !== at) break;
      this.nextAnn++;
      switch (a.kind) {
        case 'interrupt': {
          // docs/sdm/packets.md §10 "Hardware interrupt": FUP(NLIP), [PIP], [MODE.Exec], TIP(handler); the
          // handler is one IRET (far return, §10 "IRET") back to the interrupted IP.
          const h = ipFromBigInt(a.handler);
          g.interrupt('external', ip, ip, h, 0, this.cr3Now, MODE_64);
          g.farTransfer('iret', h, h + IRET_LENGTH, ip, USER_CPL, this.cr3Now, this.mode);
          break;
        }
        case 'cr3':
          // A model-only MOV to CR3 of zero length at `ip` (docs/sdm/packets.md §10 "MOV to CR3").
          this.cr3Now = Number(a.cr3);
          g.movCr3(ip, ip, this.cr3Now);
          break;
        case 'ptwrite':
          g.ptwrite(ip, a.value, a.size, ip);
          break;
        case 'mode':
          // A zero-length far JMP into a code segment of the new mode (MODE.Exec, TIP: §10 "Far JMP").
          this.mode = a.exec === 64 ? MODE_64 : a.exec === 32 ? MODE_32 : MODE_16;
          g.farTransfer('far.jmp', ip, ip, ip, USER_CPL, this.cr3Now, this.mode);
          break;
        default:
          return assertNever(a);
      }
    }
    this.annAt = this.annotations[this.nextAnn]?.at ?? Infinity;
  }
}
