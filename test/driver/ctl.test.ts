// One spelling per SDM field: a request's IA32_RTIT_CTL options are the field
// table's names (driver/hw/msrs.ts), ctlFor maps each to exactly its field, and checkRequest's
// refusals name the field and the CPUID bit of the gate the table gives it. Every test here walks
// the field table, so a field added to it without an option, or under another spelling, fails.
import { describe, expect, test } from 'vitest';
import { PtError, UnsupportedError } from '../../driver/base/errors.js';
import { checkRequest } from '../../driver/check-request.js';
import { CTL_FIELD_NAMES, CTL_OPTION_NAMES, ctlFor, requestedCtlFields } from '../../driver/ctl.js';
import { PT_CAP_ROWS, type PtCapFlag, type PtCaps } from '../../driver/hw/cpuid.js';
import { fieldMask } from '../../driver/hw/field.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';
import {
  CTL_ENABLED_BY, CTL_FIELDS_NOT_OPTIONS, CTL_OPTION_DEFAULTS,
  type CtlFieldName, type CtlOptionName, type TraceRequest,
} from '../../driver/request.js';
import { capsOf, PROFILES } from '../../harness/sim/profiles.js';

const output: TraceRequest['output'] = { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 };
const base: TraceRequest = { output };
const FULL = capsOf(PROFILES.full);
const fields = IA32_RTIT_CTL.fields as Readonly<Record<CtlFieldName, (typeof IA32_RTIT_CTL.fields)[CtlFieldName]>>;
/** A request of `base` with `extra` options, built without the type (as a table-driven test must). */
const withOptions = (extra: Readonly<Record<string, unknown>>): TraceRequest => ({ ...base, ...extra }) as TraceRequest;
const defaultOf = (n: CtlOptionName): boolean | number =>
  (CTL_OPTION_DEFAULTS as Readonly<Partial<Record<CtlOptionName, boolean>>>)[n] ?? (fields[n].kind === 'flag' ? false : 0);
/** A value of option `n` that differs from its default (for a value field: 1, a valid encoding everywhere it exists). */
const otherThanDefault = (n: CtlOptionName): boolean | number => (fields[n].kind === 'flag' ? !defaultOf(n) : 1);
/** The enable bit that option `n` implies, if any (MTCFreq → MTCEn). */
const enableOf = (n: CtlOptionName): CtlFieldName | undefined =>
  (Object.entries(CTL_ENABLED_BY) as [CtlFieldName, CtlOptionName][]).find(([, by]) => by === n)?.[0];
/** A request that sets option `n` and passes checkRequest on the full profile. */
const setting = (n: CtlOptionName): TraceRequest =>
  withOptions({ [n]: fields[n].kind === 'flag' ? true : 0, ...(n === 'FUPonPTW' ? { PTWEn: true } : {}) });

