// The shared guest-RAM file (QEMU's memory-backend-file, docs/qemu.md §4) as the host touches it:
// mapped into this process through the ram-map addon, so a read is one memcpy out of the page
// cache; or, when the addon is unavailable (or PTLAB_RAM_ACCESS=pread), pread/pwrite on the file.
// Offsets are file offsets (guest-ram.ts maps guest physical addresses to them). Synchronous:
// both paths are memory copies, and the model's output engine needs them without a promise.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { PtError } from '../../driver/base/errors.js';
import { loadRamMap, type RamMapAddon } from './ram-map-addon.js';
import { TargetError } from '../link/errors.js';

/** How the host reaches guest RAM. */
export type RamAccess = 'mmap' | 'pread';

/** Synchronous access to the RAM file. */
export interface RamFile {
  readonly access: RamAccess;
  /** Bytes of the file the host may touch. */
  readonly size: number;
  /** Why the file is read with pread rather than mapped (access 'pread' only). */
  readonly unmappedReason: string | undefined;
  /** Copies [offset, offset + into.length) into `into`. */
  readInto(offset: number, into: Uint8Array): void;
  /** Copies `data` to [offset, offset + data.length). */
  write(offset: number, data: Uint8Array): void;
  /** Faults the range in now, so the first access costs no page faults (no-op for pread). */
  populate(offset: number, length: number): void;
  /** Lets go of the file; later accesses throw PtError('bad_state'). Idempotent. */
  close(): void;
}

/** The largest window mapped as one ArrayBuffer (Node 20's typed arrays stop at 4 GiB). */
export const DEFAULT_WINDOW_BYTES = 1 << 30;

export interface RamFileOptions {
  /** 'auto' (default: PTLAB_RAM_ACCESS, else mmap when the addon loads, else pread). */
  readonly access?: RamAccess | 'auto';
  /** Window size for the mapped file; tests use small ones to cross window edges. */
  readonly windowBytes?: number;
}

/** The access $PTLAB_RAM_ACCESS asks for, checked. */
function accessFromEnv(): RamAccess | 'auto' {
  const v = process.env['PTLAB_RAM_ACCESS'];
  if (v === undefined || v === '' || v === 'auto') return 'auto';
  if (v === 'mmap' || v === 'pread') return v;
  throw new PtError('bad_config', `PTLAB_RAM_ACCESS=${v}: expected mmap, pread or auto`);
}

/**
 * Opens `path` read-write. Its size is the file's, at most `limit` bytes (QEMU sizes the file to
 * the guest's RAM; nothing past the end of the file is ever mapped, so no access can SIGBUS).
 * `access: 'mmap'` throws when the addon is unavailable; 'auto' falls back to pread with the reason.
 */
export async function openRamFile(path: string, limit: number, opts: RamFileOptions = {}): Promise<RamFile> {
  const access = opts.access === undefined || opts.access === 'auto' ? accessFromEnv() : opts.access;
  const loaded = access === 'pread' ? { unavailable: 'pread was asked for (PTLAB_RAM_ACCESS or options)' } : await loadRamMap();
  if (access === 'mmap' && 'unavailable' in loaded) {
    throw new TargetError('memory', 'io', `guest RAM cannot be mapped: ${loaded.unavailable}`);
  }
  const fd = openSync(path, 'r+');
  const size = Math.min(fstatSync(fd).size, limit);
  if ('unavailable' in loaded) return new PreadRamFile(fd, size, loaded.unavailable);
  try {
    const mapped = MappedRamFile.map(loaded.addon, fd, size, opts.windowBytes ?? DEFAULT_WINDOW_BYTES);
    closeSync(fd); // a mapping outlives its descriptor
    return mapped;
  } catch (e) {
    if (access === 'mmap') {
      closeSync(fd);
      throw e;
    }
    return new PreadRamFile(fd, size, (e as Error).message); // the same descriptor serves the fallback
  }
}

