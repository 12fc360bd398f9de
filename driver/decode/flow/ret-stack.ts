// The decoder's return stack for RET compression (docs/sdm/packets.md §7,
// decoder side): 64 entries, the oldest drops off the bottom when full.
// Entries are (image, offset) pairs; an offset may equal the image size
// (a CALL at the very end of an image), the walker normalises it on use.

/** Depth of the return stack (spec §7 step 1: "a stack of 64 return addresses"). */
export const RET_STACK_DEPTH = 64;

/** A 64-entry ring of return addresses. */
export class RetStack {
  private readonly img = new Int32Array(RET_STACK_DEPTH);
  private readonly off = new Float64Array(RET_STACK_DEPTH);
  private top = 0;
  /** Entries held (0..64). */
  count = 0;
  /** Image of the entry the last pop() returned. */
  poppedImg = 0;

  /** Pushes a Next IP; when full, the oldest entry is overwritten (spec §7 step 2). */
  push(img: number, off: number): void {
    this.top = (this.top + 1) & (RET_STACK_DEPTH - 1);
    this.img[this.top] = img;
    this.off[this.top] = off;
    if (this.count < RET_STACK_DEPTH) this.count++;
  }

  /** Pops the top entry (count must be > 0): returns its offset, its image goes to `poppedImg`. */
  pop(): number {
    const t = this.top;
    this.top = (t - 1) & (RET_STACK_DEPTH - 1);
    this.count--;
    this.poppedImg = this.img[t]!;
    return this.off[t]!;
  }

  /** Empties the stack (spec §7 step 4: at PSB, OVF and TIP.PGE). */
  clear(): void {
    this.count = 0;
  }
}