describe('request options are the IA32_RTIT_CTL field names', () => {
  test('every field of the table is either an option of its own name or set by something the request names', () => {
    for (const n of CTL_FIELD_NAMES) {
      expect([n, (CTL_OPTION_NAMES as readonly string[]).includes(n) !== Object.hasOwn(CTL_FIELDS_NOT_OPTIONS, n)]).toEqual([n, true]);
    }
    // The exceptions, by hand: what the driver derives (TraceEn, ToPA, the enables of value fields,
    // CR3Filter, ADDRn_CFG) and FabricEn, which ptlab never sets. A new field is an option unless added here.
    expect(Object.keys(CTL_FIELDS_NOT_OPTIONS)).toEqual([
      'TraceEn', 'ToPA', 'FabricEn', 'CR3Filter', 'MTCEn', 'CYCEn', 'ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG',
    ]);
  });

  test.for(CTL_OPTION_NAMES.map((n) => [n] as const))('%s: ctlFor sets exactly that field (and the enable it implies)', ([n]) => {
    const v = otherThanDefault(n);
    const want = { ...IA32_RTIT_CTL.decode(ctlFor(base, true)), [n]: v, ...(enableOf(n) ? { [enableOf(n)!]: true } : {}) };
    expect(IA32_RTIT_CTL.decode(ctlFor(withOptions({ [n]: v }), true))).toEqual(want);
  });

  test.for(CTL_OPTION_NAMES.map((n) => [n] as const))('%s: absent is its default; given as the default, only the enable it implies changes', ([n]) => {
    const d = defaultOf(n);
    expect(IA32_RTIT_CTL.decode(ctlFor(base, true))[n]).toBe(d);
    const implied = enableOf(n) ? fieldMask(fields[enableOf(n)!]) : 0n;
    expect(ctlFor(withOptions({ [n]: d }), true)).toBe(ctlFor(base, true) | implied);
  });

  test('a value field given as 0 still sets its enable: MTCFreq 0 ⇒ MTCEn=1, CycThresh 0 ⇒ CYCEn=1', () => {
    for (const [enable, by] of Object.entries(CTL_ENABLED_BY) as [CtlFieldName, CtlOptionName][]) {
      const d = IA32_RTIT_CTL.decode(ctlFor(withOptions({ [by]: 0 }), true));
      expect([enable, d[enable], d[by]]).toEqual([enable, true, 0]);
      expect([enable, IA32_RTIT_CTL.decode(ctlFor(base, true))[enable]]).toEqual([enable, false]);
    }
  });

  test('the fields set otherwise: TraceEn by ctlFor, ToPA by the output, CR3Filter by CR3_MATCH, ADDRn_CFG by ranges, FabricEn never', () => {
    const single: TraceRequest = { output: { scheme: 'single-range', size: 4096 } };
    const ranges: TraceRequest = {
      output, CR3_MATCH: 0x5000n,
      ranges: [0, 1, 2, 3].map((n) => ({ role: n % 2 === 0 ? 'filter' as const : 'tracestop' as const, a: 0x1000n, b: 0x2000n })),
    };
    const on = IA32_RTIT_CTL.decode(ctlFor(ranges, true));
    expect([on.TraceEn, on.ToPA, on.CR3Filter, on.ADDR0_CFG, on.ADDR1_CFG, on.ADDR2_CFG, on.ADDR3_CFG, on.FabricEn])
      .toEqual([true, true, true, 1, 2, 1, 2, false]);
    const off = IA32_RTIT_CTL.decode(ctlFor(single, false));
    expect([off.TraceEn, off.ToPA, off.CR3Filter, off.ADDR0_CFG, off.FabricEn, off.MTCEn, off.CYCEn]).toEqual([false, false, false, 0, false, false, false]);
  });

  test('the type has no option for a derived field, and no old spelling', () => {
    // @ts-expect-error MTCEn is not an option: MTCFreq present sets it, so no request says MTCEn=0 with an MTCFreq
    const a: TraceRequest = { output, MTCEn: false, MTCFreq: 3 };
    // @ts-expect-error the old spelling of DisTNT
    const b: TraceRequest = { output, disTnt: true };
    // @ts-expect-error CR3Filter is set by CR3_MATCH
    const c: TraceRequest = { output, CR3Filter: true };
    expect([a, b, c].length).toBe(3);
  });

  test('checkRequest refuses a key the type does not have (an old spelling, a derived field), before anything else', () => {
    const refusal = (extra: Record<string, unknown>): unknown => {
      try { checkRequest(FULL, withOptions(extra), []); } catch (e) { return e; }
      return undefined;
    };
    const old = refusal({ disTnt: true });
    expect([old instanceof PtError, (old as PtError).code, (old as Error).message]).toEqual([true, 'bad_config',
      `unknown request option 'disTnt' (IA32_RTIT_CTL options take the SDM field names: ${CTL_OPTION_NAMES.join(', ')})`]);
    const derived = refusal({ MTCEn: true });
    expect((derived as Error).message).toBe('MTCEn is not a request option: IA32_RTIT_CTL.MTCEn is set by MTCFreq present');
  });

  test('FUPonPTW without PTWEn is refused (bad_config); with it, accepted', () => {
    expect(() => checkRequest(FULL, withOptions({ FUPonPTW: true }), [])).toThrow(expect.objectContaining({ code: 'bad_config' }));
    expect(() => checkRequest(FULL, { output, PTWEn: true, FUPonPTW: true }, [])).not.toThrow();
  });
});

