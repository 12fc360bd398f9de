// Guest RAM as the model's output engine needs it (harness/sim/output/sync-phys.ts): synchronous
// reads and writes, here with pread/pwrite on the shared memory-backend file (file offset =
// guest physical address below q35's split: guest-ram.ts `physToFileOffset`). The model reads
// ToPA tables from and writes trace into the REAL guest RAM, where the guest sees it at once.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { PtError } from '../../../driver/errors.js';
import type { SyncPhysMemory } from '../../sim/output/sync-phys.js';
import { physToFileOffset, type RamLayout } from '../guest-ram.js';

/** True when the model may touch [addr, addr+length): the qemu target allows module buffers only. */
export type PhysGate = (addr: bigint, length: number) => boolean;

/** A SyncPhysMemory over the guest-RAM file; outside the gate it throws PtError('bad_address'). */
export class GuestRamSync implements SyncPhysMemory {
  private fd: number | undefined;

  /** Opens `memPath` (QemuPaths.memPath) read-write. */
  constructor(memPath: string, private readonly layout: RamLayout, private readonly gate: PhysGate) {
    this.fd = openSync(memPath, 'r+');
  }

  readNow(addr: bigint, length: number): Uint8Array {
    const { fd, off } = this.locate(addr, length);
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, out, done, length - done, off + done);
      if (n <= 0) throw new PtError('bad_address', `short read of guest RAM at 0x${addr.toString(16)}: ${done} of ${length} bytes`);
      done += n;
    }
    return out;
  }

  writeNow(addr: bigint, data: Uint8Array): void {
    const { fd, off } = this.locate(addr, data.length);
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done, data.length - done, off + done);
  }

  /** Closes the file (before the VM removes it); later accesses fail with bad_address. */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private locate(addr: bigint, length: number): { fd: number; off: number } {
    const where = `0x${addr.toString(16)} (+${length})`;
    if (this.fd === undefined) throw new PtError('bad_address', `guest RAM at ${where}: the file is closed (target disposed)`);
    if (!Number.isSafeInteger(length) || length < 0 || !this.gate(addr, length)) {
      throw new PtError('bad_address', `physical access ${where} is outside the module buffers the model may use`);
    }
    const off = physToFileOffset(addr, length, this.layout);
    if (off === undefined) throw new PtError('bad_address', `physical access ${where} is not guest RAM`);
    return { fd: this.fd, off: Number(off) };
  }
}
