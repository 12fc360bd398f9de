// The memory a model uses but does not own (`--pt model`: the guest's RAM, through guest-ram-sync.ts).
// The model's output engine reads and writes it synchronously; allocation and free are the
// owner's, reached through the guest side of the routing target (routing-target.ts), never here.
import { AllocationError, PtError } from '../../driver/base/errors.js';
import type { PhysRegion, ReadOpts } from '../../driver/target.js';
import type { OwnedMemory } from '../sim/memory-oracle.js';
import type { SyncPhysMemory } from '../sim/output/sync-phys.js';
import type { SimPhysMemory } from '../sim/sim-target.js';

/**
 * A SimPhysMemory over `mem`: synchronous and async accesses go to `mem`; alloc and free throw
 * (module buffers are the guest's), and close leaves `mem` alone (its owner closes it).
 */
export class BorrowedMemory implements SimPhysMemory {
  readonly maxContiguous = 0;
  readonly allocatedBytes = 0;

  constructor(private readonly mem: SyncPhysMemory & OwnedMemory) {}

  /** The owner's buffers (the guest module's) are the driver's memory. */
  owns(addr: bigint, length: number): boolean {
    return this.mem.owns(addr, length);
  }

  readNow(addr: bigint, length: number, into?: Uint8Array): Uint8Array {
    return this.mem.readNow(addr, length, into);
  }

  writeNow(addr: bigint, data: Uint8Array): void {
    this.mem.writeNow(addr, data);
  }

  async read(addr: bigint, length: number, opts?: ReadOpts): Promise<Uint8Array> {
    return this.mem.readNow(addr, length, opts?.into);
  }

  async write(addr: bigint, data: Uint8Array): Promise<void> {
    this.mem.writeNow(addr, data);
  }

  async alloc(size: number, align: number): Promise<PhysRegion> {
    throw new AllocationError(size, align, 0, 'the model\'s memory is the guest\'s: allocate through the guest (module buffers)');
  }

  async free(region: PhysRegion): Promise<void> {
    throw new PtError('bad_address', `0x${region.base.toString(16)} was not allocated by the model (its memory is the guest's)`);
  }

  close(): void {
    // The owner (the guest) closes its memory.
  }
}
