// Guest RAM as the model's output engine needs it (harness/sim/output/sync-phys.ts): synchronous
// reads and writes of the shared memory-backend file (ram-file.ts: mapped, or pread/pwrite; file
// offset = guest physical address below q35's split: guest-ram.ts `physToFileOffset`). The model
// reads ToPA tables from and writes trace into the REAL guest RAM, where the guest sees it at once.
import { PtError } from '../../../driver/errors.js';
import { readDestination } from '../../../driver/read-into.js';
import type { SyncPhysMemory } from '../../sim/output/sync-phys.js';
import { physToFileOffset, type RamLayout } from '../guest-ram.js';
import type { RamFile } from '../ram-file.js';

/** True when the model may touch [addr, addr+length): the qemu target allows module buffers only. */
export type PhysGate = (addr: bigint, length: number) => boolean;

/** A SyncPhysMemory over the guest-RAM file; outside the gate it throws PtError('bad_address'). */
export class GuestRamSync implements SyncPhysMemory {
  private file: RamFile | undefined;

  /** Uses `file` (GuestRam.ramFile, which its owner closes). */
  constructor(file: RamFile, private readonly layout: RamLayout, private readonly gate: PhysGate) {
    this.file = file;
  }

  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array {
    const { file, off } = this.locate(addr, length);
    const out = readDestination(length, into);
    file.readInto(off, out);
    return out;
  }

  writeNow(addr: bigint, data: Uint8Array): void {
    const { file, off } = this.locate(addr, data.length);
    file.write(off, data);
  }

  /** Stops using the file (before the VM removes it); later accesses fail with bad_address. */
  close(): void {
    this.file = undefined;
  }

  private locate(addr: bigint, length: number): { file: RamFile; off: number } {
    const where = `0x${addr.toString(16)} (+${length})`;
    if (this.file === undefined) throw new PtError('bad_address', `guest RAM at ${where}: the file is closed (target disposed)`);
    if (!Number.isSafeInteger(length) || length < 0 || !this.gate(addr, length)) {
      throw new PtError('bad_address', `physical access ${where} is outside the module buffers the model may use`);
    }
    const off = physToFileOffset(addr, length, this.layout);
    if (off === undefined) throw new PtError('bad_address', `physical access ${where} is not guest RAM`);
    return { file: this.file, off: Number(off) };
  }
}
