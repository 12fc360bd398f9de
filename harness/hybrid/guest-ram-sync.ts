// Guest RAM as the model's output engine needs it (harness/sim/output/sync-phys.ts): synchronous
// reads and writes of the shared memory-backend file (harness/qemu/ram-file.ts: mapped, or
// pread/pwrite; file offset = guest physical address below q35's split: guest-ram.ts
// `physToFileOffset`), restricted to the module's buffers. The model reads ToPA tables from and
// writes trace into the REAL guest RAM, where the guest sees it at once. The qemu target lends the
// file, its layout and the module-buffer check (QemuTarget.guestRamView); nothing here is its.
import { PtError } from '../../driver/base/errors.js';
import { readDestination } from '../../driver/read-into.js';
import { physToFileOffset } from '../qemu/guest-ram.js';
import type { GuestRamView } from '../qemu/qemu-target.js';
import type { SyncPhysMemory } from '../sim/output/sync-phys.js';

/** A SyncPhysMemory over guest RAM; outside the module buffers it throws PtError('bad_address'). */
export class GuestRamSync implements SyncPhysMemory {
  private view: GuestRamView | undefined;

  /** Uses `view.file`, which the VM closes (never this). */
  constructor(view: GuestRamView) {
    this.view = view;
  }

  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array {
    const { view, off } = this.locate(addr, length);
    const out = readDestination(length, into);
    view.file.readInto(off, out);
    return out;
  }

  writeNow(addr: bigint, data: Uint8Array): void {
    const { view, off } = this.locate(addr, data.length);
    view.file.write(off, data);
  }

  /** True when [addr, addr+length) lies in one module buffer (the driver's memory: the memory oracle). */
  owns(addr: bigint, length: number): boolean {
    const view = this.view;
    return view !== undefined && Number.isSafeInteger(length) && length >= 0 && view.isModuleBuffer(addr, length);
  }

  /** Stops using the file; later accesses fail with bad_address. Idempotent. */
  close(): void {
    this.view = undefined;
  }

  private locate(addr: bigint, length: number): { view: GuestRamView; off: number } {
    const where = `0x${addr.toString(16)} (+${length})`;
    const view = this.view;
    if (view === undefined) throw new PtError('bad_address', `guest RAM at ${where}: the model no longer borrows it (closed)`);
    if (!Number.isSafeInteger(length) || length < 0 || !view.isModuleBuffer(addr, length)) {
      throw new PtError('bad_address', `physical access ${where} is outside the module buffers the model may use`);
    }
    const off = physToFileOffset(addr, length, view.layout);
    if (off === undefined) throw new PtError('bad_address', `physical access ${where} is not guest RAM`);
    return { view, off: Number(off) };
  }
}
