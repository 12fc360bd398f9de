// The Intel PT errata ptlab knows, as one table (docs/sdm/errata.md): which CPUs
// each applies to (by DisplayFamily/DisplayModel and, where it matters, stepping),
// where the fact comes from, and what it changes as a typed effect. The driver,
// the model and the scenarios read a CPU's errata from here instead of testing
// model numbers themselves.
import { PtError } from '../base/errors.js';
import { cpuidBitName, familyModelName, type CpuSignature, type PtCapFlag, type PtCaps } from './cpuid.js';
import type { Encodable } from './field.js';
import { IA32_RTIT_CTL } from './msrs.js';

/** CPUs named by DisplayFamily and DisplayModel, optionally limited to a stepping range. */
export interface CpuGroup {
  /** What the models are called, e.g. "Broadwell". */
  readonly name: string;
  readonly family: number;
  readonly models: readonly number[];
  /** Inclusive stepping range; absent: every stepping. */
  readonly steppings?: { readonly from: number; readonly to: number };
}

/** The `struct pt_errata` fields of libipt 2.0.5 (/usr/include/intel-pt.h). */
export type LibiptErratum = 'bdm70' | 'bdm64' | 'skd007' | 'skd022' | 'skd010' | 'skl014' | 'apl12' | 'apl11' | 'skl168' | 'skz84';

/** Where an erratum is written down. A row names at least one of these. */
export interface ErratumSource {
  /** Its ID in an Intel specification update, and the IDs of the same erratum in other updates. */
  readonly specUpdate?: { readonly id: string; readonly sameAs?: readonly string[] };
  /** The libipt `struct pt_errata` field that switches its workaround on. */
  readonly libipt?: LibiptErratum;
  /** Where Linux handles it (file and identifier). */
  readonly linux?: string;
  /** Where the SDM describes it. */
  readonly sdm?: string;
}

/** IA32_RTIT_CTL field values that together select the writes an erratum affects. */
export type CtlFields = Encodable<typeof IA32_RTIT_CTL.fields>;

/** What a packet-stream erratum does to the packets. */
export type PacketChange = 'extra' | 'missing' | 'corrupt';

/** What an erratum changes. */
export type ErratumEffect =
  /** A WRMSR of IA32_RTIT_CTL whose value has every one of `fields` raises #GP(0). */
  | { readonly kind: 'wrmsr-gp'; readonly msr: 'IA32_RTIT_CTL'; readonly fields: CtlFields }
  /**
   * The packet stream differs from the SDM's: `packets` appear where they should not (`extra`), are
   * left out (`missing`) or carry wrong bytes (`corrupt`). A decoder must tolerate it.
   */
  | { readonly kind: 'decoding'; readonly change: PacketChange; readonly packets: readonly string[] }
  /**
   * ToPA accepts only the single-output-region layout (entry 0 an output region, entry 1 an END
   * entry back to the table) and raises the ToPA PMI before the region is full
   * (docs/sdm/output.md §4.6).
   */
  | { readonly kind: 'topa-layout'; readonly layout: 'single-output-region' };

/** A CPUID bit that enumerates what an erratum row says: a CPU of the row must report `value`. */
export interface Enumeration {
  readonly cap: PtCapFlag;
  readonly value: boolean;
}

/** One row of the errata table. */
export interface Erratum {
  /** The ID ptlab uses: the specification update's ID where there is one. */
  readonly id: string;
  /** What goes wrong, in a line. */
  readonly title: string;
  readonly cpus: readonly CpuGroup[];
  readonly source: ErratumSource;
  readonly effect: ErratumEffect;
  /** Set when CPUID also enumerates the behaviour; the probe warns when a CPU of the row disagrees. */
  readonly enumeratedBy?: Enumeration;
}

const family6 = (name: string, ...models: number[]): CpuGroup => ({ name, family: 6, models });

// ---- the CPUs, by generation -----------------------------------------------------------------
// Model numbers: libipt 2.0.5 `pt_cpu_errata` (measured for every family 6 model by
// test/libipt/errata.test.ts) and, for Broadwell, Linux `pt_pmu_hw_init`.

/** Broadwell: client 06_3D, client with eDRAM 06_47, server/HEDT 06_4F, Xeon D 06_56. */
const BROADWELL = family6('Broadwell', 0x3d, 0x47, 0x4f, 0x56);
/** Skylake and Kaby Lake client, with their refreshes (Coffee, Whiskey, Amber, Comet Lake). */
const SKYLAKE_CLIENT = family6('Skylake/Kaby Lake client', 0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6);
/** Server cores: Skylake-SP/Cascade Lake/Cooper Lake 06_55, Ice Lake-SP 06_6A and -D 06_6C, Sapphire Rapids 06_8F. */
const SERVER = family6('Skylake/Cascade Lake/Ice Lake/Sapphire Rapids server', 0x55, 0x6a, 0x6c, 0x8f);
/** Client cores after Kaby Lake: Cannon Lake 06_66, Ice Lake 06_7D/7E, Tiger Lake 06_8C/8D, Rocket Lake 06_A7/A8. */
const ICELAKE_CLIENT = family6('Cannon/Ice/Tiger/Rocket Lake client', 0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8);
/** Hybrid client: Alder Lake 06_97/9A, Raptor Lake 06_BF (libipt 2.0.5 does not list 06_B7 or 06_BA). */
const ALDER_LAKE = family6('Alder Lake/Raptor Lake', 0x97, 0x9a, 0xbf);
/** Goldmont Atom cores: Apollo Lake 06_5C, Denverton 06_5F. */
const GOLDMONT = family6('Goldmont', 0x5c, 0x5f);
/** Goldmont Plus (Gemini Lake 06_7A) and Tremont (Snow Ridge 06_86, Elkhart Lake 06_96, Jasper Lake 06_9C). */
const GOLDMONT_PLUS_TREMONT = family6('Goldmont Plus/Tremont', 0x7a, 0x86, 0x96, 0x9c);

