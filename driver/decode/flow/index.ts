// Public surface of flow reconstruction (packets + code image → flow-json).
export { Cls, KIND_OF_CLS, type ClsCode, type BranchKind } from './insn-class.js';
export { ImageSet, InsnTable, parseImageArg, type ImageSpec, type ImageLookup, type InsnInfo } from './image.js';
export { RetStack, RET_STACK_DEPTH } from './ret-stack.js';
export { FlowRecord, flowJsonLine, flowTextLine, type FlowRecordKind, type FlowErrorCode, type GapReason } from './record.js';
export { FlowDecoder, flowLines, type FlowOptions, type FlowLoss, type FlowStats } from './flow-decoder.js';
