// Model knobs for negative controls: each one breaks one SDM
// behaviour of the reference model, so a scenario that checks that behaviour
// must turn its verdict to "fail". A knob either contributes SimTarget options
// or is wired into a freshly created SimTarget through its model-only API
// (unit(), output(), trace()); none of them is ever on by default.
import { PtError } from '../../../driver/base/errors.js';
import { fieldMask } from '../../../driver/hw/field.js';
import { IA32_RTIT_CTL } from '../../../driver/hw/msrs.js';
import type { SimTarget, SimTargetOptions } from '../sim-target.js';
import { didYouMean } from '../../text/nearest.js';

/** The knobs the model honours. */
export type KnobName =
  /** The CPU never delivers a ToPA PMI through the LVT (GLOBAL_STATUS[55] is still set). */
  | 'no-topa-pmi'
  /** WRMSR never raises #GP: a faulting write is silently ignored. */
  | 'swallow-gp'
  /** Operational errors (docs/sdm/output.md §3.2, §4.7) do not set STATUS.Error. */
  | 'no-operational-error'
  /** A full ToPA STOP region does not set STATUS.Stopped (docs/sdm/output.md §4.4). */
  | 'no-topa-stop-status'
  /** An END entry is followed to the start of the table it sits in, not to its Base (docs/sdm/output.md §4.3). */
  | 'wrong-topa-end'
  /** The ToPA entry cache survives TraceEn 0→1: entries edited while tracing was off are not re-read. */
  | 'topa-cache-stale'
  /** PendTopaPMI is never set and never re-raised (docs/sdm/output.md §7.4). */
  | 'no-pmi-preservation'
  /** The PMI arrives after 64 KiB of skid instead of the configured skid (docs/sdm/output.md §4.5). */
  | 'huge-pmi-skid'
  /** At TraceEn 1→0 the output pointers are not written back to the MSRs (docs/sdm/msrs.md §3.4). */
  | 'stale-pointers'
  /** XRSTORS restores everything but TraceEn (docs/sdm/xsave.md). */
  | 'xrstors-drops-traceen'
  /** XRSTORS loads CTL first, then the other eight MSRs (docs/sdm/xsave.md §3 step 5: CTL is loaded last). */
  | 'xrstors-ctl-first'
  /** XRSTORS loads CTL only; the other eight MSRs keep what they held. */
  | 'xrstors-only-ctl'
  /** The internal buffer never overflows (no OVF, no drops). */
  | 'no-overflow'
  /** The packet generator ignores CTL.CR3Filter. */
  | 'ignore-cr3filter'
  /** The packet generator ignores ADDRn_CFG (no IP filter, no TraceStop). */
  | 'ignore-addr-cfg'
  /** The packet generator ignores every filter: CR3Filter and ADDRn_CFG (it traces whatever runs). */
  | 'ignore-filters'
  /** The packet generator ignores CTL.DisRETC. */
  | 'ignore-disretc'
  /** The packet generator ignores CTL.BranchEn=0 (emits branches anyway). */
  | 'force-branchen'
  /** The packet generator traces CPL 0 although CTL.OS=0. */
  | 'force-os'
  /** The packet generator uses PSBFreq + 3. */
  | 'wrong-psbfreq'
  /** The packet generator ignores CTL.TSCEn and CTL.MTCEn. */
  | 'ignore-timing'
  /** The packet generator ignores CTL.PTWEn (no PTW packets). */
  | 'ignore-ptwen'
  /** The packet generator ignores CTL.DisTNT (TNT packets as usual). */
  | 'ignore-distnt'
  /** The PMI's top half reports GLOBAL_STATUS[55] acknowledged without acknowledging it. */
  | 'top-half-skips-ack'
  /** The packet generator ignores CTL.InjectPsbPmiOnEnable: a PSB owed at TraceEn 1→0 is not kept in STATUS.PendPSB (docs/sdm/output.md §7.4). */
  | 'no-psb-preservation'
  /** RDMSR of IA32_RTIT_CTL reads TraceEn as 0 while tracing (docs/sdm/msrs.md §3.1: it reads back as written). */
  | 'ctl-hides-traceen'
  /** A WRMSR that clears TraceEn does not take effect: tracing goes on (docs/sdm/msrs.md §3.4). */
  | 'traceen-sticks'
  /** Another agent already traces on CPU 0 when the run starts (harness/sim/foreign-owner.ts): every driver run must refuse. */
  | 'foreign-owner'
  /** With a handler latency (--realism lab), the PMI's top half does not freeze the traced task: it runs on while the handler works. */
  | 'top-half-no-freeze';

/** One knob: what it breaks, and how. */
interface KnobDef {
  readonly summary: string;
  /** SimTarget options the knob needs (merged over the run's options). */
  readonly options?: (o: SimTargetOptions) => Partial<SimTargetOptions>;
  /** Wiring into a created target (CPU 0 .. n−1). */
  readonly apply?: (sim: SimTarget, cpu: number) => void;
}