// ---- the errata ---------------------------------------------------------------------------------

/**
 * Every erratum, Broadwell's first. Titles are ours; the specification updates' own wording is
 * quoted in libipt's intel-pt.h (`struct pt_errata`) for the rows it knows.
 */
export const ERRATA = [
  {
    id: 'BDM106',
    title: 'A WRMSR of IA32_RTIT_CTL that sets TraceEn with BranchEn clear faults: no tracing without branch packets',
    cpus: [BROADWELL],
    // docs/sdm/msrs.md §3.5.
    source: { specUpdate: { id: 'BDM106' }, linux: 'arch/x86/events/intel/pt.c pt_pmu_hw_init: pt_pmu.branch_en_always_on' },
    effect: { kind: 'wrmsr-gp', msr: 'IA32_RTIT_CTL', fields: { TraceEn: true, BranchEn: false } },
  },
  {
    id: 'BDW-SINGLE-TOPA',
    title: 'ToPA takes one output region only, followed by an END entry back to the table; the ToPA PMI comes before the region is full',
    cpus: [BROADWELL],
    source: { sdm: 'Vol. 3C "Single Output Region ToPA Implementation" (docs/sdm/output.md §4.6, docs/sdm/cpuid.md §2)' },
    effect: { kind: 'topa-layout', layout: 'single-output-region' },
    enumeratedBy: { cap: 'topaMultipleEntries', value: false },
  },
  {
    id: 'BDM70',
    title: 'The PSB+ just before a TIP.PGE may hold FUP and MODE.Exec packets that belong only between TIP.PGE and TIP.PGD',
    cpus: [BROADWELL, SKYLAKE_CLIENT, SERVER, ICELAKE_CLIENT, ALDER_LAKE],
    source: { specUpdate: { id: 'BDM70', sameAs: ['SKD024', 'SKL021', 'KBL021'] }, libipt: 'bdm70' },
    effect: { kind: 'decoding', change: 'extra', packets: ['FUP', 'MODE.Exec'] },
  },
  {
    id: 'BDM64',
    title: 'A TSX abort right after a branch may be preceded by a packet with a wrong branch target',
    cpus: [BROADWELL],
    source: { specUpdate: { id: 'BDM64' }, libipt: 'bdm64' },
    effect: { kind: 'decoding', change: 'corrupt', packets: ['TIP'] },
  },
  {
    id: 'SKD007',
    title: 'An internal-buffer overflow may put an OVF in place of the rest of a multi-byte CYC',
    cpus: [SKYLAKE_CLIENT],
    source: { specUpdate: { id: 'SKD007', sameAs: ['SKL049', 'KBL041'] }, libipt: 'skd007' },
    effect: { kind: 'decoding', change: 'corrupt', packets: ['CYC'] },
  },
  {
    id: 'SKD022',
    title: 'A VM entry that clears TraceEn through its MSR-load list may write a FUP before the TIP.PGD',
    cpus: [SKYLAKE_CLIENT, SERVER, ICELAKE_CLIENT, ALDER_LAKE],
    source: { specUpdate: { id: 'SKD022', sameAs: ['SKL024', 'KBL023'] }, libipt: 'skd022' },
    effect: { kind: 'decoding', change: 'extra', packets: ['FUP'] },
  },
  {
    id: 'SKD010',
    title: 'An OVF may be followed by neither a FUP nor a TIP.PGE',
    cpus: [SKYLAKE_CLIENT],
    source: { specUpdate: { id: 'SKD010', sameAs: ['SKD014', 'SKL033', 'KBL030'] }, libipt: 'skd010' },
    effect: { kind: 'decoding', change: 'missing', packets: ['FUP', 'TIP.PGE'] },
  },
  {
    id: 'SKL014',
    title: 'The TIP.PGD of a direct unconditional branch that leaves a FilterEn range may come without its target IP',
    cpus: [SKYLAKE_CLIENT, SERVER, ICELAKE_CLIENT, ALDER_LAKE],
    source: { specUpdate: { id: 'SKL014', sameAs: ['KBL014'] }, libipt: 'skl014' },
    effect: { kind: 'decoding', change: 'missing', packets: ['TIP.PGD IP payload'] },
  },
  {
    id: 'SKL168',
    title: 'A PSB may cost the CYC (and the MTC with it) written just before it',
    cpus: [SKYLAKE_CLIENT],
    source: { specUpdate: { id: 'SKL168' }, libipt: 'skl168' },
    effect: { kind: 'decoding', change: 'missing', packets: ['CYC', 'MTC'] },
  },
  {
    id: 'SKZ84',
    title: 'In a VMX guest with TSC offsetting or scaling, TMA packets carry a corrupt CTC and FastCounter and a stray byte follows',
    cpus: [SERVER],
    source: { specUpdate: { id: 'SKZ84' }, libipt: 'skz84' },
    effect: { kind: 'decoding', change: 'corrupt', packets: ['TMA'] },
  },
  {
    id: 'APL12',
    title: 'With FilterEn clear (outside a TIP.PGE/TIP.PGD pair) an OVF may be followed by a FUP',
    cpus: [GOLDMONT],
    source: { specUpdate: { id: 'APL12' }, libipt: 'apl12' },
    effect: { kind: 'decoding', change: 'extra', packets: ['FUP'] },
  },
  {
    id: 'APL11',
    title: 'An OVF at the moment TraceEn or ContextEn is cleared may be followed by a TIP.PGD',
    cpus: [GOLDMONT, GOLDMONT_PLUS_TREMONT, ALDER_LAKE],
    source: { specUpdate: { id: 'APL11' }, libipt: 'apl11' },
    effect: { kind: 'decoding', change: 'extra', packets: ['TIP.PGD'] },
  },
] as const satisfies readonly Erratum[];

