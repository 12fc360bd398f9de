// The errata table (driver/hw/errata.ts, docs/sdm/errata.md): its rows are well-formed, and a CPU's
// errata follow from its CPUID signature. Expected sets are written by hand from docs/sdm/errata.md
// (libipt's own assignment is checked model by model in test/libipt/errata.test.ts).
import { describe, expect, test } from 'vitest';
import { cpuSignature, decodePtCaps, familyModelName, type PtCaps } from '../../driver/hw/cpuid.js';
import {
  ctlGpErratum, describeCtlFields, enumerationMismatches, ERRATA, errataOf, inGroup, type CpuGroup, type Erratum,
} from '../../driver/hw/errata.js';
import { BROADWELL_E, KABY_LAKE, reader } from './fixtures.js';

const rows: readonly Erratum[] = ERRATA;
const groups = [...new Set(rows.flatMap((e) => e.cpus))];

describe('rows are well-formed', () => {
  test('IDs are unique', () => {
    const ids = rows.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('every row names its source, and a specification-update ID is the row ID', () => {
    for (const e of rows) {
      const s = e.source;
      expect([e.id, [s.specUpdate, s.libipt, s.linux, s.sdm].some((x) => x !== undefined)]).toEqual([e.id, true]);
      if (s.specUpdate) expect(s.specUpdate.id).toBe(e.id);
      if (s.libipt) expect(s.libipt).toBe(e.id.toLowerCase());
    }
  });

  test("the ten libipt struct pt_errata fields appear once each, on the packet-stream errata", () => {
    const libipt = rows.flatMap((e) => (e.source.libipt ? [e.source.libipt] : []));
    expect([...libipt].sort()).toEqual(['apl11', 'apl12', 'bdm64', 'bdm70', 'skd007', 'skd010', 'skd022', 'skl014', 'skl168', 'skz84']);
    for (const e of rows) expect([e.id, e.effect.kind === 'decoding']).toEqual([e.id, e.source.libipt !== undefined]);
  });

  test('titles and decoding effects say something', () => {
    for (const e of rows) {
      expect(e.title.length, e.id).toBeGreaterThan(20);
      if (e.effect.kind === 'decoding') expect(e.effect.packets.length, e.id).toBeGreaterThan(0);
    }
  });

  test('every row applies to some CPU; families, models and steppings are in range', () => {
    for (const e of rows) expect(e.cpus.length, e.id).toBeGreaterThan(0);
    for (const g of groups) {
      expect(g.models.length, g.name).toBeGreaterThan(0);
      expect(new Set(g.models).size, g.name).toBe(g.models.length);
      // DisplayFamily is at most 0FH + 0FFH; DisplayModel is 8 bits; the stepping ID 4.
      expect(g.family >= 1 && g.family <= 0x10e, g.name).toBe(true);
      for (const m of g.models) expect(Number.isInteger(m) && m >= 0 && m <= 0xff, `${g.name} ${m}`).toBe(true);
      if (g.steppings) expect(0 <= g.steppings.from && g.steppings.from <= g.steppings.to && g.steppings.to <= 0xf, g.name).toBe(true);
    }
  });

  test('no model is in two CPU groups', () => {
    const seen = new Map<string, string>();
    for (const g of groups) {
      for (const m of g.models) {
        const key = familyModelName({ family: g.family, model: m });
        expect(seen.get(key), `${key} in ${g.name}`).toBeUndefined();
        seen.set(key, g.name);
      }
    }
  });

  test('the only row CPUID also enumerates is the single-output-region ToPA, with MENTRY = 0', () => {
    expect(rows.filter((e) => e.enumeratedBy).map((e) => [e.id, e.effect.kind, e.enumeratedBy]))
      .toEqual([['BDW-SINGLE-TOPA', 'topa-layout', { cap: 'topaMultipleEntries', value: false }]]);
  });
});

describe('errataOf', () => {
  test.for([
    { name: 'Broadwell-E 06_4F', model: 0x4f, want: ['BDM106', 'BDW-SINGLE-TOPA', 'BDM70', 'BDM64'] },
    { name: 'Broadwell client 06_3D', model: 0x3d, want: ['BDM106', 'BDW-SINGLE-TOPA', 'BDM70', 'BDM64'] },
    { name: 'Skylake 06_5E', model: 0x5e, want: ['BDM70', 'SKD007', 'SKD022', 'SKD010', 'SKL014', 'SKL168'] },
    { name: 'Kaby Lake 06_9E', model: 0x9e, want: ['BDM70', 'SKD007', 'SKD022', 'SKD010', 'SKL014', 'SKL168'] },
    { name: 'Sapphire Rapids 06_8F', model: 0x8f, want: ['BDM70', 'SKD022', 'SKL014', 'SKZ84'] },
    { name: 'Tiger Lake 06_8C', model: 0x8c, want: ['BDM70', 'SKD022', 'SKL014'] },
    { name: 'Alder Lake 06_97', model: 0x97, want: ['BDM70', 'SKD022', 'SKL014', 'APL11'] },
    { name: 'Apollo Lake 06_5C', model: 0x5c, want: ['APL12', 'APL11'] },
    { name: 'Elkhart Lake 06_96', model: 0x96, want: ['APL11'] },
    { name: 'Raptor Lake 06_B7 (not in the table)', model: 0xb7, want: [] },
  ])('$name: $want', ({ model, want }) => {
    expect([...errataOf({ family: 6, model, stepping: 0 })]).toEqual(want);
  });

  test('the stepping does not matter for these rows', () => {
    for (let stepping = 0; stepping <= 0xf; stepping++) expect(errataOf({ family: 6, model: 0x4f, stepping }).has('BDM106')).toBe(true);
  });

  test('the family does: 0F_4F is not Broadwell', () => {
    expect(errataOf({ family: 0xf, model: 0x4f, stepping: 1 }).size).toBe(0);
  });

  test('a vendor other than Intel has none of them', () => {
    expect(errataOf({ vendor: 'AuthenticAMD', family: 6, model: 0x4f, stepping: 1 }).size).toBe(0);
    expect(errataOf({ vendor: 'GenuineIntel', family: 6, model: 0x4f, stepping: 1 }).has('BDM106')).toBe(true);
  });

  test('a stepping range limits a group', () => {
    const g: CpuGroup = { name: 'test', family: 6, models: [0x4f], steppings: { from: 1, to: 2 } };
    expect([0, 1, 2, 3].map((stepping) => inGroup(g, { family: 6, model: 0x4f, stepping }))).toEqual([false, true, true, false]);
  });
});

describe('cpuSignature: DisplayFamily / DisplayModel of CPUID.1:EAX (SDM Vol. 2A)', () => {
  test.for([
    { eax: 0x0004_06f1, want: { family: 6, model: 0x4f, stepping: 1 }, what: 'Broadwell-E: extended model 4 prepended' },
    { eax: 0x0009_06ea, want: { family: 6, model: 0x9e, stepping: 0xa }, what: 'Coffee Lake' },
    { eax: 0x00a2_0f10, want: { family: 0x19, model: 0x21, stepping: 0 }, what: 'family 0FH: extended family added, extended model prepended' },
    { eax: 0x0001_0543, want: { family: 5, model: 4, stepping: 3 }, what: 'family 5: the extended model is not used' },
  ])('$what', ({ eax, want }) => {
    expect(cpuSignature(eax)).toEqual(want);
  });
  test('familyModelName spells 06_4FH', () => {
    expect(familyModelName({ family: 6, model: 0x4f })).toBe('06_4FH');
  });
});

describe('effects', () => {
  const bdw = errataOf({ family: 6, model: 0x4f, stepping: 1 });
  const skl = errataOf({ family: 6, model: 0x5e, stepping: 3 });
  // IA32_RTIT_CTL by hand (docs/sdm/msrs.md §3.1): TraceEn 0, OS 2, ToPA 8, BranchEn 13.
  test.for([
    { what: 'Broadwell, TraceEn|OS|ToPA (BranchEn=0)', errata: bdw, ctl: 0x105n, want: 'BDM106' },
    { what: 'Broadwell, TraceEn|OS|ToPA|BranchEn', errata: bdw, ctl: 0x2105n, want: undefined },
    { what: 'Broadwell, OS|ToPA (TraceEn=0, BranchEn=0)', errata: bdw, ctl: 0x104n, want: undefined },
    { what: 'Skylake, TraceEn|OS|ToPA (BranchEn=0)', errata: skl, ctl: 0x105n, want: undefined },
  ])('WRMSR CTL #GP erratum: $what → $want', ({ errata, ctl, want }) => {
    expect(ctlGpErratum(errata, ctl)?.id).toBe(want);
  });

  test('BDM106 faults TraceEn=1 and BranchEn=0', () => {
    expect(describeCtlFields(ctlGpErratum(bdw, 0x1n)!.fields)).toBe('TraceEn=1 and BranchEn=0');
  });

  test('a Broadwell that enumerates MENTRY=1 contradicts the single-output-region row; one with MENTRY=0 does not', () => {
    const sig = { family: 6, model: 0x4f, stepping: 1 };
    const mentry0 = decodePtCaps(reader(BROADWELL_E));
    const mentry1: PtCaps = { ...mentry0, topaMultipleEntries: true };
    expect(enumerationMismatches(sig, bdw, mentry0)).toEqual([]);
    expect(enumerationMismatches(sig, bdw, mentry1)).toEqual([
      'erratum BDW-SINGLE-TOPA applies to 06_4FH with CPUID.(EAX=14H,ECX=0):ECX[1] = 0, but this CPU enumerates 1',
    ]);
    // Kaby Lake enumerates MENTRY=1 and has no such row.
    expect(enumerationMismatches({ family: 6, model: 0x9e, stepping: 9 }, errataOf({ family: 6, model: 0x9e, stepping: 9 }), decodePtCaps(reader(KABY_LAKE)))).toEqual([]);
  });
});
