// Refuse, before any MSR is written, everything a request asks that the CPU
// does not enumerate (docs/sdm/cpuid.md; docs/sdm/msrs.md §3.1–§3.3
// gates and encoding bitmaps) or that one of its errata rules out (docs/sdm/errata.md).
// Errors name the capability and the CPUID bit, or the erratum. The CTL options' gates are the
// field table's (driver/hw/msrs.ts): errors name the SDM field and its CPUID bit. The encoding
// rules are those of the #GP rule set the model uses too (driver/hw/msr-rules.ts), and the errata
// the errata table's (driver/hw/errata.ts), which that rule set reads: no list of the driver's own.
import { UnsupportedError, PtError } from './base/errors.js';
import { CTL_OPTION_NAMES, ctlFor, requestedCtlFields } from './ctl.js';
import { cpuidBitName, type PtCapFlag, type PtCaps } from './hw/cpuid.js';
import { ctlGpErratum, describeCtlFields, ErratumError, type ErratumId } from './hw/errata.js';
import { IA32_RTIT_CR3_MATCH, IA32_RTIT_CTL, isCanonical } from './hw/msrs.js';
import { topaSizeEncoding } from './hw/topa.js';
import { CTL_ENCODING_RULES, encodingEnumerated, type CtlEncodingRule } from './hw/msr-rules.js';
import { CTL_FIELDS_NOT_OPTIONS, DEFAULT_TOPA_BUDGET, type CtlOptionName, type TraceRequest } from './request.js';

function need(caps: PtCaps, cap: PtCapFlag, capability: string): void {
  if (!caps[cap]) throw new UnsupportedError(capability, cpuidBitName(cap));
}

/** The request's options besides the CTL fields (a Record, so the compiler keeps it complete). */
const NON_CTL_OPTIONS: Readonly<Record<Exclude<keyof TraceRequest, CtlOptionName>, true>> = { output: true, CR3_MATCH: true, ranges: true, switching: true };
const REQUEST_KEYS: ReadonlySet<string> = new Set([...Object.keys(NON_CTL_OPTIONS), ...CTL_OPTION_NAMES]);

/**
 * A key the request type does not have is refused, not ignored: a request built without the type
 * (JSON, a cast, a spread) that spells an option another way would otherwise trace something else.
 */
function checkKeys(req: TraceRequest): void {
  for (const k of Object.keys(req)) {
    if (REQUEST_KEYS.has(k)) continue;
    const setBy = (CTL_FIELDS_NOT_OPTIONS as Readonly<Record<string, string>>)[k];
    throw new PtError('bad_config', setBy !== undefined
      ? `${k} is not a request option: IA32_RTIT_CTL.${k} is set by ${setBy}`
      : `unknown request option '${k}' (IA32_RTIT_CTL options take the SDM field names: ${CTL_OPTION_NAMES.join(', ')})`);
  }
}

/**
 * Every IA32_RTIT_CTL field the request sets must pass its gate in the field table
 * (driver/hw/msrs.ts): the message names the field and the CPUID bit, e.g. "DisTNT needs
 * CPUID.(EAX=14H,ECX=0):EBX[8] (TNT disable), which this CPU does not enumerate".
 */
function checkCtlGates(caps: PtCaps, req: TraceRequest): void {
  for (const name of requestedCtlFields(req)) {
    const gate = IA32_RTIT_CTL.fields[name].gate;
    if (gate === undefined || gate.test(caps)) continue;
    throw new UnsupportedError(name, gate.cpuid, `${name} needs ${gate.cpuid} (${gate.what}), which this CPU does not enumerate`);
  }
}

/** An encoding must have its bit set in a CPUID bitmap (docs/sdm/msrs.md §3.3 rules 5–7, as msr-rules.ts judges them). */
function needEncoding(caps: PtCaps, r: CtlEncodingRule, enc: number): void {
  const { field, bitmap } = r;
  if (!Number.isInteger(enc) || enc < 0 || enc > 15) throw new PtError('bad_config', `${field} encoding ${enc} is not in 0..15`);
  if (!encodingEnumerated(caps, r, enc)) {
    const where = `${cpuidBitName(bitmap)} bit ${enc}`;
    throw new UnsupportedError(`${field} encoding ${enc}`, where, `${field} encoding ${enc} is not supported: ${where} = 0 (bitmap 0x${caps[bitmap].toString(16)})`);
  }
}

const isPow2 = (n: number): boolean => Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;

/**
 * Throws UnsupportedError (capability + CPUID bit), ErratumError (an erratum of the CPU, e.g. BDM106)
 * or PtError('bad_config') unless a CPU with `caps` and `errata` (the probe's) can run `req`.
 */
