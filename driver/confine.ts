// The trace confined to the workload (docs/design.md "Realism"). On a lab machine the traced CPU
// also runs the helper that started the workload, sshd, other processes and the kernel; with
// User=1 and no filter their user-mode code is traced too, and the trace is not the workload's.
// So the driver filters by default: an IP filter on the workload's image where the CPU has address
// ranges (docs/sdm/README.md §4), else a CR3 filter on the address space the workload runs in
// (§3.2), where the target can tell it. CPL filtering is the request's (User only by default).
import type { PtCaps } from './hw/cpuid.js';
import type { AddressRange, TraceRequest } from './request.js';
import type { Workload } from './target.js';

/** How `confine` narrowed a request, for the run's figures and notes. */
export type Confinement = 'ip-filter' | 'cr3-filter' | 'request' | 'none';

/**
 * `req` confined to `workload`: kept as it is when it already filters (an IP filter range, or
 * CR3_MATCH); else with an IP filter range over the image when the CPU has a free address range;
 * else with CR3_MATCH = `cr3` (the workload's address space, when the target knows it). `none`:
 * nothing could confine it (no free range, no CR3 known).
 */
export function confine(req: TraceRequest, workload: Workload, caps: PtCaps, cr3?: bigint): { req: TraceRequest; how: Confinement } {
  const ranges = req.ranges ?? [];
  if (ranges.some((r) => r.role === 'filter') || req.CR3_MATCH !== undefined) return { req, how: 'request' };
  if (caps.ipFiltering && ranges.length < caps.numAddressRanges) {
    const image: AddressRange = { role: 'filter', a: workload.base, b: workload.base + BigInt(Math.max(1, workload.image.length)) - 1n };
    return { req: { ...req, ranges: [...ranges, image] }, how: 'ip-filter' };
  }
  if (caps.cr3Filtering && cr3 !== undefined) return { req: { ...req, CR3_MATCH: cr3 }, how: 'cr3-filter' };
  return { req, how: 'none' };
}
