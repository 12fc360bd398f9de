// Model-only events placed on a workload's path (docs/design.md "Workloads": events ring 3 cannot
// cause). Each takes effect after the branch with index `at` (0-based, counting every retired
// branch of the path) has retired and before the next instruction executes, i.e. at that
// branch's `to` IP. Several annotations at one index apply in array order.
//
// What a native run can reproduce: none of them. Interrupts, MOV CR3 and mode changes need
// ring 0; PTWRITE is a real ring-3 instruction but this lab's CPUs (AMD EPYC) lack it (#UD
// without CPUID.(EAX=14H,ECX=0):EBX[4]), so the generator never puts PTWRITE bytes in an
// image: a `ptwrite` annotation is a PTWRITE the model pretends to execute at that IP, as an
// instruction of zero length. The native check therefore compares the annotation-free path.

/** An asynchronous interrupt (docs/sdm/packets.md §10 "Hardware interrupt"): from the `to` IP of
 *  branch `at` (the FUP carries that Next IP, §11) to `handler`, outside the image; the handler
 *  runs untraced work and returns with IRET to the same IP. */
export interface InterruptAnnotation {
  readonly kind: 'interrupt';
  readonly at: number;
  readonly handler: bigint;
}
/** MOV to CR3 with a new value (docs/sdm/packets.md §10 "MOV to CR3": PIP when OS=1). */
export interface Cr3Annotation {
  readonly kind: 'cr3';
  readonly at: number;
  readonly cr3: bigint;
}
/** A PTWRITE of `value` with operand size `size` bytes, executed at the `to` IP of branch `at`
 *  (docs/sdm/packets.md §3.16, §10 "PTWRITE"). Model-only: never in the image bytes. */
export interface PtwriteAnnotation {
  readonly kind: 'ptwrite';
  readonly at: number;
  readonly value: bigint;
  readonly size: 4 | 8;
}
/** The execution mode becomes `exec`-bit (CS.L/CS.D: docs/sdm/packets.md §3.5 MODE.Exec). The
 *  generator emits them in pairs, 64→32 then back to 64, at the same branch index or a few
 *  branches apart; the image bytes in between are still 64-bit code (model-only). */
export interface ModeAnnotation {
  readonly kind: 'mode';
  readonly at: number;
  readonly exec: 16 | 32 | 64;
}

/** Any model-only path event. */
export type Annotation = InterruptAnnotation | Cr3Annotation | PtwriteAnnotation | ModeAnnotation;