export function checkRequest(caps: PtCaps, req: TraceRequest, errata: Iterable<ErratumId>): void {
  checkKeys(req);
  need(caps, 'intelPt', 'Intel PT');
  // Output and ranges first: their messages say more than the ToPA and ADDRn_CFG gates would.
  checkOutput(caps, req);
  checkRanges(caps, req);
  checkCtlGates(caps, req);
  if (req.FUPonPTW && !req.PTWEn) throw new PtError('bad_config', 'FUPonPTW without PTWEn: there would be no PTW packet for a FUP to follow');
  if (req.CR3_MATCH !== undefined && (req.CR3_MATCH & IA32_RTIT_CR3_MATCH.reservedMask) !== 0n) {
    throw new PtError('bad_config', `CR3_MATCH value 0x${req.CR3_MATCH.toString(16)} has bits 4:0 set`);
  }
  for (const r of CTL_ENCODING_RULES) {
    const enc = req[r.field];
    if (enc !== undefined) needEncoding(caps, r, enc);
  }
  if (req.switching === 'xsaves') {
    need(caps, 'xsaves', 'XSAVES/XRSTORS');
    need(caps, 'xssPtState', 'XSAVES of PT state (IA32_XSS[8])');
  }
  checkErrata(errata, req);
}

/** The enabling IA32_RTIT_CTL of `req` must not be a write an erratum of the CPU faults (BDM106: BranchEn=0). */
function checkErrata(errata: Iterable<ErratumId>, req: TraceRequest): void {
  const hit = ctlGpErratum(errata, ctlFor(req, true));
  if (hit === undefined) return;
  throw new ErratumError(hit.id, `erratum ${hit.id} of this CPU: WRMSR IA32_RTIT_CTL with ${describeCtlFields(hit.fields)} ` +
    'raises #GP, so this request cannot be traced (docs/sdm/errata.md)');
}

function checkOutput(caps: PtCaps, req: TraceRequest): void {
  const o = req.output;
  if (o.scheme === 'single-range') {
    need(caps, 'singleRangeOutput', 'Single-range output');
    if (!isPow2(o.size) || o.size < 128) throw new PtError('bad_config', `single-range size ${o.size} is not a power of two ≥ 128`);
    return;
  }
  need(caps, 'topaOutput', 'ToPA output');
  // Every policy but single-entry puts several output entries in a table (docs/sdm/output.md §4.6).
  if (o.policy !== 'single-entry') need(caps, 'topaMultipleEntries', `ToPA policy "${o.policy}" (multiple output entries per table)`);
  topaSizeEncoding(o.regionSize); // topa_error unless 4 KiB << 0..15
  const minRegions = o.policy === 'single-entry' ? 1 : o.policy === 'protect-unread' || o.policy === 'circular-fresh' || o.policy === 'budget' ? 3 : 2;
  if (!Number.isSafeInteger(o.regions) || o.regions < minRegions) {
    throw new PtError('bad_config', `ToPA policy "${o.policy}" needs at least ${minRegions} regions, got ${o.regions}`);
  }
  const entries = o.tableEntries ?? 512;
  if (!Number.isSafeInteger(entries) || entries < 2 || entries > 512 || entries < o.regions + 1) {
    throw new PtError('bad_config', `a table of ${entries} entries cannot hold ${o.regions} regions and an END (2..512 entries per 4 KiB table)`);
  }
  if (o.policy === 'budget') {
    const budget = o.budget ?? DEFAULT_TOPA_BUDGET;
    if (!Number.isSafeInteger(budget) || budget < o.regions * o.regionSize) {
      throw new PtError('bad_config', `ToPA budget ${budget} bytes is smaller than the first ${o.regions} regions of ${o.regionSize} bytes`);
    }
  }
}

function checkRanges(caps: PtCaps, req: TraceRequest): void {
  const ranges = req.ranges ?? [];
  if (ranges.length === 0) return;
  // L14.0.EBX[2] enumerates IP filtering and TraceStop together (docs/sdm/cpuid.md).
  need(caps, 'ipFiltering', ranges.some((r) => r.role === 'tracestop') ? 'IP filtering and TraceStop' : 'IP filtering');
  if (ranges.length > 4 || ranges.length > caps.numAddressRanges) {
    const where = cpuidBitName('numAddressRanges');
    throw new UnsupportedError(`${ranges.length} address ranges`, where,
      `${ranges.length} address ranges are not supported: ${where} = ${caps.numAddressRanges}`);
  }
  const width = caps.maxLinearAddr > 0 ? caps.maxLinearAddr : 48;
  for (const [n, r] of ranges.entries()) {
    if (!isCanonical(r.a, width) || !isCanonical(r.b, width)) throw new PtError('bad_config', `address range ${n} is not canonical for ${width}-bit linear addresses`);
    if (r.a > r.b) throw new PtError('bad_config', `address range ${n}: ADDR${n}_A > ADDR${n}_B`);
  }
}
