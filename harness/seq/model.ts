// A checked sequence: every name resolved against the field tables, every value exact. check.ts
// builds it from the parsed file; exec.ts runs it.
import type { PmiAction } from '../../driver/pmi/handler.js';
import type { TopaPolicy, TopaRequest, TraceRequest } from '../../driver/request.js';
import type { TopaBranch } from '../../driver/topa/policies.js';
import type { SeqPos } from './errors.js';
import type { KnownMsr } from './names.js';
import type { ProfileName } from '../sim/profiles.js';
import type { CountRange } from './packets.js';

/** An MSR a step names: by SDM name, or by number (with its table when it has one). */
export interface MsrRef {
  readonly address: number;
  /** The field table, when the MSR has one. */
  readonly known: KnownMsr | undefined;
  /** As the file wrote it: "IA32_RTIT_STATUS" or "0x571". */
  readonly label: string;
}

/** A register check: (read & mask) == value. */
export interface Masked {
  readonly value: bigint;
  readonly mask: bigint;
}

/** What an rdmsr expects. */
export type ReadExpect =
  | { readonly kind: 'masked'; readonly m: Masked }
  | { readonly kind: 'fields'; readonly fields: ReadonlyMap<string, bigint> }
  /** The physical base of a named buffer or table. */
  | { readonly kind: 'buffer'; readonly name: string }
  | { readonly kind: 'gp'; readonly rule?: string };

/** What a wrmsr writes: a value, fields encoded by the field table, or the physical base of a named buffer. */
export type WriteValue =
  | { readonly kind: 'raw'; readonly value: bigint }
  | { readonly kind: 'buffer'; readonly name: string };

/** One ToPA entry of a `topa` step. */
export type TopaEntryRef =
  | { readonly kind: 'region'; readonly buffer: string; readonly int: boolean; readonly stop: boolean }
  | { readonly kind: 'end'; readonly table: string };

/** What a `handle-pmi` expects of the driver's handler: the action it took and, when given, the refill's branch. */
export interface HandleExpect {
  readonly action: Extract<PmiAction, 'handled' | 'not-topa' | 'ignored-preserved'>;
  readonly branch: TopaBranch | undefined;
}

/** Where a `handle-pmi`'s policy and expected branch are written (its refusals point there). */
export interface HandleWhere {
  readonly policy: SeqPos | undefined;
  readonly branch: SeqPos | undefined;
}

/** The request of a `trace` step: ToPA output with one of the driver's policies. */
export type TopaTraceRequest = TraceRequest & { readonly output: TopaRequest };

interface At {
  /** Where the step starts in its file. */
  readonly at: SeqPos;
}

export type Step = At & (
  | { readonly kind: 'cpuid'; readonly leaf: number; readonly subleaf: number; readonly cpu: number; readonly expect: Readonly<Partial<Record<'eax' | 'ebx' | 'ecx' | 'edx', Masked>>> | undefined }
  | { readonly kind: 'rdmsr'; readonly msr: MsrRef; readonly cpu: number; readonly expect: ReadExpect | undefined }
  | { readonly kind: 'wrmsr'; readonly msr: MsrRef; readonly cpu: number; readonly value: WriteValue; readonly text: string; readonly expect: 'ok' | 'gp'; readonly rule: string | undefined }
  | { readonly kind: 'alloc'; readonly name: string; readonly size: number; readonly align: number }
  | { readonly kind: 'topa'; readonly name: string; readonly entries: readonly TopaEntryRef[] }
  | { readonly kind: 'pmi-enable'; readonly cpu: number }
  | { readonly kind: 'run'; readonly cpu: number; readonly seed: number | undefined; readonly branches: number | undefined; readonly slices: number | undefined; readonly sliceBranches: number | undefined; readonly expect: 'exit' | 'slices' | undefined }
  | { readonly kind: 'wait-pmi'; readonly timeoutMs: number; readonly expect: 'pmi' | 'none' }
  | { readonly kind: 'collect'; readonly cpu: number; readonly bytes: number | undefined; readonly minBytes: number | undefined; readonly packets: ReadonlyMap<string, CountRange> | undefined; readonly flow: 'truth' | undefined }
  | { readonly kind: 'trace'; readonly cpu: number; readonly request: TopaTraceRequest; readonly text: string }
  | { readonly kind: 'handle-pmi'; readonly policy: TopaPolicy | undefined; readonly expect: HandleExpect; readonly where: HandleWhere }
  | { readonly kind: 'xsaves'; readonly area: string; readonly cpu: number; readonly expect: 'ok' | 'gp' }
  | { readonly kind: 'xrstors'; readonly area: string; readonly cpu: number; readonly expect: 'ok' | 'gp'; readonly rule: string | undefined }
  | { readonly kind: 'repeat'; readonly times: number; readonly steps: readonly Step[] }
);

/** A whole checked file. */
export interface Sequence {
  readonly file: string;
  /** `name:` or the file's base name without .yaml. */
  readonly name: string;
  readonly cpu: ProfileName | undefined;
  readonly seed: number | undefined;
  readonly steps: readonly Step[];
}
