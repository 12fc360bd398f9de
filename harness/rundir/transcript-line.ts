// One line of transcript.jsonl (docs/design.md "The run directory", docs/transcript.md): every call
// a run made on its target, in order, as RecordingTarget (recording-target.ts) writes it.
import type { WorkloadRecipe } from '../../driver/target.js';

/** One line of transcript.jsonl (docs/design.md "The run directory"); hex strings as in docs/formats/packet-json.md. */
export interface TranscriptLine {
  readonly seq: number;
  readonly t_us: number;
  readonly cpu: number;
  readonly op: 'cpuid' | 'rdmsr' | 'wrmsr' | 'pmi' | 'xsaves' | 'xrstors' | 'alloc' | 'free' | 'pmi-enable'
    | 'start' | 'placed' | 'go' | 'slice' | 'exit' | 'fault' | 'end' | 'topa' | 'write' | 'note' | 'corrupt';
  readonly msr?: string;
  readonly value?: string;
  readonly result?: string;
  readonly fault?: string;
  /** `topa`: the table's physical base; `write`: the address written; `corrupt`: the address PT reached. */
  readonly addr?: string;
  /** `corrupt`: how many bytes PT reached at `addr`. */
  readonly length?: number;
  /** `topa`: the entry's index in its table. */
  readonly index?: number;
  /** `topa`: the entry decoded ("output 0x… 4K INT STOP", "END → 0x…"). */
  readonly entry?: string;
  /** `xsaves` (saved) and `xrstors` (loaded): the 9 MSRs of state component 8, by SDM name. */
  readonly area?: Readonly<Record<string, string>>;
  /** `write`: the bytes written; `xrstors`: the whole area loaded (lowercase hex, two digits a byte). */
  readonly data?: string;
  /** `start`, its events and `end`: which execution (0, 1, … in start order). */
  readonly exec?: number;
  /** `start`: the workload's recipe (Workload.recipe). */
  readonly workload?: WorkloadRecipe;
  /** `start`: StartOpts.sliceBranches, when given. */
  readonly sliceBranches?: number;
  /** `start`: started as a thread sharing its CPU (StartOpts.thread). */
  readonly thread?: boolean;
  /** `start`: started held at its entry (StartOpts.held), to be let go by a `go` line. */
  readonly held?: boolean;
}

