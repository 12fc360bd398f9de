// Refuse, before any MSR is written, everything a request asks that the CPU
// does not enumerate (issue 4 item 1; docs/sdm/cpuid.md; docs/sdm/msrs.md §3.1–§3.3
// gates and encoding bitmaps). Errors name the capability and the CPUID bit.
import { UnsupportedError, PtError } from './errors.js';
import { cpuidBitName, type PtCapFlag, type PtCapNumber, type PtCaps } from './hw/cpuid.js';
import { isCanonical } from './hw/msrs.js';
import { topaSizeEncoding } from './hw/topa.js';
import { DEFAULT_TOPA_BUDGET, type TraceRequest } from './request.js';

function need(caps: PtCaps, cap: PtCapFlag, capability: string): void {
  if (!caps[cap]) throw new UnsupportedError(capability, cpuidBitName(cap));
}

/** An encoding must have its bit set in a CPUID bitmap (docs/sdm/msrs.md §3.3 rules 5–7). */
function needEncoding(caps: PtCaps, bitmap: PtCapNumber, field: string, enc: number): void {
  if (!Number.isInteger(enc) || enc < 0 || enc > 15) throw new PtError('bad_config', `${field} encoding ${enc} is not in 0..15`);
  if (((caps[bitmap] >>> enc) & 1) === 0) {
    const where = `${cpuidBitName(bitmap)} bit ${enc}`;
    throw new UnsupportedError(`${field} encoding ${enc}`, where, `${field} encoding ${enc} is not supported: ${where} = 0 (bitmap 0x${caps[bitmap].toString(16)})`);
  }
}

const isPow2 = (n: number): boolean => Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;

/** Throws UnsupportedError (capability + CPUID bit) or PtError('bad_config') unless `caps` can run `req`. */
export function checkRequest(caps: PtCaps, req: TraceRequest): void {
  need(caps, 'intelPt', 'Intel PT');
  checkOutput(caps, req);
  if (req.cr3Match !== undefined) {
    need(caps, 'cr3Filtering', 'CR3 filtering');
    if ((req.cr3Match & 0x1fn) !== 0n) throw new PtError('bad_config', `CR3 match value 0x${req.cr3Match.toString(16)} has bits 4:0 set`);
  }
  if (req.psbFreq !== undefined) { need(caps, 'psbCyc', 'Configurable PSB frequency'); needEncoding(caps, 'psbPeriods', 'PSBFreq', req.psbFreq); }
  if (req.cyc) { need(caps, 'psbCyc', 'Cycle-accurate mode (CYC)'); needEncoding(caps, 'cycThresholds', 'CycThresh', req.cyc.thresh); }
  if (req.mtc) { need(caps, 'mtc', 'MTC packets'); needEncoding(caps, 'mtcPeriods', 'MTCFreq', req.mtc.freq); }
  if (req.ptwrite) need(caps, 'ptwrite', 'PTWRITE');
  if (req.powerEvents) need(caps, 'powerEvents', 'Power event trace');
  if (req.eventTrace) need(caps, 'eventTrace', 'Event trace');
  if (req.disTnt) need(caps, 'tntDisable', 'TNT disable');
  if (req.pmiPreservation) need(caps, 'pmiPreservation', 'PSB and PMI preservation');
  checkRanges(caps, req);
  if (req.switching === 'xsaves') {
    need(caps, 'xsaves', 'XSAVES/XRSTORS');
    need(caps, 'xssPtState', 'XSAVES of PT state (IA32_XSS[8])');
  }
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
