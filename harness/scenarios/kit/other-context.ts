// Another context's PT configuration, loaded while a context is switched out
// by XSAVES (docs/sdm/xsave.md §2–§4). With one workload the MSRs would still hold
// the saved values when XRSTORS runs, so a restore that loads only CTL, or
// CTL before the rest, would go unseen. Here the MSRs get different values in
// between (an output table of the other context, other CR3 and address
// ranges), so after XRSTORS every component-8 MSR must read back as saved,
// and nothing may ever be written to the other context's output region
// (which is what tracing started by CTL before the pointers would do).
import { IA32_RTIT_ADDR_A, IA32_RTIT_ADDR_B, IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, IA32_RTIT_OUTPUT_BASE, IA32_RTIT_OUTPUT_MASK_PTRS } from '../../../driver/hw/msrs.js';
import { topaEntry } from '../../../driver/hw/topa.js';
import type { TraceSession } from '../../../driver/session.js';
import type { PhysRegion, TargetEvent } from '../../../driver/target.js';
import type { TranscriptLine } from '../../rundir/transcript-line.js';
import type { ScenarioContext } from './context.js';

/** The other context's values: never a value the traced context uses. */
const OTHER_CR3 = 0x7777_7000n, OTHER_ADDR = 0x7000_0000n;

/**
 * MSRs compared after XRSTORS, by SDM name and address. OUTPUT_MASK_PTRS and STATUS are left out:
 * the CPU updates them while tracing, and TraceEn is 1 again once XRSTORS has run.
 */
function compared(ctx: ScenarioContext): { name: string; msr: number }[] {
  const c = ctx.env.caps;
  const out = [{ name: 'IA32_RTIT_CTL', msr: IA32_RTIT_CTL.address }, { name: 'IA32_RTIT_OUTPUT_BASE', msr: IA32_RTIT_OUTPUT_BASE.address }];
  if (c.cr3Filtering) out.push({ name: 'IA32_RTIT_CR3_MATCH', msr: IA32_RTIT_CR3_MATCH.address });
  const ranges = c.ipFiltering ? Math.min(2, c.numAddressRanges) : 0; // component 8 holds ranges 0 and 1
  for (let n = 0; n < ranges; n++) {
    out.push({ name: `IA32_RTIT_ADDR${n}_A`, msr: IA32_RTIT_ADDR_A[n]!.address }, { name: `IA32_RTIT_ADDR${n}_B`, msr: IA32_RTIT_ADDR_B[n]!.address });
  }
  return out;
}

/**
 * ADDR2/ADDR3 A and B of the ranges the traced context uses: not in component 8 (docs/sdm/xsave.md
 * §1.1), so the driver switches them by hand around XSAVES/XRSTORS; the other context changes them.
 */
function handSwitched(ranges: number): { name: string; msr: number }[] {
  const out: { name: string; msr: number }[] = [];
  for (let n = 2; n < ranges; n++) {
    out.push({ name: `IA32_RTIT_ADDR${n}_A`, msr: IA32_RTIT_ADDR_A[n]!.address }, { name: `IA32_RTIT_ADDR${n}_B`, msr: IA32_RTIT_ADDR_B[n]!.address });
  }
  return out;
}

/** Switches through another context at every slice and checks each XRSTORS; `finish` adds the expectations. */
export class OtherContext {
  private table: PhysRegion | undefined;
  private region: PhysRegion | undefined;
  private restores = 0;
  private readonly mismatches: string[] = [];
  /** ADDR2/ADDR3 as the traced context had them before its first switch out. */
  private own: bigint[] | undefined;

  /** `ranges`: the address ranges the traced context's request configures (ADDR2/ADDR3 are checked when it has them). */
  constructor(private readonly ctx: ScenarioContext, private readonly ranges = 0) {}

  /** The intercept of ScenarioContext.trace: handles `slice` itself (out, other context, in, check). */
  readonly intercept = async (ev: TargetEvent, s: TraceSession): Promise<boolean> => {
    if (ev.kind !== 'slice') return false;
    this.own ??= await Promise.all(handSwitched(this.ranges).map((c) => this.ctx.target.rdmsr(0, c.msr)));
    await s.switchOut();
    await this.load();
    await s.switchIn();
    await this.check();
    return true;
  };

