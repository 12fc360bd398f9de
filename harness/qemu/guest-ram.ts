// Guest physical memory through the shared memory-backend file (docs/qemu.md §4): file offset =
// guest physical address below q35's low-memory split, and high RAM continues at 4 GiB. QMP
// `pmemsave` is the fallback (and a cross-check: it reads through the CPU's view, where
// 0xA0000–0xBFFFF is the VGA window rather than RAM).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PtError } from '../../driver/base/errors.js';
import { readDestination } from '../../driver/read-into.js';
import type { TimedOpts } from '../link/deadline.js';
import { TargetError } from '../link/errors.js';
import type { QmpClient } from './qmp.js';
import { openRamFile, type RamAccess, type RamFile, type RamFileOptions } from './ram-file.js';

const GiB = 1n << 30n;
const FOUR_GIB = 4n * GiB;

/** Where q35 puts RAM: [0, below4g) and [4 GiB, 4 GiB + above4g). */
export interface RamLayout {
  readonly below4g: bigint;
  readonly above4g: bigint;
}

/**
 * q35's split (QEMU hw/i386/pc_q35.c): with 0xB0000000 bytes of RAM or more, only the first
 * 2 GiB sit below 4 GiB; otherwise up to 0xB0000000 do.
 */
export function q35RamLayout(ramBytes: bigint): RamLayout {
  const lowmem = ramBytes >= 0xb000_0000n ? 0x8000_0000n : 0xb000_0000n;
  const below4g = ramBytes < lowmem ? ramBytes : lowmem;
  return { below4g, above4g: ramBytes - below4g };
}

/** The file offset of [pa, pa+len) when that range lies inside one RAM segment, else undefined. */
export function physToFileOffset(pa: bigint, len: number, layout: RamLayout): bigint | undefined {
  const end = pa + BigInt(len);
  if (pa < 0n || len < 0) return undefined;
  if (end <= layout.below4g) return pa;
  if (pa >= FOUR_GIB && end <= FOUR_GIB + layout.above4g) return layout.below4g + (pa - FOUR_GIB);
  return undefined;
}

/** How the host reaches guest RAM: the mapped file, pread on it, or QMP `pmemsave` without one. */
export type GuestRamAccess = RamAccess | 'pmemsave';

/** Guest RAM as the host sees it. */
export class GuestRam implements AsyncDisposable {
  private constructor(
    private readonly file: RamFile | undefined,
    readonly layout: RamLayout,
    private readonly qmp: QmpClient,
    private readonly scratchDir: string,
    /** Why the RAM file is not used (access 'pmemsave'). */
    private readonly noFileReason: string | undefined,
  ) {}

  /**
   * Opens the shared RAM file (mapped when the ram-map addon loads, else pread: ram-file.ts);
   * without one, or if it cannot be opened, reads use `pmemsave`.
   */
  static async open(memPath: string | undefined, ramBytes: bigint, qmp: QmpClient, scratchDir: string, opts: RamFileOptions = {}): Promise<GuestRam> {
    const layout = q35RamLayout(ramBytes);
    if (memPath === undefined) return new GuestRam(undefined, layout, qmp, scratchDir, 'the VM has no memory-backend file');
    try {
      const file = await openRamFile(memPath, Number(ramBytes), opts);
      return new GuestRam(file, layout, qmp, scratchDir, undefined);
    } catch (e) {
      // An access asked for by name, or a bad PTLAB_RAM_ACCESS, is the user's choice: fail loudly.
      if (opts.access === 'mmap' || opts.access === 'pread' || (e instanceof PtError && e.code === 'bad_config')) throw e;
      return new GuestRam(undefined, layout, qmp, scratchDir, (e as Error).message);
    }
  }

  /** True when reads and writes go through the shared file. */
  get shared(): boolean {
    return this.file !== undefined;
  }

  /** How reads reach guest RAM. */
  get access(): GuestRamAccess {
    return this.file?.access ?? 'pmemsave';
  }

  /** Why the faster paths are not in use: undefined when the file is mapped. */
  get slowPathReason(): string | undefined {
    return this.file === undefined ? this.noFileReason : this.file.unmappedReason;
  }

  /** The shared file itself (the model's output engine writes through it), or undefined. */
  get ramFile(): RamFile | undefined {
    return this.file;
  }

  /** Reads `len` bytes at guest physical address `pa` (into `opts.into` when given: ReadOpts). */
  async read(pa: bigint, len: number, opts: TimedOpts & { readonly into?: Uint8Array } = {}): Promise<Uint8Array> {
    const off = physToFileOffset(pa, len, this.layout);
    if (this.file === undefined || off === undefined) {
      const bytes = await this.pmemsave(pa, len, opts);
      return opts.into === undefined ? bytes : copyInto(bytes, opts.into);
    }
    const out = opts.into === undefined ? uninitialised(len) : readDestination(len, opts.into);
    this.file.readInto(Number(off), out);
    return out;
  }

  /** Writes `data` at guest physical address `pa` (the guest sees it at once). */
  async write(pa: bigint, data: Uint8Array): Promise<void> {
    const { file, off } = this.locate(pa, data.length);
    file.write(off, data);
  }

  /** Faults [pa, pa+len) in now (a new buffer's first collection then costs no page faults). */
  populate(pa: bigint, len: number): void {
    const { file, off } = this.locate(pa, len);
    file.populate(off, len);
  }

  /** Reads through QMP `pmemsave` (the CPU's view of physical memory). */
  async pmemsave(pa: bigint, len: number, opts: TimedOpts = {}): Promise<Uint8Array> {
    const file = join(this.scratchDir, `pmem-${randomBytes(6).toString('hex')}.bin`);
    try {
      await this.qmp.execute('pmemsave', { val: Number(pa), size: len, filename: file }, opts);
      return new Uint8Array(await readFile(file));
    } finally {
      await rm(file, { force: true });
    }
  }

  /** Lets go of the file (unmapping it), before the VM removes it. */
  async close(): Promise<void> {
    this.file?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The shared file and the offset of [pa, pa+len) in it. */
  private locate(pa: bigint, len: number): { file: RamFile; off: number } {
    const off = physToFileOffset(pa, len, this.layout);
    if (off === undefined) throw new TargetError('memory', 'io', `0x${pa.toString(16)}+${len} is not guest RAM`);
    if (this.file === undefined) throw new TargetError('memory', 'io', `guest RAM is not shared with the host: ${this.noFileReason ?? 'no memory-backend file'}`);
    return { file: this.file, off: Number(off) };
  }
}

/** `len` bytes that are about to be overwritten whole: no zero fill (Buffer.allocUnsafeSlow), as a plain Uint8Array. */
function uninitialised(len: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(len);
  return new Uint8Array(b.buffer, b.byteOffset, len);
}

function copyInto(bytes: Uint8Array, into: Uint8Array): Uint8Array {
  const out = readDestination(bytes.length, into);
  out.set(bytes);
  return out;
}
