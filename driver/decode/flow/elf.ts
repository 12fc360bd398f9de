// An ELF file as flow reads its code (ptxed's --elf): the PT_LOAD segments, each an image at its
// virtual address, and the function symbols of .symtab and .dynsym, so a branch reads `sym+off`.
// Only what that needs is read, from the ELF-64 little-endian layout of the System V gABI (ELF
// header, program headers, section headers, Elf64_Sym); anything else is refused with the reason.
import { PtError } from '../../base/errors.js';
import type { ImageSpec } from './image.js';

/** A function (or other named code address) of the file, after relocation. */
export interface ElfSymbol {
  readonly name: string;
  readonly addr: bigint;
  /** st_size; 0 when the symbol has none (it then reaches to the next symbol). */
  readonly size: bigint;
}

export interface ElfImage {
  /** ET_EXEC (2) or ET_DYN (3). */
  readonly type: number;
  readonly segments: readonly ImageSpec[];
  /** By address, lowest first. */
  readonly symbols: readonly ElfSymbol[];
}

const PT_LOAD = 1, PF_X = 1, SHT_SYMTAB = 2, SHT_DYNSYM = 11, STT_NOTYPE = 0, STT_FUNC = 2, SHN_UNDEF = 0, SHN_ABS = 0xfff1;

function bad(path: string, why: string): PtError {
  return new PtError('bad_config', `${path}: not an ELF flow can read: ${why}`);
}

/**
 * The code of the ELF file `bytes` (named `path` in errors): its executable PT_LOAD segments and
 * its symbols. With `base`, the file is moved so that its lowest PT_LOAD lands there (libipt's
 * load_elf does the same); without it, each segment is at its p_vaddr.
 */
export function readElf(bytes: Uint8Array, path: string, base?: bigint): ElfImage {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (at: number, n: number, what: string): void => {
    if (at < 0 || at + n > bytes.length) throw bad(path, `${what}: past the end of the file (${bytes.length} bytes)`);
  };
  need(0, 64, 'the ELF header');
  if (dv.getUint32(0) !== 0x7f454c46) throw bad(path, 'no ELF magic (7f 45 4c 46)');
  if (bytes[4] !== 2) throw bad(path, `ELFCLASS ${bytes[4]}: only ELF-64 is read`);
  if (bytes[5] !== 1) throw bad(path, 'big-endian: only little-endian is read');
  const type = dv.getUint16(16, true);
  if (type !== 2 && type !== 3) throw bad(path, `e_type ${type}: an executable (ET_EXEC) or a shared object (ET_DYN) is read`);
  const u64 = (at: number): bigint => dv.getBigUint64(at, true);
  const phoff = Number(u64(32)), shoff = Number(u64(40));
  const phentsize = dv.getUint16(54, true), phnum = dv.getUint16(56, true);
  const shentsize = dv.getUint16(58, true), shnum = dv.getUint16(60, true);
  if (phnum > 0 && phentsize < 56) throw bad(path, `e_phentsize ${phentsize} is smaller than an Elf64_Phdr`);
  need(phoff, phnum * phentsize, 'the program headers');

  const loads: { vaddr: bigint; offset: number; filesz: number; exec: boolean }[] = [];
  for (let k = 0; k < phnum; k++) {
    const at = phoff + k * phentsize;
    if (dv.getUint32(at, true) !== PT_LOAD) continue;
    const offset = Number(u64(at + 8)), filesz = Number(u64(at + 32));
    need(offset, filesz, `PT_LOAD ${k}`);
    loads.push({ vaddr: u64(at + 16), offset, filesz, exec: (dv.getUint32(at + 4, true) & PF_X) !== 0 });
  }
  if (loads.length === 0) throw bad(path, 'no PT_LOAD segment');
  const lowest = loads.reduce((m, l) => (l.vaddr < m ? l.vaddr : m), loads[0]!.vaddr);
  const shift = base === undefined ? 0n : base - lowest;
  const mask = (1n << 64n) - 1n;
  const segments = loads.filter((l) => l.exec && l.filesz > 0).map((l) => ({ bytes: bytes.subarray(l.offset, l.offset + l.filesz), base: (l.vaddr + shift) & mask }));
  if (segments.length === 0) throw bad(path, 'no executable PT_LOAD segment with bytes in the file');

  const symbols: ElfSymbol[] = [];
  if (shnum > 0 && shentsize >= 64) {
    need(shoff, shnum * shentsize, 'the section headers');
    const section = (k: number) => {
      const at = shoff + k * shentsize;
      return { type: dv.getUint32(at + 4, true), offset: Number(u64(at + 24)), size: Number(u64(at + 32)), link: dv.getUint32(at + 40, true), entsize: Number(u64(at + 56)) };
    };
    for (let k = 0; k < shnum; k++) {
      const s = section(k);
      if ((s.type !== SHT_SYMTAB && s.type !== SHT_DYNSYM) || s.link >= shnum) continue;
      const strtab = section(s.link);
      need(s.offset, s.size, 'a symbol table');
      need(strtab.offset, strtab.size, 'a string table');
      const entsize = s.entsize >= 24 ? s.entsize : 24;
      for (let at = s.offset; at + 24 <= s.offset + s.size; at += entsize) {
        const info = bytes[at + 4]!, shndx = dv.getUint16(at + 6, true);
        const stt = info & 0xf;
        if ((stt !== STT_FUNC && stt !== STT_NOTYPE) || shndx === SHN_UNDEF) continue;
        const nameAt = strtab.offset + dv.getUint32(at, true);
        if (nameAt >= strtab.offset + strtab.size) continue;
        let end = nameAt;
        while (end < strtab.offset + strtab.size && bytes[end] !== 0) end++;
        const name = new TextDecoder().decode(bytes.subarray(nameAt, end));
        if (name === '' || name.startsWith('$')) continue;
        const value = u64(at + 8);
        symbols.push({ name, addr: shndx === SHN_ABS ? value : (value + shift) & mask, size: u64(at + 16) });
      }
    }
  }
  symbols.sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : a.name < b.name ? -1 : 1));
  return { type, segments, symbols };
}

/** `addr` as `sym+0xoff` (or `sym`) by the nearest symbol at or below it that covers it; undefined when none does. */
export function symbolize(symbols: readonly ElfSymbol[], addr: bigint): string | undefined {
  let lo = 0, hi = symbols.length - 1, at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (symbols[mid]!.addr <= addr) { at = mid; lo = mid + 1; } else hi = mid - 1;
  }
  if (at < 0) return undefined;
  const s = symbols[at]!;
  if (s.size > 0n && addr >= s.addr + s.size) return undefined;
  const off = addr - s.addr;
  return off === 0n ? s.name : `${s.name}+0x${off.toString(16)}`;
}