  /** The other context's configuration, written with TraceEn=0 (its own ToPA table: one region, END back). */
  private async load(): Promise<void> {
    const t = this.ctx.target;
    if (!this.table) {
      this.table = await t.phys.alloc(4096, 4096);
      this.region = await t.phys.alloc(4096, 4096);
      const e = new Uint8Array(16), dv = new DataView(e.buffer);
      dv.setBigUint64(0, topaEntry({ base: this.region.base, size: 4096 }), true);
      dv.setBigUint64(8, topaEntry({ base: this.table.base, end: true }), true);
      await t.phys.write(this.table.base, e, { content: 'topa-table' });
    }
    const ops = [
      { op: 'wrmsr' as const, msr: IA32_RTIT_CTL.address, value: IA32_RTIT_CTL.encode({ ToPA: true, User: true, BranchEn: true }) },
      { op: 'wrmsr' as const, msr: IA32_RTIT_OUTPUT_BASE.address, value: this.table.base },
      { op: 'wrmsr' as const, msr: IA32_RTIT_OUTPUT_MASK_PTRS.address, value: 0x7fn },
      ...[...compared(this.ctx), ...handSwitched(this.ranges)].filter((c) => c.name.startsWith('IA32_RTIT_CR3') || c.name.startsWith('IA32_RTIT_ADDR'))
        .map((c) => ({ op: 'wrmsr' as const, msr: c.msr, value: c.msr === IA32_RTIT_CR3_MATCH.address ? OTHER_CR3 : OTHER_ADDR + BigInt(c.msr & 0xf) * 0x1000n })),
    ];
    const res = await t.msrBatch(0, ops);
    const bad = res.find((r) => !r.ok);
    if (bad && !bad.ok) throw new Error(`loading the other context: ${bad.fault.reason}`);
    // Its writes are the other context's, not the driver's restore (order-rules.ts reads the lines before an XRSTORS).
    t.note?.(0, 'other context loaded');
  }

  /** Every compared MSR reads back as the last XRSTORS area holds it. */
  private async check(): Promise<void> {
    const lines = this.ctx.target.lines;
    let last: TranscriptLine | undefined;
    for (let i = lines.length - 1; i >= 0 && !last; i--) if (lines[i]!.op === 'xrstors') last = lines[i];
    if (!last?.area) { this.mismatches.push('no XRSTORS area in the transcript'); return; }
    this.restores++;
    for (const c of compared(this.ctx)) {
      const got = await this.ctx.target.rdmsr(0, c.msr);
      const want = BigInt(last.area[c.name] ?? '0x0');
      if (got !== want && this.mismatches.length < 5) this.mismatches.push(`${c.name} 0x${got.toString(16)}, saved 0x${want.toString(16)} (restore ${this.restores})`);
    }
    for (const [i, c] of handSwitched(this.ranges).entries()) {
      const got = await this.ctx.target.rdmsr(0, c.msr);
      if (got !== this.own![i] && this.mismatches.length < 5) this.mismatches.push(`${c.name} 0x${got.toString(16)}, the context's 0x${this.own![i]!.toString(16)} (restore ${this.restores}, switched by hand)`);
    }
  }

  /** Expectations: every restore brought back every compared MSR; the other context's region is untouched. */
  async finish(): Promise<void> {
    const ctx = this.ctx;
    ctx.expect('XRSTORS (and the driver, for ADDR2/ADDR3) brought back every MSR the other context had changed', this.restores > 0 && this.mismatches.length === 0,
      this.mismatches.length ? this.mismatches.join('; ') : `${this.restores} restores × ${[...compared(ctx), ...handSwitched(this.ranges)].map((c) => c.name).join(', ')}`);
    if (this.region) {
      const b = await ctx.target.phys.read(this.region.base, this.region.size);
      const used = b.findIndex((x) => x !== 0);
      ctx.expect('nothing was traced into the other context\'s output (CTL is loaded last)', used < 0, used < 0 ? 'its region is all zero' : `byte ${used} of its region was written`);
      await ctx.target.phys.free(this.region);
      await ctx.target.phys.free(this.table!);
    }
  }
}
