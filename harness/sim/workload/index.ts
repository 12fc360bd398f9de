// Public API of the workload generator (harness/sim/workload/README.md).
export type { Annotation, Cr3Annotation, InterruptAnnotation, ModeAnnotation, PtwriteAnnotation } from './annotations.js';
export { DEFAULT_BASE, generateWorkload, type GeneratedWorkload, type WorkloadOptions } from './generate.js';
export { IrCursor, MAX_STACK, WorkloadModelError } from './interp.js';
export { type BranchEvent, type BranchSite, type BranchVisitor, PathCursor, WorkloadModel } from './model.js';
export { K_CALL, K_FAR_CALL, K_FAR_JMP, K_FAR_RET, K_JCC, K_JMP, K_RET, KIND_NAMES, type FlowKind } from './ops.js';
export {
  asyncRecord, branchRecord, cursorRecord, disableRecord, enableRecord, flowHex, forEachTruthLine, gapRecord,
  overflowRecord, truthLines,
} from './truth.js';