/** The caps of the full profile with the first PtCaps flag cleared that makes `gate` fail. */
function capsFailing(gate: { test(c: PtCaps): boolean }): PtCaps {
  const flags = Object.keys(PT_CAP_ROWS).filter((k) => typeof FULL[k as PtCapFlag] === 'boolean') as PtCapFlag[];
  for (const f of flags) {
    const c = { ...FULL, [f]: false };
    if (!gate.test(c)) return c;
  }
  throw new Error('no single CPUID flag turns this gate off');
}

describe('checkRequest asks the field table for the gates of the CTL fields a request sets', () => {
  // Every gated CTL field, and the request that sets it. ToPA and ADDRn_CFG are set by the output and
  // the ranges, whose own checks (and messages) come first; FabricEn is never set.
  const gated = CTL_FIELD_NAMES.filter((n) => fields[n].gate !== undefined);
  const requestSetting = (n: CtlFieldName): TraceRequest | undefined => {
    if ((CTL_OPTION_NAMES as readonly string[]).includes(n)) return setting(n as CtlOptionName);
    const by = (CTL_ENABLED_BY as Readonly<Partial<Record<CtlFieldName, CtlOptionName>>>)[n];
    if (by !== undefined) return withOptions({ [by]: 0 });
    if (n === 'CR3Filter') return { output, CR3_MATCH: 0x5000n };
    return undefined;
  };
  const cases = gated.filter((n) => requestSetting(n) !== undefined).map((n) => [n] as const);

  test('the table-driven cases cover every gated field but ToPA, ADDRn_CFG and FabricEn', () => {
    expect(gated.filter((n) => requestSetting(n) === undefined)).toEqual(['FabricEn', 'ToPA', 'ADDR0_CFG', 'ADDR1_CFG', 'ADDR2_CFG', 'ADDR3_CFG']);
  });

  test.for(cases)('%s: accepted where enumerated; refused with the field and its CPUID bit where not', ([n]) => {
    const req = requestSetting(n)!;
    expect(requestedCtlFields(req)).toContain(n);
    expect(() => checkRequest(FULL, req, [])).not.toThrow();
    const gate = fields[n].gate!;
    let err: unknown;
    try { checkRequest(capsFailing(gate), req, []); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(UnsupportedError);
    const u = err as UnsupportedError;
    // The refusal may name another field the same request sets (MTCFreq's MTCEn): it has the same gate.
    const named = u.capability as CtlFieldName;
    expect(requestedCtlFields(req)).toContain(named);
    const g = fields[named].gate!;
    expect([u.code, u.cpuid, u.message]).toEqual(['unsupported', g.cpuid, `${named} needs ${g.cpuid} (${g.what}), which this CPU does not enumerate`]);
    expect(u.message).toMatch(/^[A-Za-z0-9_]+ needs CPUID\.\(EAX=14H,ECX=0\):E[BC]X\[\d+\] \([^)]+\), which this CPU does not enumerate$/);
  });

  test('the words, by hand: DisTNT on a CPU without TNT disable', () => {
    const noTnt = { ...FULL, tntDisable: false };
    expect(() => checkRequest(noTnt, { output, DisTNT: true }, []))
      .toThrow('DisTNT needs CPUID.(EAX=14H,ECX=0):EBX[8] (TNT disable), which this CPU does not enumerate');
  });
});
