// The CPU side of RET compression (docs/sdm/packets.md §7): a 64-entry stack of
// near-CALL Next IPs. When full, the oldest entry drops off the bottom. The
// model compresses a RET only when the stack is not empty and the popped
// entry equals the RET's target; it clears the stack at PSB, at OVF and
// whenever PacketEn changes, so it never compresses across them
// ([SDM16] "will never compress a RET across a PSB, a buffer overflow, or
// scenario where PacketEn=0").

/** Depth of the return stack (docs/sdm/packets.md §7, decoder step 1). */
export const RET_STACK_DEPTH = 64;

/** A fixed ring of RET_STACK_DEPTH return addresses; no allocation after construction. */
export class RetStack {
  // Public for PacketGenerator.replayPath, which keeps `top` and `count` in locals over a stretch
  // of branches and writes them back; everyone else uses the methods.
  /** The ring of return addresses. */
  readonly slots = new Float64Array(RET_STACK_DEPTH);
  /** Index of the next free slot (mod depth). */
  top = 0;
  /** Live entries, 0..RET_STACK_DEPTH. */
  count = 0;

  /** Live entries. */
  get depth(): number { return this.count; }

  /** Pushes a near CALL's Next IP; the oldest entry is lost when the stack is full. */
  push(nextIp: number): void {
    this.slots[this.top] = nextIp;
    this.top = (this.top + 1) & (RET_STACK_DEPTH - 1);
    if (this.count < RET_STACK_DEPTH) this.count++;
  }

  /**
   * Pops for a near RET (the SDM pops for every near RET, compressed or not: §7 step 3) and
   * says whether the RET may be compressed: the stack was not empty and the entry equals `target`.
   */
  popMatches(target: number): boolean {
    if (this.count === 0) return false;
    this.count--;
    this.top = (this.top + RET_STACK_DEPTH - 1) & (RET_STACK_DEPTH - 1);
    return this.slots[this.top] === target;
  }

  /** Empties the stack (PSB, OVF, PacketEn change). */
  clear(): void {
    this.count = 0;
  }
}
