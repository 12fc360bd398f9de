// One error-code union for every layer of ptlab (libipt's names
// where libipt has the concept). Callers branch on `code`, never on `message`.
// This is the bottom of the import graph: it imports nothing, so the codecs
// (driver/hw), the decoder (driver/decode) and everything above can throw it.

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
  | 'target_failed'
  /** Someone else traces on the CPU (IA32_RTIT_CTL.TraceEn is already 1): it is not the driver's to program. */
  | 'pt_busy';

/** The base class of every error ptlab throws on purpose. */
export class PtError extends Error {
  override readonly name: string = 'PtError';
  constructor(readonly code: PtErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
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

/**
 * The CPU is traced by someone else (IA32_RTIT_CTL.TraceEn=1 before this driver wrote anything):
 * perf's intel_pt, another tool, a hypervisor, or a run that crashed. Linux's pt_init refuses the
 * same way ("PT is enabled at boot time, doing nothing"). `ctl` is what CTL read.
 */
export class PtBusyError extends PtError {
  override readonly name: string = 'PtBusyError';
  constructor(readonly cpu: number, readonly ctl: bigint, where = '') {
    super('pt_busy', `CPU ${cpu}${where ? ` of ${where}` : ''} is traced by someone else (IA32_RTIT_CTL=0x${ctl.toString(16)}, TraceEn=1): perf's intel_pt, another tool, or a run that crashed; refusing to program it. Stop that tracer first`);
  }
}

/** Throws the signal's reason as a PtError('aborted') if it has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PtError('aborted', `aborted: ${String(signal.reason)}`, { cause: signal.reason });
}
