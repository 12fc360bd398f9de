// Code images: per-address classes from iced-x86, lookups that never throw.
import { describe, expect, test } from 'vitest';
import { Cls } from '../../driver/decode/flow/insn-class.js';
import { ImageSet, parseImageArg } from '../../driver/decode/flow/image.js';

// Classes follow libipt's pt_insn_class (docs/formats/flow-json.md), refined by what the trace supplies.
describe('instruction classes', () => {
  test.for([
    { name: 'je rel8', bytes: [0x74, 0x02], cls: Cls.jcc, length: 2, target: 0x1004n },
    { name: 'loop rel8', bytes: [0xe2, 0xfe], cls: Cls.jcc, length: 2, target: 0x1000n },
    { name: 'jrcxz rel8', bytes: [0xe3, 0x00], cls: Cls.jcc, length: 2, target: 0x1002n },
    { name: 'jmp rel32', bytes: [0xe9, 0x10, 0, 0, 0], cls: Cls.jmp, length: 5, target: 0x1015n },
    { name: 'call rel32', bytes: [0xe8, 0x10, 0, 0, 0], cls: Cls.call, length: 5, target: 0x1015n },
    { name: 'zero-length call (spec §7 step 2)', bytes: [0xe8, 0, 0, 0, 0], cls: Cls.callZero, length: 5, target: 0x1005n },
    { name: 'jmp rax', bytes: [0xff, 0xe0], cls: Cls.jmpInd, length: 2 },
    { name: 'call [rdx+rax*8]', bytes: [0xff, 0x14, 0xc2], cls: Cls.callInd, length: 3 },
    { name: 'ret', bytes: [0xc3], cls: Cls.ret, length: 1 },
    { name: 'ret imm16', bytes: [0xc2, 0x08, 0x00], cls: Cls.ret, length: 3 },
    { name: 'syscall', bytes: [0x0f, 0x05], cls: Cls.farCall, length: 2 },
    { name: 'int3', bytes: [0xcc], cls: Cls.farCall, length: 1 },
    { name: 'retf', bytes: [0xcb], cls: Cls.farRet, length: 1 },
    { name: 'iretq', bytes: [0x48, 0xcf], cls: Cls.farRet, length: 2 },
    { name: 'sysret', bytes: [0x48, 0x0f, 0x07], cls: Cls.farRet, length: 3 },
    { name: 'jmp far [rax]', bytes: [0xff, 0x28], cls: Cls.farJmp, length: 2 },
    { name: 'mov cr3, rax', bytes: [0x0f, 0x22, 0xd8], cls: Cls.movCr3, length: 3 },
    { name: 'mov cr4, rax', bytes: [0x0f, 0x22, 0xe0], cls: Cls.other, length: 3 },
    { name: 'nop', bytes: [0x90], cls: Cls.other, length: 1 },
  ])('$name is class $cls, length $length', ({ bytes, cls, length, target }) => {
    const set = new ImageSet([{ base: 0x1000n, bytes: Uint8Array.from(bytes) }]);
    const info = set.insnAt(0x1000n);
    expect(info).toEqual(target === undefined ? { cls, length } : { cls, length, target });
    set.dispose();
  });

  test('bytes that do not decode are class bad', () => {
    const set = new ImageSet([{ base: 0x1000n, bytes: Uint8Array.from([0x0f, 0xff]) }]);
    expect(set.insnAt(0x1000n)).toMatchObject({ cls: Cls.bad });
  });

  test('an instruction cut by the end of the image is class bad', () => {
    const set = new ImageSet([{ base: 0x1000n, bytes: Uint8Array.from([0xe8, 0x00]) }]);
    expect(set.insnAt(0x1000n)).toMatchObject({ cls: Cls.bad });
  });
});

describe('lookups', () => {
  const set = new ImageSet([
    { base: 0x1000n, bytes: new Uint8Array(16) },
    { base: 0xffffffff81000000n, bytes: new Uint8Array(16) },
  ]);

  test.for([
    { ip: 0x1000n, image: 0, offset: 0 },
    { ip: 0x100fn, image: 0, offset: 15 },
    { ip: 0xffffffff81000004n, image: 1, offset: 4 },
  ])('$ip is in image $image at offset $offset', ({ ip, image, offset }) => {
    expect(set.lookup(ip)).toEqual({ ok: true, image, offset });
  });

  test.for([0xfffn, 0x1010n, 0x100001000n, 0xffffffff80fffff0n])('%s outside every image is nomap, not a throw', (ip) => {
    expect(set.lookup(ip)).toEqual({ ok: false, code: 'nomap', ip });
    expect(set.insnAt(ip)).toEqual({ ok: false, code: 'nomap', ip });
  });
});

describe('image arguments', () => {
  test.for([
    { arg: 'image.bin@0x10000000', want: { path: 'image.bin', base: 0x10000000n } },
    { arg: 'a@b.bin@4096', want: { path: 'a@b.bin', base: 4096n } },
    { arg: 'image.bin', want: null },
    { arg: 'image.bin@', want: null },
    { arg: '@0x1000', want: null },
    { arg: 'image.bin@0xzz', want: null },
    { arg: 'image.bin@0x10000000000000000', want: null },
  ])('$arg parses to $want', ({ arg, want }) => {
    expect(parseImageArg(arg)).toEqual(want);
  });
});
