// `ptlab flow --elf FILE[:BASE]` (ptxed's --elf) on ELF files the GNU toolchain makes from a run's
// image.bin (objcopy to an object with the code as .text and two function symbols, ld at the run's
// base, or at 0x1000 and moved with BASE): the flow equals the run's, and the text lines name the
// symbols. A file that is no ELF, or is cut short, is one line and exit 2.
import { Ajv } from 'ajv';
import { execa } from 'execa';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readElf, symbolize } from '../../driver/decode/flow/elf.js';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-flow-elf-');
const tools = await Promise.all(['objcopy', 'ld'].map((t) => execa(t, ['--version'], { reject: false }).then((r) => r.exitCode === 0, () => false)));
const haveTools = tools.every(Boolean);

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '', err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; } });
  return { code, out, err };
}

describe.skipIf(!haveTools)(haveTools ? 'flow --elf' : 'flow --elf (skipped: objcopy and ld, from binutils, are not installed)', async () => {
  await cli('run', 'mtc-tsc-timing', '--cpu', 'full', '--out', join(root, 'suite'));
  const run = join(root, 'suite', 'mtc-tsc-timing', 'full');
  const base = (JSON.parse(await readFile(join(run, 'image.json'), 'utf8')) as { base: string }).base;
  const obj = join(root, 'img.o'), elf = join(root, 'img.elf'), low = join(root, 'low.elf');
  // The code as an allocated, executable .text, with `loop` at +2 and `tail` at +0x20.
  await execa('objcopy', ['-I', 'binary', '-O', 'elf64-x86-64', '-B', 'i386:x86-64', '--rename-section', '.data=.text,alloc,load,readonly,code,contents',
    '--add-symbol', 'loop=.text:0x2,function,global', '--add-symbol', 'tail=.text:0x20,function,global', join(run, 'image.bin'), obj]);
  await execa('ld', [`-Ttext=${base}`, '-e', base, '--no-warn-rwx-segments', obj, '-o', elf]);
  await execa('ld', ['-Ttext=0x1000', '-e', '0x1000', '--no-warn-rwx-segments', obj, '-o', low]);
  const trace = join(run, 'trace.pt');

  test('the ELF\'s executable segment is the image: flow --json equals the run\'s flow, with the symbols added', async () => {
    const [a, b] = [await cli('flow', '--pt', trace, '--elf', elf, '--json'), await cli('flow', run, '--json')];
    const unnamed = a.out.replace(/,"(sym|toSym)":"[^"]*"/g, '');
    expect([a.code, a.err, a.out.length > 10_000, unnamed === b.out]).toEqual([0, '', true, true]);
    const lines = a.out.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `{"kind":"enable","ip":"${base}","sym":"_binary_${join(run, 'image.bin').replace(/[^A-Za-z0-9]/g, '_')}_start"}`,
      expect.stringMatching(/^\{"ip":"0x[0-9a-f]+","sym":"loop","kind":"jmp","to":"0x[0-9a-f]+","toSym":"loop\+0x5"\}$/),
    ]);
    const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const valid = ajv.compile(JSON.parse(await readFile(join(process.cwd(), 'docs', 'schemas', 'flow.schema.json'), 'utf8')) as object);
    expect(lines.filter((l) => !valid(JSON.parse(l))).slice(0, 3)).toEqual([]);
  });

  test('FILE:BASE moves the file so that its lowest PT_LOAD lands at BASE (libipt\'s load_elf)', async () => {
    // low.elf's segments are at 0 (headers) and 0x1000 (code): at BASE - 0x1000 the code is where the run's was.
    const moved = `0x${(BigInt(base) - 0x1000n).toString(16)}`;
    const [a, b] = [await cli('flow', '--pt', trace, '--elf', `${low}:${moved}`, '--json'), await cli('flow', run, '--json')];
    expect([a.code, a.out.replace(/,"(sym|toSym)":"[^"]*"/g, '') === b.out]).toEqual([0, true]);
    const unmoved = await cli('flow', '--pt', trace, '--elf', low);
    expect([unmoved.code, unmoved.err]).toEqual([1, expect.stringMatching(/no instruction of the trace lies in the image/)]);
  });

  test('the text lines name the symbols: <loop>, <loop+0x5>', async () => {
    const r = await cli('flow', '--pt', trace, '--elf', elf);
    const lines = r.out.split('\n');
    expect(lines[1]).toMatch(/^ *0x[0-9a-f]+ <loop>  jmp +-> 0x[0-9a-f]+ <loop\+0x5>$/);
    expect(lines[0]).toMatch(/enable at 0x[0-9a-f]+ <_binary_.*_start>$/);
  });

  test('a file that is not an ELF, or one cut short, is one line and exit 2', async () => {
    const cut = join(root, 'cut.elf');
    await writeFile(cut, (await readFile(elf)).subarray(0, 100));
    const [notElf, short] = [await cli('flow', '--pt', trace, '--elf', join(run, 'image.bin')), await cli('flow', '--pt', trace, '--elf', cut)];
    expect([notElf.code, notElf.err, short.code, short.err]).toEqual([
      2, `ptlab flow: ${join(run, 'image.bin')}: not an ELF flow can read: no ELF magic (7f 45 4c 46)\n`,
      2, expect.stringMatching(/^ptlab flow: .*cut\.elf: not an ELF flow can read: the program headers: past the end of the file \(100 bytes\)\n$/),
    ]);
  });

  test('readElf: segments, relocated symbols; symbolize: a sized symbol names only what it covers', async () => {
    const e = readElf(await readFile(low), 'low.elf', 0x4000_0000n);
    expect(e.segments.map((s) => s.base)).toEqual([0x4000_1000n]);
    expect(e.symbols.filter((s) => s.name === 'loop' || s.name === 'tail').map((s) => [s.name, s.addr])).toEqual([['loop', 0x4000_1002n], ['tail', 0x4000_1020n]]);
    const sized = [{ name: 'f', addr: 0x100n, size: 0x10n }, { name: 'g', addr: 0x200n, size: 0n }];
    expect([0xffn, 0x100n, 0x10fn, 0x110n, 0x250n].map((a) => symbolize(sized, a))).toEqual([undefined, 'f', 'f+0xf', undefined, 'g+0x50']);
  });
});