/** The ID of a row of ERRATA. */
export type ErratumId = (typeof ERRATA)[number]['id'];
/** IDs of the errata that make a WRMSR #GP. */
export type GpErratumId = Extract<(typeof ERRATA)[number], { readonly effect: { readonly kind: 'wrmsr-gp' } }>['id'];

const BY_ID: ReadonlyMap<string, Erratum> = new Map(ERRATA.map((e) => [e.id, e]));

/** The row of `id`. */
export function erratum(id: ErratumId): Erratum {
  return BY_ID.get(id)!;
}

/** True when `cpu` is one of `g`'s CPUs. */
export function inGroup(g: CpuGroup, cpu: CpuSignature): boolean {
  return g.family === cpu.family && g.models.includes(cpu.model)
    && (g.steppings === undefined || (cpu.stepping >= g.steppings.from && cpu.stepping <= g.steppings.to));
}

/** The vendor these errata are Intel's for. */
const INTEL = 'GenuineIntel';

/**
 * The errata of a CPU, in table order. With a `vendor` other than GenuineIntel there are none (the
 * family/model numbers are Intel's).
 */
export function errataOf(cpu: CpuSignature & { readonly vendor?: string }): ReadonlySet<ErratumId> {
  if (cpu.vendor !== undefined && cpu.vendor !== INTEL) return new Set();
  return new Set(ERRATA.filter((e) => e.cpus.some((g) => inGroup(g, cpu))).map((e) => e.id));
}

/** `fields` as "TraceEn=1 and BranchEn=0". */
export function describeCtlFields(fields: CtlFields): string {
  return Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'boolean' ? Number(v) : String(v)}`).join(' and ');
}

/** The first of `errata` under which WRMSR IA32_RTIT_CTL := `value` raises #GP, if any. */
export function ctlGpErratum(errata: Iterable<ErratumId>, value: bigint): { readonly id: GpErratumId; readonly fields: CtlFields } | undefined {
  const d: Readonly<Record<string, boolean | number | bigint>> = IA32_RTIT_CTL.decode(value);
  for (const id of errata) {
    const { effect } = erratum(id);
    if (effect.kind !== 'wrmsr-gp' || effect.msr !== 'IA32_RTIT_CTL') continue;
    if (Object.entries(effect.fields).every(([k, v]) => d[k] === v)) return { id: id as GpErratumId, fields: effect.fields };
  }
  return undefined;
}

/**
 * Where a CPU's CPUID contradicts the errata table: a row that CPUID also enumerates, but this CPU
 * (one of the row's) reports the other value. One line per row; empty when all agree.
 */
export function enumerationMismatches(cpu: CpuSignature, errata: Iterable<ErratumId>, caps: PtCaps): string[] {
  const out: string[] = [];
  for (const id of errata) {
    const e = erratum(id);
    if (e.enumeratedBy === undefined || caps[e.enumeratedBy.cap] === e.enumeratedBy.value) continue;
    out.push(`erratum ${id} applies to ${familyModelName(cpu)} with ${cpuidBitName(e.enumeratedBy.cap)} = ${Number(e.enumeratedBy.value)}, ` +
      `but this CPU enumerates ${Number(caps[e.enumeratedBy.cap])}`);
  }
  return out;
}

/** A request the CPU would accept by its CPUID, but one of its errata rules out; names the erratum. */
export class ErratumError extends PtError {
  override readonly name = 'ErratumError';
  constructor(readonly erratum: ErratumId, message: string) {
    super('unsupported', message);
  }
}
