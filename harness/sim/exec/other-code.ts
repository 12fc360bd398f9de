// Other code on the traced CPU (realism.ts `otherCode`): on a lab machine the workload's CPU also
// runs the helper that started it, sshd, the kernel and whatever else the scheduler puts there. The
// model runs a short stretch of another process — user mode at its own addresses (a static binary at
// 0x400000) and its own CR3 — and the kernel around the workload: at every return from the driver's
// handler, before the workload's first instruction, and after its exit. With User=1 and no filter
// that stretch is traced, and the trace is then not the workload's alone; a CR3 or IP filter on the
// workload keeps it out (docs/design.md "Realism").
//
// The loader is other code of a harder kind: the helper's child between its fork and the workload's
// first instruction (guest/helper/run.c) runs the helper's own code in the workload's address space,
// in user mode, so a CR3 filter cannot keep it out; only an IP filter, or an enable that comes once
// the workload waits at its entry (the late enable: StartOpts.held), does.
import { ipFromBigInt, MODE_64, type ExecContext } from '../trace/events.js';
import type { PacketGenerator } from '../trace/generator.js';

/** The other process: a static binary's text at 0x400000, its own address space. */
export const OTHER_BASE = ipFromBigInt(0x40_0000n);
export const OTHER_CR3 = 0x9000;
/** Where the kernel runs the context switch (kernel text, CPL 0; model choice). */
const KERNEL_SWITCH = ipFromBigInt(0xffff_ffff_8120_0000n);
/** Taken jcc's the other process runs per visit (a short loop). */
const LOOP = 6;
/** The helper's code the loader runs in the child: the same static binary's text, past OTHER_BASE's loop. */
const LOADER_BASE = OTHER_BASE + 0x2000;
/** Where the SYSCALL instruction goes (IA32_LSTAR of the model): kernel text, CPL 0. */
export const KERNEL_SYSCALL = ipFromBigInt(0xffff_ffff_8100_0000n);
/** 8-byte words the loader's copy loop moves per visit (a short loop; a real copy is longer, and as traceable). */
const COPY_LOOP = 4;

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

/** One system call from user code at `ip` in `ctx` and its return to the next instruction. */
function syscall(g: PacketGenerator, ip: number, ctx: ExecContext): number {
  g.farTransfer('syscall', ip, ip + 2, KERNEL_SYSCALL, 0, ctx.cr3, MODE_64);
  g.instructions(8);
  g.farTransfer('sysret', KERNEL_SYSCALL + 0x40, KERNEL_SYSCALL + 0x43, ip + 2, ctx.cpl, ctx.cr3, ctx.mode);
  return ip + 2;
}

/**
 * The child after its fork, from the scheduler's switch to it: the helper's code copies the image in
 * (a loop), maps it (mmap) and makes it executable (mprotect), in the workload's address space.
 * Returns the IP after the mprotect, where the loader either calls the entry or stops itself.
 */
function loader(g: PacketGenerator, ctx: ExecContext): number {
  otherCodeThenResume(g, LOADER_BASE, ctx);
  let ip = syscall(g, LOADER_BASE + 0x10, ctx); // mmap
  const head = ip + 4, jcc = head + 12;
  for (let k = 0; k < COPY_LOOP; k++) {
    g.instructions(3);
    g.branchJcc(jcc, jcc + 2, head, k < COPY_LOOP - 1);
  }
  ip = syscall(g, jcc + 8, ctx); // mprotect
  g.instructions(2);
  return ip + 6;
}

/**
 * A workload started as it is (not held): the loader runs and then calls the entry (an indirect
 * call), so whatever traces the workload's address space from the start traces the loader too.
 */
export function loaderThenEntry(g: PacketGenerator, entry: number, ctx: ExecContext): void {
  const at = loader(g, ctx);
  g.branchIndirect('call', at, at + 2, entry);
}

/**
 * A workload started held (StartOpts.held): the loader runs and stops the child at its entry (a
 * raise of SIGSTOP: a system call that does not return until the driver lets it go). The CPU is then
 * in the kernel, back in the driver's untraced handler; the workload's first instruction comes with
 * the next return from the handler, straight at its entry (guest/helper/run.c sets the child's IP
 * there before it lets it go).
 */
export function loaderThenHold(g: PacketGenerator, ctx: ExecContext): void {
  const at = loader(g, ctx);
  g.farTransfer('syscall', at, at + 2, KERNEL_SYSCALL, 0, ctx.cr3, MODE_64);
  g.instructions(6);
  g.untracedEnter(KERNEL_SYSCALL + 0x80);
}