// IA32_RTIT_CTL fields by their SDM names, from the field table (docs/sdm/msrs.md §3.1).
const CTL = IA32_RTIT_CTL;
const ADDR_CFG = CTL.encode({ ADDR0_CFG: 0xf, ADDR1_CFG: 0xf, ADDR2_CFG: 0xf, ADDR3_CFG: 0xf });
const PSBFREQ = fieldMask(CTL.fields.PSBFreq);

/** The generator sees CTL as `f(ctl)` at every TraceEn 0→1; the MSR file keeps the real value. */
function generatorCtl(f: (ctl: bigint) => bigint): KnobDef['apply'] {
  return (sim, cpu) => {
    const file = sim.unit(cpu);
    const hooks = file.trace;
    if (!hooks) return;
    const enabled = hooks.enabled.bind(hooks);
    hooks.enabled = (mf) => {
      const real = mf.ctl;
      mf.ctl = f(real);
      try { enabled(mf); } finally { mf.ctl = real; }
    };
  };
}

/** The PMI skid of the knob huge-pmi-skid, in bytes (result.json's simPmiSkid figure reads it from the options below). */
const HUGE_PMI_SKID = 64 * 1024;

/** Every knob: what it breaks and how it is wired. */
export const KNOBS: Readonly<Record<KnobName, KnobDef>> = {
  'no-topa-pmi': {
    summary: 'the CPU never delivers the ToPA PMI',
    apply: (sim, cpu) => { sim.unit(cpu).onPmi = () => undefined; },
  },
  'swallow-gp': {
    summary: 'WRMSR never raises #GP (a faulting write is ignored)',
    apply: (sim, cpu) => {
      const file = sim.unit(cpu);
      const write = file.write.bind(file);
      file.write = (msr, value) => { write(msr, value); return undefined; };
    },
  },
  'no-operational-error': {
    summary: 'operational errors do not set STATUS.Error',
    apply: (sim, cpu) => { sim.unit(cpu).operationalError = () => undefined; },
  },
  'no-topa-stop-status': {
    summary: 'a full STOP region does not set STATUS.Stopped',
    apply: (sim, cpu) => { sim.unit(cpu).topaStop = () => undefined; },
  },
  'wrong-topa-end': {
    summary: 'END is followed to the start of its own table, not to its Base',
    apply: (sim, cpu) => {
      // The ToPA engine reads entries through its memory port: rewrite the Base of END entries there.
      const topa = sim.output(cpu).topa as unknown as { phys: { readNow(a: bigint, n: number): Uint8Array; writeNow(a: bigint, d: Uint8Array): void } };
      const phys = topa.phys;
      topa.phys = {
        writeNow: (a, d) => phys.writeNow(a, d),
        readNow: (a, n) => {
          const b = phys.readNow(a, n);
          if (n !== 8 || (b[0]! & 1) === 0) return b;
          const dv = new DataView(b.buffer.slice(b.byteOffset, b.byteOffset + 8));
          const e = dv.getBigUint64(0, true);
          dv.setBigUint64(0, (e & 0xfffn) | (a & ~0xfffn), true);
          return new Uint8Array(dv.buffer);
        },
      };
    },
  },
  'topa-cache-stale': {
    summary: 'the ToPA entry cache is kept across TraceEn 0→1 (edits are never re-read)',
    apply: (sim, cpu) => {
      const topa = sim.output(cpu).topa as unknown as { cache?: Map<bigint, bigint>; enable(m: unknown): void };
      const enable = topa.enable.bind(topa);
      let kept: Map<bigint, bigint> | undefined;
      topa.enable = (m) => {
        enable(m);
        if (kept && topa.cache) for (const [a, e] of kept) topa.cache.set(a, e); // the old entries win
        kept = topa.cache;
      };
    },
  },
  'no-pmi-preservation': {
    summary: 'PendTopaPMI is never set, so no PMI is preserved',
    apply: (sim, cpu) => { sim.unit(cpu).markPendTopaPmi = () => undefined; },
  },
  'huge-pmi-skid': {
    summary: 'the ToPA PMI comes 64 KiB after the INT region filled',
    options: (o) => ({ topa: { ...o.topa, pmiSkid: HUGE_PMI_SKID } }),
  },
  'stale-pointers': {
    summary: 'TraceEn 1→0 does not write the output pointers back',
    apply: (sim, cpu) => {
      const file = sim.unit(cpu);
      const out = file.output;
      if (!out) return;
      const disable = out.disable.bind(out);
      out.disable = () => { disable(); return { outputBase: file.outputBase, maskPtrs: file.maskPtrs }; };
    },
  },
  'xrstors-drops-traceen': {
    summary: 'XRSTORS restores every PT MSR but leaves TraceEn=0',
    apply: (sim, cpu) => {
      const xrstors = sim.xrstors.bind(sim);
      sim.xrstors = async (c, area, rfbm, opts) => {
        await xrstors(c, area, rfbm, opts);
        if (c !== cpu) return;
        const file = sim.unit(c);
        if (file.traceEn) file.store(0x570, file.ctl & ~1n);
      };
    },
  },
  'xrstors-ctl-first': {
    summary: 'XRSTORS loads CTL first (tracing starts on the old pointers), then the rest',
    apply: (sim, cpu) => { sim.xrstorsQuirk[cpu] = 'ctl-first'; },
  },
  'xrstors-only-ctl': {
    summary: 'XRSTORS loads CTL only',
    apply: (sim, cpu) => { sim.xrstorsQuirk[cpu] = 'only-ctl'; },
  },
  'no-overflow': {
    summary: 'the internal buffer never overflows',
    options: (o) => ({ trace: { ...o.trace, buffer: undefined } }),
  },
  'ignore-cr3filter': { summary: 'the generator ignores CR3Filter', apply: generatorCtl((c) => c & ~CTL.encode({ CR3Filter: true })) },
  'ignore-addr-cfg': { summary: 'the generator ignores ADDRn_CFG', apply: generatorCtl((c) => c & ~ADDR_CFG) },
  'ignore-filters': { summary: 'the generator ignores CR3Filter and ADDRn_CFG: it traces whatever runs', apply: generatorCtl((c) => c & ~ADDR_CFG & ~CTL.encode({ CR3Filter: true })) },
  'ignore-disretc': { summary: 'the generator ignores DisRETC', apply: generatorCtl((c) => c & ~CTL.encode({ DisRETC: true })) },
  'force-branchen': { summary: 'the generator emits branches although BranchEn=0', apply: generatorCtl((c) => c | CTL.encode({ BranchEn: true })) },
  'force-os': { summary: 'the generator traces CPL 0 although OS=0', apply: generatorCtl((c) => c | CTL.encode({ OS: true })) },
  'wrong-psbfreq': {
    summary: 'the generator uses PSBFreq + 3',
    apply: generatorCtl((c) => (c & ~PSBFREQ) | CTL.encode({ PSBFreq: (CTL.decode(c).PSBFreq + 3) & 0xf })),
  },
  'ignore-timing': { summary: 'the generator ignores TSCEn and MTCEn', apply: generatorCtl((c) => c & ~CTL.encode({ TSCEn: true, MTCEn: true })) },
  'ignore-ptwen': { summary: 'the generator ignores PTWEn', apply: generatorCtl((c) => c & ~CTL.encode({ PTWEn: true })) },
  'ignore-distnt': { summary: 'the generator ignores DisTNT', apply: generatorCtl((c) => c & ~CTL.encode({ DisTNT: true })) },
  'top-half-skips-ack': {
    summary: 'the PMI top half says it acknowledged GLOBAL_STATUS[55] but did not',
    options: (o) => ({ topHalf: { ack: true, clearTraceEn: o.topHalf?.clearTraceEn ?? false, lieAboutAck: true } }),
  },
  'no-psb-preservation': { summary: 'the generator ignores InjectPsbPmiOnEnable (no PendPSB)', apply: generatorCtl((c) => c & ~CTL.encode({ InjectPsbPmiOnEnable: true })) },
  'ctl-hides-traceen': {
    summary: 'RDMSR IA32_RTIT_CTL reads TraceEn=0 while tracing',
    apply: (sim, cpu) => {
      const file = sim.unit(cpu);
      const read = file.read.bind(file);
      file.read = (msr) => {
        const r = read(msr);
        return msr === 0x570 && r.ok ? { ...r, value: r.value & ~1n } : r;
      };
    },
  },
  'foreign-owner': {
    summary: 'another agent already traces on CPU 0 (its own table and ring): the driver must refuse to program it',
    options: (o) => ({ foreignOwner: [...new Set([...(o.foreignOwner ?? []), 0])] }),
  },
  'top-half-no-freeze': {
    summary: 'the PMI top half does not freeze the traced task: with --realism lab it runs on while the remote handler works',
    options: (o) => (o.realism ? { realism: { ...o.realism, topHalfFreezes: false } } : {}),
  },
  'traceen-sticks': {
    summary: 'a WRMSR that clears TraceEn does not take effect (tracing goes on)',
    apply: (sim, cpu) => {
      const file = sim.unit(cpu);
      const write = file.write.bind(file);
      file.write = (msr, value) => (msr === 0x570 && file.traceEn && (value & 1n) === 0n ? undefined : write(msr, value));
    },
  },
};

/** Every knob name. */
export const KNOB_NAMES = Object.keys(KNOBS) as KnobName[];

/** Throws PtError('bad_config') unless `name` is a knob. */
export function knob(name: string): KnobName {
  if (!(name in KNOBS)) throw new PtError('bad_config', `unknown model knob '${name}'${didYouMean(name, KNOB_NAMES)} (knobs: ${KNOB_NAMES.join(', ')})`);
  return name as KnobName;
}

/** The SimTarget options with `knobs` applied on top of `o`. */
export function knobOptions(o: SimTargetOptions, knobs: readonly KnobName[]): SimTargetOptions {
  return knobs.reduce<SimTargetOptions>((acc, k) => ({ ...acc, ...KNOBS[k].options?.(acc) }), o);
}

/** Wires `knobs` into every CPU of a freshly created `sim`. */
export function applyKnobs(sim: SimTarget, knobs: readonly KnobName[], cpus = 1): void {
  for (const k of knobs) for (let cpu = 0; cpu < cpus; cpu++) KNOBS[k].apply?.(sim, cpu);
}
