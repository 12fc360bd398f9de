// The one interface between the driver and a CPU (docs/design.md "The target
// interface"). The sim model, a QEMU guest and a bare-metal lab machine each
// implement it; the driver never learns which one it has.
import type { CpuidRegs } from './hw/cpuid.js';
import type { CpuFault } from './hw/cpu-fault.js';

/** Every call that can block takes a signal. */
export interface CallOpts { readonly signal?: AbortSignal }

/** Options of `PhysMemory.read`. */
export interface ReadOpts extends CallOpts {
  /**
   * Where to put the bytes: its first `length` bytes are overwritten and returned as a view (no
   * allocation; collection reads straight into its stream). Must hold at least `length` bytes.
   */
  readonly into?: Uint8Array;
}

export type MsrOp =
  | { readonly op: 'rdmsr'; readonly msr: number }
  | { readonly op: 'wrmsr'; readonly msr: number; readonly value: bigint };

/** One executed operation of a batch. A #GP is data here; the batch stops after it. */
export type MsrResult =
  | { readonly ok: true; readonly op: 'rdmsr' | 'wrmsr'; readonly msr: number; readonly value: bigint }
  | { readonly ok: false; readonly op: 'rdmsr' | 'wrmsr'; readonly msr: number; readonly fault: CpuFault };

/** What a physical write holds, for recorders of the calls; targets write the bytes the same either way. */
export type MemoryContent =
  /** 8-byte ToPA entries from the start of a table page (docs/sdm/output.md §4.2). */
  | 'topa-table';

/** Options of `PhysMemory.write`. */
export interface WriteOpts extends CallOpts {
  /** What the bytes are; a recorder decodes them (one transcript line per changed ToPA entry). */
  readonly content?: MemoryContent;
}

/** A physically contiguous region the target allocated. */
export interface PhysRegion {
  readonly base: bigint;
  readonly size: number;
}

