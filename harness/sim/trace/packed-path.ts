// A recorded path of near branches in packed form, for PacketGenerator.replayPath:
// the execution engine (exec/engine.ts) hands the generator the workload's
// path and per-site tables instead of one method call per branch, so the hot
// loop (jcc → one TNT bit, compressed RET → one bit, direct branch → nothing)
// runs without calls. Offsets are from `base`; everything is a typed array.

/** Branch classes of `siteClass` (one per IR row that is a branch). */
export const B_JCC = 0, B_JMP = 1, B_CALL = 2, B_CALL_ZERO = 3, B_JMP_IND = 4, B_CALL_IND = 5, B_RET = 6, B_OTHER = 7;

/** The executed path of a workload and the static facts of its branch sites. */
export interface PackedPath {
  /** IP of offset 0. */
  readonly base: number;
  /** Per retired branch: its `to` offset (bits `offsetMask`), `takenMask` for a taken Jcc; −1 for a branch to leave the workload. */
  readonly path: Int32Array;
  readonly offsetMask: number;
  readonly takenMask: number;
  /** Per landing offset: the site (row) of the next branch executed from there. */
  readonly siteAt: Int32Array;
  /**
   * Per landing offset `o`, the same facts interleaved for the hot loop: [2o] = insnsAt · 8 +
   * siteClass of that site, [2o + 1] = its siteNext.
   */
  readonly landing: Int32Array;
  /** Per landing offset: non-branch instructions retired before that branch (the `instructions(n)` count). */
  readonly insnsAt: Int32Array;
  /** Per site: B_* class. */
  readonly siteClass: Uint8Array;
  /** Per site: offset of the branch instruction. */
  readonly siteOff: Int32Array;
  /** Per site: offset of the instruction after it (Next IP). */
  readonly siteNext: Int32Array;
  /** Per site: the taken target offset of a direct branch (−1 otherwise). */
  readonly siteTarget: Int32Array;
}
