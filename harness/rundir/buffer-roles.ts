// A run's buffers by role: the n-th allocation of a transcript is `@bufn` on every target, so an
// address inside a buffer reads the same on two runs whose allocators placed the buffers at other
// physical addresses (normalize-transcript.ts; ptlab replay moves addresses by it).

/** A run's buffers in allocation order: the n-th allocation is `@bufn` on every target. */
export class BufferRoles {
  private readonly bufs: { readonly base: bigint; readonly size: bigint }[] = [];

  /** Records an allocation; returns its role number. */
  add(base: bigint, size: bigint): number {
    this.bufs.push({ base, size });
    return this.bufs.length - 1;
  }

  /** The role and offset of `addr`: the newest buffer holding it (a freed base may be handed out again). */
  find(addr: bigint): { readonly role: number; readonly off: bigint } | undefined {
    for (let i = this.bufs.length - 1; i >= 0; i--) {
      const b = this.bufs[i]!;
      if (addr >= b.base && addr < b.base + b.size) return { role: i, off: addr - b.base };
    }
    return undefined;
  }

  /** The buffer of role `role`, when it was allocated. */
  buffer(role: number): { readonly base: bigint; readonly size: bigint } | undefined {
    return this.bufs[role];
  }

  /** The base of role `role`, when it was allocated. */
  baseOf(role: number): bigint | undefined {
    return this.bufs[role]?.base;
  }

  /** `addr` as `@bufN` or `@bufN+0xOFF`, or its hex when no buffer holds it. */
  name(addr: bigint): string {
    const r = this.find(addr);
    return r === undefined ? `0x${addr.toString(16)}` : r.off === 0n ? `@buf${r.role}` : `@buf${r.role}+0x${r.off.toString(16)}`;
  }

  /** `s` with each hex number inside a buffer written by role. */
  names(s: string): string {
    return this.bufs.length === 0 ? s : s.replace(HEX, (h) => this.name(BigInt(h)));
  }
}

const HEX = /0x[0-9a-f]+/g;