/** Throws a typed error (never a RangeError) for a closed file or a range outside it. */
function checkRange(file: RamFile, offset: number, length: number, closed: boolean): void {
  if (closed) throw new PtError('bad_state', 'guest RAM: the file is closed (target disposed)');
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > file.size) {
    throw new PtError('bad_address', `guest RAM file offset 0x${offset.toString(16)} (+${length}) lies outside its ${file.size} bytes`);
  }
}

/** The file mapped in windows of at most `windowBytes`; a range crossing a window edge is copied in pieces. */
class MappedRamFile implements RamFile {
  readonly access = 'mmap';
  readonly unmappedReason = undefined;
  private windows: Uint8Array<ArrayBuffer>[] | undefined;

  private constructor(private readonly addon: RamMapAddon, readonly size: number, private readonly windowBytes: number, windows: Uint8Array<ArrayBuffer>[]) {
    this.windows = windows;
  }

  static map(addon: RamMapAddon, fd: number, size: number, windowBytes: number): MappedRamFile {
    if (!Number.isSafeInteger(windowBytes) || windowBytes <= 0 || windowBytes % 4096 !== 0) {
      throw new PtError('bad_config', `window size ${windowBytes} must be a positive multiple of 4096`);
    }
    const windows: Uint8Array<ArrayBuffer>[] = [];
    try {
      for (let at = 0; at < size; at += windowBytes) windows.push(new Uint8Array(addon.map(fd, at, Math.min(windowBytes, size - at))));
    } catch (e) {
      for (const w of windows) addon.release(w.buffer);
      throw new TargetError('memory', 'io', `mapping guest RAM failed: ${(e as Error).message}`, {}, { cause: e });
    }
    return new MappedRamFile(addon, size, windowBytes, windows);
  }

  readInto(offset: number, into: Uint8Array): void {
    this.pieces(offset, into.length, (w, from, to, at) => into.set(w.subarray(from, to), at));
  }

  write(offset: number, data: Uint8Array): void {
    this.pieces(offset, data.length, (w, from, to, at) => w.set(data.subarray(at, at + (to - from)), from));
  }

  populate(offset: number, length: number): void {
    this.pieces(offset, length, (w, from, to) => this.addon.populate(w.buffer, from, to - from));
  }

  close(): void {
    for (const w of this.windows ?? []) this.addon.release(w.buffer);
    this.windows = undefined;
  }

  /** Calls `fn(window, from, to, at)` for each window piece of [offset, offset+length); `at` counts from `offset`. */
  private pieces(offset: number, length: number, fn: (w: Uint8Array<ArrayBuffer>, from: number, to: number, at: number) => void): void {
    checkRange(this, offset, length, this.windows === undefined);
    const windows = this.windows!;
    for (let at = 0; at < length;) {
      const pos = offset + at;
      const w = windows[Math.floor(pos / this.windowBytes)]!;
      const from = pos % this.windowBytes;
      const n = Math.min(length - at, w.length - from);
      fn(w, from, from + n, at);
      at += n;
    }
  }
}

/** pread/pwrite on the open file (the fallback: about ten times slower than mmap). */
class PreadRamFile implements RamFile {
  readonly access = 'pread';
  private fd: number | undefined;

  constructor(fd: number, readonly size: number, readonly unmappedReason: string) {
    this.fd = fd;
  }

  readInto(offset: number, into: Uint8Array): void {
    checkRange(this, offset, into.length, this.fd === undefined);
    for (let done = 0; done < into.length;) {
      const n = readSync(this.fd!, into, done, into.length - done, offset + done);
      if (n <= 0) throw new TargetError('memory', 'io', `short read of guest RAM at file offset 0x${offset.toString(16)}: ${done} of ${into.length} bytes`);
      done += n;
    }
  }

  write(offset: number, data: Uint8Array): void {
    checkRange(this, offset, data.length, this.fd === undefined);
    for (let done = 0; done < data.length;) done += writeSync(this.fd!, data, done, data.length - done, offset + done);
  }

  populate(offset: number, length: number): void {
    checkRange(this, offset, length, this.fd === undefined);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
