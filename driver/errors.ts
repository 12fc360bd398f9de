// One error-code union for every layer of the driver (STYLE §5; libipt's
// names where libipt has the concept). Callers branch on `code`, never on
// `message`.
import { msrLabel } from './hw/msrs.js';

export type PtErrorCode =
  /** The data ended inside a packet (libipt `pte_eos`). */
  | 'eos'
  /** No PSB to synchronise on (libipt `pte_nosync`). */
  | 'nosync'
  /** Unknown opcode (libipt `pte_bad_opc`). */
  | 'bad_opc'
  /** Known opcode, malformed payload or reserved encoding (libipt `pte_bad_packet`). */
  | 'bad_packet'
  /** A configuration the CPU or the driver cannot accept (libipt `pte_bad_config`). */
  | 'bad_config'
  /** A ToPA table the CPU would reject. */
  | 'topa_error'
  /** The CPU does not enumerate a requested capability. */
  | 'unsupported'
  /** The CPU raised an exception (#GP, #UD) for an instruction. */
  | 'cpu_fault'
  /** Physically contiguous memory of that size and alignment is not available. */
  | 'alloc_failed'
  /** A physical address outside every region the target knows. */
  | 'bad_address'
  /** A call in the wrong lifecycle state (e.g. after dispose). */
  | 'bad_state'
  /** The operation was aborted through its AbortSignal. */
  | 'aborted'
  /** A target's transport failed (process exit, socket closed, protocol error). */
  | 'target_failed';

/** The base class of every error ptlab throws on purpose. */
export class PtError extends Error {
  override readonly name: string = 'PtError';
  constructor(readonly code: PtErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

export type FaultVector = '#GP' | '#UD';
export type FaultingOp = 'rdmsr' | 'wrmsr' | 'xsaves' | 'xrstors' | 'ptwrite';

/** What a CPU exception says, as data (the model raises faults as values: STYLE §5). */
export interface CpuFault {
  readonly vector: FaultVector;
  readonly op: FaultingOp;
  /** The MSR for rdmsr/wrmsr, and for xrstors the MSR whose image value was rejected. */
  readonly msr?: number;
  /** The value written (wrmsr) or loaded (xrstors). */
  readonly value?: bigint;
  /** Which SDM rule fired, e.g. "reserved bit 18 set" or "TraceEn=1: only IA32_RTIT_CTL may be written". */
  readonly reason: string;
}

export function describeFault(f: CpuFault): string {
  const what = f.msr === undefined ? f.op.toUpperCase() : `${f.op.toUpperCase()} ${msrLabel(f.msr)}`;
  const val = f.value === undefined ? '' : ` value 0x${f.value.toString(16)}`;
  return `${f.vector} on ${what}${val}: ${f.reason}`;
}

/** A #GP or #UD, thrown by the public API; the fault itself is `fault`. */
export class CpuFaultError extends PtError {
  override readonly name: string = 'CpuFaultError';
  constructor(readonly fault: CpuFault, options?: ErrorOptions) {
    super('cpu_fault', describeFault(fault), options);
  }
  get vector(): FaultVector { return this.fault.vector; }
  get msr(): number | undefined { return this.fault.msr; }
  get value(): bigint | undefined { return this.fault.value; }
  get reason(): string { return this.fault.reason; }
}

/** #GP(0) from RDMSR/WRMSR/XRSTORS/XSAVES, with the MSR, the value written and the reason (docs/design.md "The target interface"). */
export class GeneralProtectionError extends CpuFaultError {
  override readonly name = 'GeneralProtectionError';
  constructor(fault: Omit<CpuFault, 'vector'>, options?: ErrorOptions) {
    super({ ...fault, vector: '#GP' }, options);
  }
}

/** The CPU lacks a capability the caller asked for; names the CPUID bit. */
export class UnsupportedError extends PtError {
  override readonly name = 'UnsupportedError';
  constructor(readonly capability: string, readonly cpuid: string, message?: string) {
    super('unsupported', message ?? `${capability} is not supported: ${cpuid} = 0`);
  }
}

/** Physically contiguous memory could not be had (size, alignment, what is possible). */
export class AllocationError extends PtError {
  override readonly name = 'AllocationError';
  constructor(readonly size: number, readonly align: number, readonly maxContiguous: number, reason: string) {
    super('alloc_failed', `cannot allocate ${size} bytes aligned to ${align}: ${reason} (max contiguous ${maxContiguous})`);
  }
}

/** Throws the signal's reason as a PtError('aborted') if it has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PtError('aborted', `aborted: ${String(signal.reason)}`, { cause: signal.reason });
}
