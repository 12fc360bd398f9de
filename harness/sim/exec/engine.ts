// The execution engine (DESIGN.md "How the model runs"): replays a workload's
// path on one modelled CPU, calling the packet generator's TraceEvents per
// retired branch and per model-only annotation, and stops at an instruction
// boundary when a PMI was delivered, at a slice point, or after the exit
// SYSCALL. Between runs the CPU is in the driver's untraced handler. The loop
// over branches allocates nothing.
import type { Annotation } from '../workload/annotations.js';
import type { PathCursor, WorkloadModel } from '../workload/model.js';
import { F_B, K_CALL, K_FAR_CALL, K_JCC, K_JMP, K_RET, ROW } from '../workload/ops.js';
import { ipFromBigInt, MODE_16, MODE_32, MODE_64, type ExecMode } from '../trace/events.js';
import type { PacketGenerator } from '../trace/generator.js';
import { assertNever } from '../../../driver/decode/packet.js';

/** Why `run` returned. */
export type StopReason = 'pmi' | 'slice' | 'exit';

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
}

/** CR3 the workload runs under unless told otherwise (model choice; any 4 KiB-aligned value). */
export const DEFAULT_CR3 = 0x1000n;
/** Where the exit SYSCALL goes (IA32_LSTAR of the model): kernel text, CPL 0. */
export const KERNEL_ENTRY = ipFromBigInt(0xffff_ffff_8100_0000n);
/** IRET with REX.W (48 CF) is 2 bytes: the Next IP of the handler's return. */
const IRET_LENGTH = 2;
const USER_CPL = 3;

/** Replays one WorkloadModel on one CPU, in steps. */
export class Engine {
  private readonly cursor: PathCursor;
  private readonly annotations: readonly Annotation[];
  private nextAnn = 0;
  /** Branch index of the next annotation (Infinity when none is left). */
  private annAt: number;
  /** First IR row at or after the IP execution continues at (instruction count of the next block). */
  private startRow: number;
  private ip: number;
  private cr3: number;
  private mode: ExecMode = MODE_64;
  private readonly slice: number;
  private nextSlice: number;
  private finished = false;

  constructor(readonly model: WorkloadModel, private readonly cpu: EngineCpu, o: EngineOptions = {}) {
    this.cursor = model.cursor();
    this.annotations = model.annotations;
    this.annAt = this.annotations[0]?.at ?? Infinity;
    this.startRow = model.opAt[model.entryOffset]!;
    this.ip = model.baseIp + model.entryOffset;
    this.cr3 = Number(o.cr3 ?? DEFAULT_CR3);
    this.slice = o.sliceBranches && o.sliceBranches > 0 ? Math.floor(o.sliceBranches) : Infinity;
    this.nextSlice = this.slice;
  }

  /** Branches retired so far (the exit SYSCALL included once it ran). */
  get branches(): number { return this.cursor.index + 1; }
  /** The IP of the next instruction of the workload (the handler returns there). */
  get resumeIp(): number { return this.ip; }
  /** True once the exit SYSCALL retired. */
  get done(): boolean { return this.finished; }

  /** The handler returns into the workload: IRET to the resume IP, user context (TIP.PGE with MODE.Exec). */
  leaveHandler(): void {
    this.cpu.gen.untracedExit(this.ip, { cpl: USER_CPL, cr3: this.cr3, mode: this.mode });
  }

  /** The CPU enters the driver's handler after the current instruction: FUP(next IP), TIP.PGD() when PacketEn=1. */
  enterHandler(): void {
    this.cpu.gen.untracedEnter(this.finished ? KERNEL_ENTRY : this.ip);
    this.cpu.gen.flush();
  }

  /**
   * Executes until a PMI was delivered, a slice point, or the exit. The caller brackets it with
   * `leaveHandler` / `enterHandler` (the stop happens at an instruction boundary).
   */
  run(): StopReason {
    const c = this.cursor;
    const g = this.cpu.gen;
    const cpu = this.cpu;
    const opAt = this.model.opAt;
    const code = this.model.code;
    const base = this.model.baseIp;
    while (!this.finished) {
      if (cpu.pmiPending) return 'pmi';
      if (!c.next()) { this.finished = true; break; }
      const n = c.site - this.startRow;
      if (n > 0) g.instructions(n);
      const kind = c.kind;
      if (kind === K_JCC) {
        g.branchJcc(c.ip, c.nextIp, base + code[c.site * ROW + F_B]!, c.taken);
      } else if (kind === K_JMP || kind === K_CALL) {
        const k = kind === K_JMP ? 'jmp' : 'call';
        if (c.indirect) g.branchIndirect(k, c.ip, c.nextIp, c.to);
        else g.branchDirect(k, c.ip, c.nextIp, c.to, c.zeroLength);
      } else if (kind === K_RET) {
        g.ret(c.ip, c.nextIp, c.to);
      } else if (kind === K_FAR_CALL && c.to < 0) {
        // The exit SYSCALL: a far transfer into CPL 0 (spec/README.md §1); the kernel runs the exit.
        g.farTransfer('syscall', c.ip, c.nextIp, KERNEL_ENTRY, 0, this.cr3, MODE_64);
        this.finished = true;
        return 'exit';
      } else {
        throw new RangeError(`engine: branch kind ${kind} at 0x${c.ip.toString(16)} is not modelled`);
      }
      this.ip = c.to;
      this.startRow = opAt[c.to - base]!;
      if (c.index === this.annAt) this.annotate(c.index);
      if (c.index + 1 >= this.nextSlice) {
        this.nextSlice += this.slice;
        return 'slice';
      }
    }
    return 'exit';
  }

  /** The annotations after branch `at`, in array order (workload/annotations.ts), at the branch's `to` IP. */
  private annotate(at: number): void {
    const g = this.cpu.gen;
    const ip = this.ip;
    for (;;) {
      const a = this.annotations[this.nextAnn];
      if (a === undefined || a.at !== at) break;
      this.nextAnn++;
      switch (a.kind) {
        case 'interrupt': {
          // spec/packets.md §10 "Hardware interrupt": FUP(NLIP), [PIP], [MODE.Exec], TIP(handler); the
          // handler is one IRET (far return, §10 "IRET") back to the interrupted IP.
          const h = ipFromBigInt(a.handler);
          g.interrupt('external', ip, ip, h, 0, this.cr3, MODE_64);
          g.farTransfer('iret', h, h + IRET_LENGTH, ip, USER_CPL, this.cr3, this.mode);
          break;
        }
        case 'cr3':
          // A model-only MOV to CR3 of zero length at `ip` (spec/packets.md §10 "MOV to CR3").
          this.cr3 = Number(a.cr3);
          g.movCr3(ip, ip, this.cr3);
          break;
        case 'ptwrite':
          g.ptwrite(ip, a.value, a.size, ip);
          break;
        case 'mode':
          // A zero-length far JMP into a code segment of the new mode (MODE.Exec, TIP: §10 "Far JMP").
          this.mode = a.exec === 64 ? MODE_64 : a.exec === 32 ? MODE_32 : MODE_16;
          g.farTransfer('far.jmp', ip, ip, ip, USER_CPL, this.cr3, this.mode);
          break;
        default:
          return assertNever(a);
      }
    }
    this.annAt = this.annotations[this.nextAnn]?.at ?? Infinity;
  }
}
