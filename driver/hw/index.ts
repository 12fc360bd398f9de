// The public surface of driver/hw: SDM codecs and rules, pure functions only (docs/design.md layers).
export * from './field.js';
export * from './cpuid.js';
export * from './msrs.js';
export * from './topa.js';
export * from './output-pointers.js';
export * from './xsave.js';
export * from './lvt.js';
export * from './format.js';
export * from './msr-rules.js';
export * from './xrstors.js';
export * from './cpu-fault.js';
export * from './errata.js';
