// The assembler's encodings against bytes written by hand from the Intel SDM Vol. 2 opcode
// tables (REX = 0100WRXB; ModR/M = mod|reg|rm; SIB = scale|index|base).
import { describe, expect, test } from 'vitest';
import {
  AsmError, Assembler, R10, R11, R12, R15, R8, R9, RAX, RBX, RCX, RDI, RDX, RSI,
} from '../../harness/sim/workload/x86.js';

const BASE = 0x1000_0000n;

function one(emit: (a: Assembler) => void, base = BASE): number[] {
  const a = new Assembler();
  emit(a);
  return [...a.assemble(base).bytes];
}

describe('fixed encodings', () => {
  test.for([
    { name: 'mov eax, 60 (B8+rd id)', emit: (a: Assembler) => a.movImm32(RAX, 60), want: [0xb8, 0x3c, 0, 0, 0] },
    { name: 'mov r8d, 1 (REX.B B8+rd id)', emit: (a: Assembler) => a.movImm32(R8, 1), want: [0x41, 0xb8, 1, 0, 0, 0] },
    { name: 'dec ebx (FF /1)', emit: (a: Assembler) => a.dec32(RBX), want: [0xff, 0xcb] },
    { name: 'dec r12d (REX.B FF /1)', emit: (a: Assembler) => a.dec32(R12), want: [0x41, 0xff, 0xcc] },
    { name: 'inc ecx (FF /0)', emit: (a: Assembler) => a.inc32(RCX), want: [0xff, 0xc1] },
    { name: 'and eax, 63 (83 /4 ib)', emit: (a: Assembler) => a.and32(RAX, 63), want: [0x83, 0xe0, 0x3f] },
    { name: 'and eax, 0x1000 (81 /4 id)', emit: (a: Assembler) => a.and32(RAX, 0x1000), want: [0x81, 0xe0, 0, 0x10, 0, 0] },
    { name: 'cmp esi, 10 (83 /7 ib)', emit: (a: Assembler) => a.cmp32(RSI, 10), want: [0x83, 0xfe, 0x0a] },
    { name: 'cmp r9d, 200 (REX.B 81 /7 id)', emit: (a: Assembler) => a.cmp32(R9, 200), want: [0x41, 0x81, 0xf9, 200, 0, 0, 0] },
    { name: 'test ebx, 4 (F7 /0 id)', emit: (a: Assembler) => a.test32(RBX, 4), want: [0xf7, 0xc3, 4, 0, 0, 0] },
    { name: 'test r15d, 1 (REX.B F7 /0 id)', emit: (a: Assembler) => a.test32(R15, 1), want: [0x41, 0xf7, 0xc7, 1, 0, 0, 0] },
    { name: 'mov eax, ebx (89 /r)', emit: (a: Assembler) => a.movR32(RAX, RBX), want: [0x89, 0xd8] },
    { name: 'mov eax, r10d (REX.R 89 /r)', emit: (a: Assembler) => a.movR32(RAX, R10), want: [0x44, 0x89, 0xd0] },
    { name: 'xor edi, edi (31 /r)', emit: (a: Assembler) => a.xor32(RDI, RDI), want: [0x31, 0xff] },
    { name: 'movzx eax, byte [rdx+rax] (0F B6 /r, SIB)', emit: (a: Assembler) => a.movzxByte(RAX, RDX, RAX), want: [0x0f, 0xb6, 0x04, 0x02] },
    { name: 'jmp [rdx+rax*8] (FF /4, SIB)', emit: (a: Assembler) => a.jmpTable(RDX, RAX), want: [0xff, 0x24, 0xc2] },
    { name: 'call [rdx+rax*8] (FF /2, SIB)', emit: (a: Assembler) => a.callTable(RDX, RAX), want: [0xff, 0x14, 0xc2] },
    { name: 'jmp rax (FF /4)', emit: (a: Assembler) => a.jmpReg(RAX), want: [0xff, 0xe0] },
    { name: 'call rax (FF /2)', emit: (a: Assembler) => a.callReg(RAX), want: [0xff, 0xd0] },
    { name: 'call r11 (REX.B FF /2)', emit: (a: Assembler) => a.callReg(R11), want: [0x41, 0xff, 0xd3] },
    { name: 'ret (C3)', emit: (a: Assembler) => a.ret(), want: [0xc3] },
    { name: 'syscall (0F 05)', emit: (a: Assembler) => a.syscall(), want: [0x0f, 0x05] },
    { name: 'add qword [rsp], 5 (REX.W 83 /0 ib)', emit: (a: Assembler) => a.addRetAddr(5), want: [0x48, 0x83, 0x04, 0x24, 0x05] },
    { name: 'pop rax (58+rd)', emit: (a: Assembler) => a.pop(RAX), want: [0x58] },
    { name: 'pop r9 (REX.B 58+rd)', emit: (a: Assembler) => a.pop(R9), want: [0x41, 0x59] },
    { name: 'ptwrite rax (F3 REX.W 0F AE /4)', emit: (a: Assembler) => a.ptwrite64(RAX), want: [0xf3, 0x48, 0x0f, 0xae, 0xe0] },
    { name: 'ptwrite r8 (F3 REX.WB 0F AE /4)', emit: (a: Assembler) => a.ptwrite64(R8), want: [0xf3, 0x49, 0x0f, 0xae, 0xe0] },
    { name: 'ptwrite ecx (F3 0F AE /4)', emit: (a: Assembler) => a.ptwrite32(RCX), want: [0xf3, 0x0f, 0xae, 0xe1] },
    { name: '3-byte nop (0F 1F /0)', emit: (a: Assembler) => a.nop(3), want: [0x0f, 0x1f, 0x00] },
    { name: '10-byte nop is 9 + 1', emit: (a: Assembler) => a.nop(10), want: [0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x90] },
    { name: 'int3 filler (CC)', emit: (a: Assembler) => a.int3(2), want: [0xcc, 0xcc] },
  ])('$name', ({ emit, want }) => {
    expect(one(emit)).toEqual(want);
  });
});

