// Instruction classes of the flow walker: libipt's `enum pt_insn_class`
// (docs/formats/flow-json.md: "The instruction classes follow libipt's"), split
// further by what the trace must supply to follow them (docs/sdm/packets.md §3.3
// Binding, §7, §10): a TNT bit (jcc, compressed RET), a TIP (indirect, far,
// uncompressed RET), or nothing (direct JMP/CALL, every other instruction).

/** Compact class codes stored in the per-address table (0 = not decoded yet). */
export const Cls = {
  unknown: 0,
  /** Not a branch: the next instruction follows. */
  other: 1,
  /** Conditional branch (Jcc, JrCXZ, LOOP/LOOPcc): one TNT bit (spec §3.2). */
  jcc: 2,
  /** Direct near JMP: no packet (spec §10). */
  jmp: 3,
  /** Direct near CALL: no packet; pushes its Next IP unless zero-length (spec §7 step 2). */
  call: 4,
  /** Direct near CALL with displacement 0 (`E8 00000000`): not pushed (spec §7 step 2). */
  callZero: 5,
  /** Indirect near JMP: TIP (spec §10). */
  jmpInd: 6,
  /** Indirect near CALL: TIP, and pushes its Next IP (spec §7 step 2). */
  callInd: 7,
  /** Near RET: a TNT bit (compressed) or a TIP (spec §7). */
  ret: 8,
  /** Far CALL, SYSCALL, SYSENTER, VMCALL, INT n/INT3/INTO/INT1 (libipt ptic_far_call): TIP. */
  farCall: 9,
  /** Far JMP (libipt ptic_far_jump): TIP. */
  farJmp: 10,
  /** Far RET, IRET, SYSRET, SYSEXIT, RSM, VMLAUNCH, VMRESUME (libipt ptic_far_return): TIP. */
  farRet: 11,
  /** MOV to CR3: no packet, unless it disables tracing (spec §10 "MOV to CR3" rows). */
  movCr3: 12,
  /** Bytes that do not decode as an instruction (libipt pte_bad_insn). */
  bad: 13,
} as const;
export type ClsCode = (typeof Cls)[keyof typeof Cls];

/** flow-json branch kinds (docs/formats/flow-json.md; near direct and indirect forms share a kind). */
export type BranchKind = 'jcc' | 'jmp' | 'call' | 'ret' | 'far.call' | 'far.ret' | 'far.jmp';

/** flow-json kind of each class code ('' for classes that are not branches). */
export const KIND_OF_CLS: readonly (BranchKind | '')[] = [
  '', '', 'jcc', 'jmp', 'call', 'call', 'jmp', 'call', 'ret', 'far.call', 'far.jmp', 'far.ret', '', '',
];
