// The retired-instruction events the execution engine feeds the packet
// generator (docs/sdm/README.md §1 COFI classes, §5 per-instruction flow).
//
// IPs, targets and CR3 values are plain `number`s so that the hot path never
// allocates. An IP holds the *signed* 64-bit value of the linear address
// (its sign extension): every canonical address, 48- or 57-bit, user or
// kernel (0xffffffff81000000 is -0x7f000000), is exact. Non-canonical IPs are
// out of scope. CR3 values are below 2^52 and exact. Convert with
// `ipToBigInt`/`ipFromBigInt` at the edges only.

/** A near direct or indirect transfer that is not a RET (flow-json kinds `jmp`/`call`). */
export type NearKind = 'jmp' | 'call';

/** A far transfer without a FUP (docs/sdm/packets.md §10 "Far CALL/JMP/RET, IRET, SYSCALL, …"). */
export type FarKind = 'far.call' | 'far.jmp' | 'far.ret' | 'syscall' | 'sysret' | 'sysenter' | 'sysexit' | 'iret';

/**
 * An interrupt or exception (docs/sdm/packets.md §10–§11). The FUP carries the Next IP for
 * `external`, `nmi` and `trap`, and the Current IP for `software` (INT n/INT3/INTO) and `fault`.
 */
export type InterruptKind = 'external' | 'nmi' | 'trap' | 'software' | 'fault';

/** CS.D and CS.L&LMA as MODE.Exec byte 1 bits 1:0 (docs/sdm/packets.md §3.5): 16-bit = 0, 64-bit = 1, 32-bit = 2. */
export type ExecMode = 0 | 1 | 2;
/** 64-bit mode (CS.L=1, CS.D=0). */
export const MODE_64 = 1 as const;
/** 32-bit mode (CS.L=0, CS.D=1). */
export const MODE_32 = 2 as const;
/** 16-bit mode (CS.L=0, CS.D=0). */
export const MODE_16 = 0 as const;

/** The trace-relevant architectural context: CPL, CR3 and the code-segment mode. */
export interface ExecContext {
  readonly cpl: number;
  readonly cr3: number;
  readonly mode: ExecMode;
}

/** The IA32_RTIT_* register values the generator reads when TraceEn goes 0→1 (docs/sdm/msrs.md §3.4). */
export interface RtitRegs {
  /** IA32_RTIT_CTL (the TraceEn bit itself is ignored). */
  readonly ctl: bigint;
  /** IA32_RTIT_STATUS: Stopped, Error, PendPSB and PacketByteCnt are read. */
  readonly status: bigint;
  /** IA32_RTIT_CR3_MATCH. */
  readonly cr3Match?: bigint;
  /** IA32_RTIT_ADDRn_A, n = 0..3 (missing = 0). */
  readonly addrA?: readonly bigint[];
  /** IA32_RTIT_ADDRn_B, n = 0..3 (missing = 0). */
  readonly addrB?: readonly bigint[];
}

/**
 * What the execution engine calls, in retirement order. Each call is one retired
 * instruction or event; `instructions(n)` accounts for n non-branch instructions
 * (for the modelled clock) and must precede the branch that ends the run.
 */
export interface TraceEvents {
  /** n instructions without a change of flow retired (advances the modelled clock). */
  instructions(count: number): void;
  /** A conditional branch (Jcc, JCXZ, LOOP…) at `ip`; `target` is its taken destination. */
  branchJcc(ip: number, nextIp: number, target: number, taken: boolean): void;
  /** A direct near JMP/CALL; `zeroLength` marks `E8 00000000`, which is never pushed (docs/sdm/packets.md §7). */
  branchDirect(kind: NearKind, ip: number, nextIp: number, target: number, zeroLength?: boolean): void;
  /** An indirect near JMP/CALL (FF /4, FF /2). */
  branchIndirect(kind: NearKind, ip: number, nextIp: number, target: number): void;
  /** A near RET (C3, C2 iw) to `target`. */
  ret(ip: number, nextIp: number, target: number): void;
  /** A far transfer (far CALL/JMP/RET, IRET, SYSCALL/SYSRET, SYSENTER/SYSEXIT) into the given context. */
  farTransfer(kind: FarKind, ip: number, nextIp: number, target: number, cpl: number, cr3: number, mode: ExecMode): void;
  /** An interrupt or exception delivered at `ip` (Current IP) / `nextIp` into `handler` and the given context. */
  interrupt(kind: InterruptKind, ip: number, nextIp: number, handler: number, cpl: number, cr3: number, mode: ExecMode): void;
  /** MOV to CR3 (a non-branch context change). */
  movCr3(ip: number, nextIp: number, cr3: number): void;
  /** PTWRITE of a 4- or 8-byte operand. */
  ptwrite(ip: number, value: bigint, size: 4 | 8): void;
  /** A WRMSR (or XRSTORS) that sets TraceEn; tracing would start at `nextIp`. `ip` is the WRMSR's own IP, if known (TraceStop check). */
  traceEnable(nextIp: number, regs: RtitRegs, ip?: number): void;
  /** A WRMSR (or XSAVES) at `ip` that clears TraceEn. */
  traceDisable(ip: number): void;
}

const TWO64 = 1n << 64n;

/** The unsigned 64-bit linear address an IP number stands for. */
export function ipToBigInt(ip: number): bigint {
  const v = BigInt(ip);
  return v < 0n ? v + TWO64 : v;
}

/** The IP number (signed 64-bit value) for a linear address; throws if it is not exact (not canonical-57). */
export function ipFromBigInt(addr: bigint): number {
  const s = BigInt.asIntN(64, addr);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new RangeError(`IP 0x${addr.toString(16)} is not representable (not canonical)`);
  return n;
}

/** Lowercase hex with 0x and no leading zeros, of the unsigned address (docs/formats/packet-json.md conventions). */
export function ipHex(ip: number): string {
  return ip >= 0 ? `0x${ip.toString(16)}` : `0x${ipToBigInt(ip).toString(16)}`;
}

/** Unsigned `a <= b` for IP numbers (signed 64-bit values). */
export function ipLe(a: number, b: number): boolean {
  return (a < 0) === (b < 0) ? a <= b : a >= 0;
}
