// CPU exceptions as data and as errors: a #GP or #UD from RDMSR, WRMSR, XSAVES,
// XRSTORS or PTWRITE, with the MSR, the value and the SDM rule that fired
// (docs/sdm/msrs.md §9). Messages name the MSR by its SDM name (msrs.ts).
import { PtError } from '../base/errors.js';
import { msrLabel } from './msrs.js';

export type FaultVector = '#GP' | '#UD';
export type FaultingOp = 'rdmsr' | 'wrmsr' | 'xsaves' | 'xrstors' | 'ptwrite';

/** What a CPU exception says, as data (the model raises faults as values). */
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
