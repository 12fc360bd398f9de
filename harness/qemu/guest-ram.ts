// Guest physical memory through the shared memory-backend file (qemu-notes §4): file offset =
// guest physical address below q35's low-memory split, and high RAM continues at 4 GiB. QMP
// `pmemsave` is the fallback (and a cross-check: it reads through the CPU's view, where
// 0xA0000–0xBFFFF is the VGA window rather than RAM).
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TimedOpts } from './deadline.js';
import { TargetError } from './errors.js';
import type { QmpClient } from './qmp.js';

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

/** Guest RAM as the host sees it. */
export class GuestRam implements AsyncDisposable {
  private constructor(
    private readonly fh: FileHandle | undefined,
    readonly layout: RamLayout,
    private readonly qmp: QmpClient,
    private readonly scratchDir: string,
  ) {}

  /** Opens the shared RAM file; without one (or if it cannot be opened) reads use `pmemsave`. */
  static async open(memPath: string | undefined, ramBytes: bigint, qmp: QmpClient, scratchDir: string): Promise<GuestRam> {
    const fh = memPath === undefined ? undefined : await open(memPath, 'r+').catch(() => undefined);
    return new GuestRam(fh, q35RamLayout(ramBytes), qmp, scratchDir);
  }

  /** True when reads and writes go through the shared file. */
  get shared(): boolean {
    return this.fh !== undefined;
  }

  /** Reads `len` bytes at guest physical address `pa`. */
  async read(pa: bigint, len: number, opts: TimedOpts = {}): Promise<Uint8Array> {
    const off = physToFileOffset(pa, len, this.layout);
    if (this.fh === undefined || off === undefined) return this.pmemsave(pa, len, opts);
    const buf = new Uint8Array(len);
    const { bytesRead } = await this.fh.read(buf, 0, len, Number(off));
    if (bytesRead !== len) throw new TargetError('memory', 'io', `short read of guest RAM at 0x${pa.toString(16)}: ${bytesRead} of ${len} bytes`);
    return buf;
  }

  /** Writes `data` at guest physical address `pa` (the guest sees it at once). */
  async write(pa: bigint, data: Uint8Array): Promise<void> {
    const off = physToFileOffset(pa, data.length, this.layout);
    if (off === undefined) throw new TargetError('memory', 'io', `0x${pa.toString(16)}+${data.length} is not guest RAM`);
    if (this.fh === undefined) throw new TargetError('memory', 'io', 'guest RAM is not shared with the host: no memory-backend file');
    const { bytesWritten } = await this.fh.write(data, 0, data.length, Number(off));
    if (bytesWritten !== data.length) throw new TargetError('memory', 'io', `short write of guest RAM at 0x${pa.toString(16)}`);
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

  /** Closes the file (the VM owns its removal). */
  async close(): Promise<void> {
    await this.fh?.close().catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