describe('labels and fixups', () => {
  test('a CALL to the next instruction is the zero-length form E8 00000000', () => {
    expect(one((a) => { const l = a.label(); a.call(l); a.bind(l); })).toEqual([0xe8, 0, 0, 0, 0]);
  });

  test('a backward JMP in reach uses EB rel8', () => {
    expect(one((a) => { const top = a.here(); a.nop(1); a.jmp(top); })).toEqual([0x90, 0xeb, 0xfd]);
  });

  test('a forward Jcc in reach uses 7x rel8', () => {
    expect(one((a) => { const l = a.label(); a.jcc('NZ', l); a.nop(2); a.bind(l); })).toEqual([0x75, 0x02, 0x66, 0x90]);
  });

  test('a Jcc beyond rel8 reach is relaxed to 0F 8x rel32', () => {
    const bytes = one((a) => { const l = a.label(); a.jcc('L', l); a.int3(200); a.bind(l); });
    expect(bytes.slice(0, 6)).toEqual([0x0f, 0x8c, 200, 0, 0, 0]);
  });

  test('a forced near JMP uses E9 rel32 even in reach', () => {
    expect(one((a) => { const l = a.label(); a.jmp(l, 'near'); a.bind(l); })).toEqual([0xe9, 0, 0, 0, 0]);
  });

  test('LOOP to itself is E2 FE', () => {
    expect(one((a) => { const top = a.here(); a.loop(top); })).toEqual([0xe2, 0xfe]);
  });

  test('LOOP beyond rel8 reach is an AsmError', () => {
    expect(() => one((a) => { const top = a.here(); a.int3(130); a.loop(top); })).toThrow(AsmError);
  });

  test('LEA rdx, [rip+disp32] counts from the end of the instruction', () => {
    expect(one((a) => { const l = a.label(); a.leaRip(RDX, l); a.int3(1); a.bind(l); })).toEqual([0x48, 0x8d, 0x15, 1, 0, 0, 0, 0xcc]);
  });

  test('MOV rax, imm64 holds the absolute address base + offset', () => {
    expect(one((a) => { const l = a.label(); a.movAbs64(RAX, l); a.bind(l); })).toEqual([0x48, 0xb8, 10, 0, 0, 0x10, 0, 0, 0, 0]);
  });

  test('PUSH imm32 holds the absolute address', () => {
    expect(one((a) => { const l = a.label(); a.pushAddr(l); a.bind(l); })).toEqual([0x68, 5, 0, 0, 0x10]);
  });

  test('PUSH imm32 of an address at or above 2^31 is an AsmError (it would sign-extend)', () => {
    expect(() => one((a) => { const l = a.label(); a.pushAddr(l); a.bind(l); }, 0x8000_0000n)).toThrow(AsmError);
  });

  test('an 8-byte table entry is the little-endian absolute address', () => {
    expect(one((a) => { const l = a.here(); a.addr64(l); }, 0x1234_5678_9an)).toEqual([0x9a, 0x78, 0x56, 0x34, 0x12, 0, 0, 0]);
  });

  test('align pads with the fill byte to the boundary', () => {
    expect(one((a) => { a.nop(1); a.align(4, 0xcc); a.ret(); })).toEqual([0x90, 0xcc, 0xcc, 0xcc, 0xc3]);
  });

  test('a label bound twice is an AsmError', () => {
    const a = new Assembler();
    const l = a.here();
    expect(() => a.bind(l)).toThrow(AsmError);
  });

  test('an unbound label is an AsmError at assembly', () => {
    expect(() => one((a) => { a.jmp(a.label()); })).toThrow(AsmError);
  });

  test('item offsets and lengths are resolved after relaxation', () => {
    const a = new Assembler();
    const l = a.label();
    const j = a.jcc('Z', l);
    a.int3(300);
    const r = a.ret();
    a.bind(l);
    const out = a.assemble(BASE);
    expect([out.itemOffset(j), out.itemLength(j), out.itemOffset(r), out.itemLength(r), out.offsetOf(l)]).toEqual([0, 6, 306, 1, 307]);
  });
});

test('RSI and RBX registers encode in ModR/M rm as 6 and 3', () => {
  expect(one((a) => { a.dec32(RSI); a.dec32(RBX); })).toEqual([0xff, 0xce, 0xff, 0xcb]);
});
