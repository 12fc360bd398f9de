// Another agent already tracing on a CPU of the model (the `foreignOwner` setting, knob
// `foreign-owner`): perf's intel_pt, a hypervisor, a second tool, a run that crashed. It enabled
// ToPA output into its own table and 64 KiB ring before the driver came, in memory that is its
// own — outside what the driver allocates from, and out of the driver's reach (Target.phys does
// not serve it), as a perf AUX buffer is on a lab machine. The CPU writes into it like any output,
// and the model can read it back here, so a scenario can see that the agent's trace went on
// untouched (harness/scenarios/foreign-owner.ts).
import { IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from '../../driver/hw/msrs.js';
import type { MsrFile } from './msr-file.js';
import type { SyncPhysMemory } from './output/sync-phys.js';

/** Where the agent's table and ring live: in the low megabyte the driver's allocator never hands out. */
export const FOREIGN_TABLE = 0x8_0000n;
export const FOREIGN_RING = 0x9_0000n;
const RING_SIZE = 64 * 1024;
const SPAN_START = FOREIGN_TABLE, SPAN_END = FOREIGN_RING + BigInt(RING_SIZE);
/** ToPA entry size encoding 4 (4 KiB << 4 = 64 KiB), END bit 0 (docs/sdm/output.md §4.2). */
const SIZE_64K = 4n << 6n, END = 1n;

/** The agent's CTL: ToPA output of user-mode branches (what `perf record -e intel_pt//u` programs). */
export const FOREIGN_CTL = IA32_RTIT_CTL.encode({ TraceEn: true, ToPA: true, User: true, BranchEn: true });

/** The foreign agent's memory: its ToPA table (entry 0 the ring, entry 1 END back) and its ring. */
export class ForeignMemory {
  private readonly bytes = new Uint8Array(Number(SPAN_END - SPAN_START));

  constructor() {
    const dv = new DataView(this.bytes.buffer);
    dv.setBigUint64(0, FOREIGN_RING | SIZE_64K, true);
    dv.setBigUint64(8, FOREIGN_TABLE | END, true);
  }

  /** True when [addr, addr+length) lies in the agent's memory. */
  holds(addr: bigint, length: number): boolean {
    return addr >= SPAN_START && addr + BigInt(length) <= SPAN_END;
  }

  /** True when [addr, addr+length) overlaps the agent's memory at all. */
  touches(addr: bigint, length: number): boolean {
    return addr < SPAN_END && addr + BigInt(length) > SPAN_START;
  }

  /** The ring as the CPU wrote it. */
  ring(): Uint8Array {
    const off = Number(FOREIGN_RING - SPAN_START);
    return this.bytes.slice(off, off + RING_SIZE);
  }

  /** `inner` with the agent's memory laid over it: what the CPU's output engines read and write. */
  overlay<M extends SyncPhysMemory>(inner: M): SyncPhysMemory {
    const at = (addr: bigint): number => Number(addr - SPAN_START);
    return {
      readNow: (addr, length, into) => {
        if (!this.holds(addr, length)) return inner.readNow(addr, length, into);
        const out = into ?? new Uint8Array(length);
        out.set(this.bytes.subarray(at(addr), at(addr) + length));
        return into ? out.subarray(0, length) : out;
      },
      writeNow: (addr, data) => {
        if (this.holds(addr, data.length)) this.bytes.set(data, at(addr));
        else inner.writeNow(addr, data);
      },
    };
  }

  /** The agent enables tracing on `file` as it would: its table and ring, then CTL with TraceEn=1. */
  start(file: MsrFile): void {
    file.store(IA32_RTIT_OUTPUT_BASE.address, FOREIGN_TABLE);
    file.store(IA32_RTIT_OUTPUT_MASK_PTRS.address, 0x7fn);
    file.store(IA32_RTIT_CTL.address, FOREIGN_CTL);
  }

  /** True while `file` still traces with the agent's configuration (the driver has not taken it over). */
  static stillOwns(file: MsrFile): boolean {
    return file.traceEn && file.ctl === FOREIGN_CTL && file.outputBase === FOREIGN_TABLE;
  }
}