/** Physical memory as the CPU's output engine sees it. */
export interface PhysMemory {
  /** The largest size `alloc` can satisfy (a power of two). */
  readonly maxContiguous: number;
  /** Physically contiguous, `align`-aligned memory, zero-filled; throws AllocationError. */
  alloc(size: number, align: number, opts?: CallOpts): Promise<PhysRegion>;
  free(region: PhysRegion, opts?: CallOpts): Promise<void>;
  /** Throws PtError('bad_address') outside memory the target backs. */
  read(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array>;
  write(addr: bigint, data: Uint8Array, opts?: WriteOpts): Promise<void>;
}

/**
 * What runs on the traced CPU (docs/design.md "Workloads"): real x86-64 code at `base`, entered at
 * `entry`. `model` is the model's control-flow description; real targets ignore it.
 */
export interface Workload {
  readonly name: string;
  readonly image: Uint8Array;
  readonly base: bigint;
  readonly entry: bigint;
  readonly model?: unknown;
  /**
   * How to make this workload again (its generator and options, JSON values only). The transcript's
   * `start` line keeps it, so `ptlab replay` can run the same workload on another target.
   */
  readonly recipe?: WorkloadRecipe;
}

/** A workload's generator and its options, as JSON (docs/transcript.md, `start`). */
export type WorkloadRecipe = Readonly<Record<string, string | number>>;

export interface StartOpts extends CallOpts {
  /** Raise a `slice` event (a preemption point) every this many branches. */
  readonly sliceBranches?: number;
  /**
   * Another software thread on a CPU that already runs one: the executions share the CPU and its
   * PT unit, and the driver decides which one runs by pulling its events (several contexts:
   * driver/contexts.ts). A target that cannot time-share a CPU this way refuses with 'bad_state'.
   */
  readonly thread?: boolean;
  /**
   * Start the workload held at its entry (the late enable: docs/design.md "Realism"): everything
   * before its first instruction (the image copied in, the process made, pinned and mapped) is done
   * when `Execution.placed` resolves, and the workload waits there until `Execution.go`.
   */
  readonly held?: boolean;
}

/** Something the traced CPU did that the driver must look at. */
export type TargetEvent =
  | {
      readonly kind: 'pmi';
      readonly cpu: number;
      /** IA32_PERF_GLOBAL_STATUS as the top half read it. */
      readonly globalStatus: bigint;
      /** IA32_RTIT_CTL and IA32_RTIT_STATUS as the top half read them, before any change. */
      readonly ctl: bigint;
      readonly status: bigint;
      /** The top half already cleared GLOBAL_STATUS bit 55 through the reset MSR. */
      readonly acked: boolean;
      /** The top half already cleared TraceEn (Linux-style NMI handler). */
      readonly traceEnCleared: boolean;
      /**
       * The top half froze the traced workload: it makes no progress until the driver pulls the next
       * event (the model's CPU stops while the driver thinks; a lab machine's keeps running unless the
       * module freezes the task). Absent: unknown (a synthetic event).
       */
      readonly frozen?: boolean;
    }
  | { readonly kind: 'slice'; readonly cpu: number; readonly branches: number }
  | { readonly kind: 'exit'; readonly cpu: number; readonly code: number }
  | { readonly kind: 'fault'; readonly cpu: number; readonly error: Error };

/** Where a held workload waits (Execution.placed). */
export interface Placement {
  /**
   * The CR3 the workload's user code runs under, when the target can tell (with Linux's PTI the
   * user page-table root, CR3 bit 12 set); the driver's CR3 filter matches it (driver/confine.ts).
   */
  readonly cr3?: bigint;
}

/** A running workload. The model advances only while the driver awaits the next event. */
export interface Execution extends AsyncDisposable {
  readonly events: AsyncIterable<TargetEvent>;
  /**
   * Started `held`: resolves once the workload waits at its entry, with what the target knows of
   * where; rejects when it could not be placed. Not started held: rejects with PtError('bad_state').
   */
  placed(opts?: CallOpts): Promise<Placement>;
  /** Started `held` and placed: lets it run from its entry. Otherwise rejects with PtError('bad_state'). */
  go(opts?: CallOpts): Promise<void>;
}

export interface Target extends AsyncDisposable {
  /** "sim:skylake", "qemu:tcg+model", "ssh:lab1". */
  readonly description: string;
  cpuid(leaf: number, subleaf: number, cpu?: number, opts?: CallOpts): Promise<CpuidRegs>;
  /** Throws GeneralProtectionError {msr, reason} on #GP. */
  rdmsr(cpu: number, msr: number, opts?: CallOpts): Promise<bigint>;
  /** Throws GeneralProtectionError {msr, value, reason} on #GP; a faulting write changes nothing. */
  wrmsr(cpu: number, msr: number, value: bigint, opts?: CallOpts): Promise<void>;
  /** One round trip. Results in order; a #GP is a result and the batch stops there. */
  msrBatch(cpu: number, ops: readonly MsrOp[], opts?: CallOpts): Promise<MsrResult[]>;
  readonly phys: PhysMemory;
  /** Unmask the LVT performance-monitor entry (the CPU masks it on every PMI: docs/sdm/msrs.md §11.1). */
  pmiEnable(cpu: number, opts?: CallOpts): Promise<void>;
  /** XSAVES with RFBM = `rfbm` (IA32_XSS[8] set around it); returns the compacted area. */
  xsaves(cpu: number, rfbm: bigint, opts?: CallOpts): Promise<Uint8Array>;
  /** XRSTORS of a compacted area made by `xsaves`. */
  xrstors(cpu: number, area: Uint8Array, rfbm: bigint, opts?: CallOpts): Promise<void>;
  /** Runs `workload` on `cpu`; its events say when the driver must act. */
  start(workload: Workload, cpu: number, opts?: StartOpts): Execution;
  /**
   * Optional: a driver decision worth keeping beside the operations it explains (the branch of the
   * PMI algorithm taken). A recorder writes it to the transcript as a `note`; targets ignore it.
   */
  note?(cpu: number, text: string): void;
  /**
   * Optional: the CR3 a workload started on `cpu` will run under, when the target knows it before
   * the start (the model: its configured address space). The driver's CR3 filter needs it
   * (confine.ts); a target that cannot tell has no such method.
   */
  cr3Of?(cpu: number): bigint | undefined;
}
