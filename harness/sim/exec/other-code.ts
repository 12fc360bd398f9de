// Other code on the traced CPU (realism.ts `otherCode`): on a lab machine the workload's CPU also
// runs the helper that started it, sshd, the kernel and whatever else the scheduler puts there. The
// model runs a short stretch of another process — user mode at its own addresses (a static binary at
// 0x400000) and its own CR3 — and the kernel around the workload: at every return from the driver's
// handler, before the workload's first instruction, and after its exit. With User=1 and no filter
// that stretch is traced, and the trace is then not the workload's alone; a CR3 or IP filter on the
// workload keeps it out (docs/design.md "Realism").
import { ipFromBigInt, MODE_64, type ExecContext } from '../trace/events.js';
import type { PacketGenerator } from '../trace/generator.js';

/** The other process: a static binary's text at 0x400000, its own address space. */
export const OTHER_BASE = ipFromBigInt(0x40_0000n);
export const OTHER_CR3 = 0x9000;
/** Where the kernel runs the context switch (kernel text, CPL 0; model choice). */
const KERNEL_SWITCH = ipFromBigInt(0xffff_ffff_8120_0000n);
/** Taken jcc's the other process runs per visit (a short loop). */
const LOOP = 6;

/** The other process's loop: jcc's back to its head, then a call and its return, at OTHER_BASE. */
function otherProcess(g: PacketGenerator): number {
  const head = OTHER_BASE, jcc = head + 8, call = head + 0x20, fn = head + 0x100;
  for (let k = 0; k < LOOP; k++) {
    g.instructions(3);
    g.branchJcc(jcc, jcc + 2, head, k < LOOP - 1);
  }
  g.instructions(2);
  g.branchDirect('call', call, call + 5, fn);
  g.instructions(4);
  g.ret(fn + 4, fn + 5, call + 5);
  return call + 5 + 2; // the SYSCALL after the return
}

/**
 * From the driver's handler, through the other process and the kernel's context switch, into
 * `to` in `ctx` (the workload): the path a lab machine's CPU takes before it runs the workload again.
 */
export function otherCodeThenResume(g: PacketGenerator, to: number, ctx: ExecContext): void {
  g.untracedExit(OTHER_BASE, { cpl: 3, cr3: OTHER_CR3, mode: MODE_64 });
  const sys = otherProcess(g);
  g.farTransfer('syscall', sys, sys + 2, KERNEL_SWITCH, 0, OTHER_CR3, MODE_64);
  g.instructions(6);
  g.movCr3(KERNEL_SWITCH + 0x20, KERNEL_SWITCH + 0x23, ctx.cr3);
  g.instructions(2);
  g.farTransfer('iret', KERNEL_SWITCH + 0x40, KERNEL_SWITCH + 0x42, to, ctx.cpl, ctx.cr3, ctx.mode);
}

/**
 * After the workload's exit (the CPU in the kernel at `from`): the kernel switches to the other
 * process, which runs until the driver's stop arrives. Returns where the other process is then
 * (the handler is entered from there).
 */
export function otherCodeAfterExit(g: PacketGenerator, from: number): number {
  g.instructions(6);
  g.movCr3(from + 0x10, from + 0x13, OTHER_CR3);
  g.farTransfer('iret', from + 0x30, from + 0x32, OTHER_BASE, 3, OTHER_CR3, MODE_64);
  return otherProcess(g);
}
