// Probe and refusals: everything the CPU does not enumerate is refused with the
// capability and the CPUID bit named, before any MSR is written. Messages are written by hand
// from docs/sdm/cpuid.md and the profiles' leaf 14H values.
import { describe, expect, test } from 'vitest';
import { PROFILES, withLeaves } from '../../harness/sim/profiles.js';
import { PtError, UnsupportedError } from '../../driver/base/errors.js';
import { ErratumError } from '../../driver/hw/errata.js';
import { probe } from '../../driver/probe.js';
import type { TraceRequest } from '../../driver/request.js';
import { TraceSession } from '../../driver/session.js';
import { rig } from './rig.js';

const topa = (policy: 'grow' | 'single-entry' = 'grow'): TraceRequest['output'] => ({ scheme: 'topa', policy, regionSize: 4096, regions: 4 });
const noCr3 = withLeaves(PROFILES.skylake, 'no-cr3', [{ leaf: 0x14, regs: { eax: 1, ebx: 0xe, ecx: 0x7, edx: 0 } }]);
const noPt = withLeaves(PROFILES.skylake, 'no-pt', [{ leaf: 7, regs: { eax: 0, ebx: 0, ecx: 0, edx: 0 } }]);

describe('probe', () => {
  test('reads leaf 14H through the target into PtCaps', async () => {
    const r = await rig('skylake');
    const p = await probe(r.target, 0);
    expect([p.caps.topaOutput, p.caps.topaMultipleEntries, p.caps.singleRangeOutput, p.caps.numAddressRanges]).toEqual([true, true, true, 2]);
  });
  test('every CPUID read is in the transcript', async () => {
    const r = await rig('broadwell');
    await probe(r.target, 0);
    expect(r.target.lines.every((l) => l.op === 'cpuid')).toBe(true);
  });
  test('reports the CPU (CPUID.1:EAX) and its errata: Broadwell-E 06_4F stepping 1 has BDM106', async () => {
    const p = await probe((await rig('broadwell')).target, 0);
    expect([p.cpu, [...p.errata], p.warnings]).toEqual([{ family: 6, model: 0x4f, stepping: 1 }, ['BDM106', 'BDW-SINGLE-TOPA', 'BDM70', 'BDM64'], []]);
  });
  test('Skylake 06_5E has its packet errata and not BDM106', async () => {
    const p = await probe((await rig('skylake')).target, 0);
    expect([p.cpu, [...p.errata]]).toEqual([{ family: 6, model: 0x5e, stepping: 3 }, ['BDM70', 'SKD007', 'SKD022', 'SKD010', 'SKL014', 'SKL168']]);
  });
  test('a Broadwell model that enumerates multi-entry ToPA gets a warning, not an error', async () => {
    const mentry = withLeaves(PROFILES.broadwell, 'broadwell-mentry', [{ leaf: 0x14, regs: { eax: 0, ebx: 0x1, ecx: 0x3, edx: 0 } }]);
    const p = await probe((await rig(mentry)).target, 0);
    expect([p.caps.topaMultipleEntries, p.warnings]).toEqual([true, [
      'erratum BDW-SINGLE-TOPA applies to 06_4FH with CPUID.(EAX=14H,ECX=0):ECX[1] = 0, but this CPU enumerates 1',
    ]]);
  });
});

describe('errata: BranchEn=0 on a CPU with BDM106 is refused before any MSR is written', () => {
  const req = (BranchEn: boolean): TraceRequest => ({ output: topa('single-entry'), BranchEn });
  test('broadwell: ErratumError naming BDM106, code unsupported, no RDMSR or WRMSR', async () => {
    const r = await rig('broadwell');
    const err = await TraceSession.open(r.target, req(false)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ErratumError);
    expect([(err as ErratumError).erratum, (err as PtError).code]).toEqual(['BDM106', 'unsupported']);
    expect((err as Error).message).toBe('erratum BDM106 of this CPU: WRMSR IA32_RTIT_CTL with TraceEn=1 and BranchEn=0 raises #GP, so this request cannot be traced (docs/sdm/errata.md)');
    expect(r.target.lines.filter((l) => l.op !== 'cpuid')).toEqual([]);
  });
  test('broadwell with BranchEn=1 opens', async () => {
    const r = await rig('broadwell');
    await expect(TraceSession.open(r.target, req(true))).resolves.toBeInstanceOf(TraceSession);
  });
  test('skylake with BranchEn=0 opens', async () => {
    const r = await rig('skylake');
    await expect(TraceSession.open(r.target, req(false))).resolves.toBeInstanceOf(TraceSession);
  });
});

describe('refusals name the capability and the CPUID bit, and write no MSR', () => {
  test.for([
    { name: 'no PT at all', p: noPt, req: { output: topa() }, msg: 'Intel PT is not supported: CPUID.(EAX=07H,ECX=0):EBX[25] = 0' },
    { name: 'single range on Broadwell', p: 'broadwell', req: { output: { scheme: 'single-range', size: 4096 } }, msg: 'Single-range output is not supported: CPUID.(EAX=14H,ECX=0):ECX[2] = 0' },
    { name: 'multi-entry policy on Broadwell', p: 'broadwell', req: { output: topa('grow') }, msg: 'ToPA policy "grow" (multiple output entries per table) is not supported: CPUID.(EAX=14H,ECX=0):ECX[1] = 0' },
    { name: 'CR3 filter', p: noCr3, req: { output: topa(), CR3_MATCH: 0x1000n }, msg: 'CR3Filter needs CPUID.(EAX=14H,ECX=0):EBX[0] (CR3 filtering), which this CPU does not enumerate' },
    { name: 'MTC on Broadwell', p: 'broadwell', req: { output: topa('single-entry'), MTCFreq: 0 }, msg: 'MTCEn needs CPUID.(EAX=14H,ECX=0):EBX[3] (MTC), which this CPU does not enumerate' },
    { name: 'PTWRITE in a KVM guest', p: 'kvm-guest', req: { output: topa(), PTWEn: true }, msg: 'PTWEn needs CPUID.(EAX=14H,ECX=0):EBX[4] (PTWRITE), which this CPU does not enumerate' },
    { name: 'PMI preservation in a KVM guest', p: 'kvm-guest', req: { output: topa(), InjectPsbPmiOnEnable: true }, msg: 'InjectPsbPmiOnEnable needs CPUID.(EAX=14H,ECX=0):EBX[6] (PSB and PMI preservation), which this CPU does not enumerate' },
    { name: 'power events on Skylake', p: 'skylake', req: { output: topa(), PwrEvtEn: true }, msg: 'PwrEvtEn needs CPUID.(EAX=14H,ECX=0):EBX[5] (power event trace), which this CPU does not enumerate' },
    { name: 'TNT disable on Skylake', p: 'skylake', req: { output: topa(), DisTNT: true }, msg: 'DisTNT needs CPUID.(EAX=14H,ECX=0):EBX[8] (TNT disable), which this CPU does not enumerate' },
    { name: 'CYC on Broadwell', p: 'broadwell', req: { output: topa('single-entry'), CycThresh: 0 }, msg: 'CYCEn needs CPUID.(EAX=14H,ECX=0):EBX[1] (configurable PSB and cycle-accurate mode), which this CPU does not enumerate' },
    { name: 'PSBFreq 6 on Skylake (bitmap 0x3f)', p: 'skylake', req: { output: topa(), PSBFreq: 6 }, msg: 'PSBFreq encoding 6 is not supported: CPUID.(EAX=14H,ECX=1):EBX[31:16] bit 6 = 0 (bitmap 0x3f)' },
    { name: 'CycThresh 6 on Sapphire Rapids (bitmap 0x3f)', p: 'sapphire-rapids', req: { output: topa(), CycThresh: 6 }, msg: 'CycThresh encoding 6 is not supported: CPUID.(EAX=14H,ECX=1):EBX[15:0] bit 6 = 0 (bitmap 0x3f)' },
    { name: 'MTCFreq 1 on Skylake (bitmap 0x249)', p: 'skylake', req: { output: topa(), MTCFreq: 1 }, msg: 'MTCFreq encoding 1 is not supported: CPUID.(EAX=14H,ECX=1):EAX[31:16] bit 1 = 0 (bitmap 0x249)' },
    { name: '3 ranges on Skylake (RANGECNT 2)', p: 'skylake', req: { output: topa(), ranges: [0, 1, 2].map(() => ({ role: 'filter' as const, a: 0x1000n, b: 0x2000n })) }, msg: '3 address ranges are not supported: CPUID.(EAX=14H,ECX=1):EAX[2:0] = 2' },
    { name: 'XSAVES switching on Broadwell', p: 'broadwell', req: { output: topa('single-entry'), switching: 'xsaves' }, msg: 'XSAVES/XRSTORS is not supported: CPUID.(EAX=0DH,ECX=1):EAX[3] = 0' },
    { name: 'XSAVES switching in a KVM guest', p: 'kvm-guest', req: { output: topa(), switching: 'xsaves' }, msg: 'XSAVES of PT state (IA32_XSS[8]) is not supported: CPUID.(EAX=0DH,ECX=1):ECX[8] = 0' },
  ] as const)('$name', async ({ p, req, msg }) => {
    const r = await rig(p);
    const err = await TraceSession.open(r.target, req as TraceRequest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedError);
    expect([(err as UnsupportedError).code, (err as Error).message]).toEqual(['unsupported', msg]);
    expect(r.target.lines.filter((l) => l.op !== 'cpuid')).toEqual([]);
  });
});

describe('fail safe', () => {
  test('refuses when TraceEn is already 1, after one RDMSR of CTL and no write', async () => {
    const r = await rig('skylake');
    await r.sim.wrmsr(0, 0x560, 0x10_0000n);
    await r.sim.wrmsr(0, 0x570, 0x2109n); // someone else: TraceEn|User|ToPA|BranchEn
    const err = await TraceSession.open(r.target, { output: topa() }).catch((e: unknown) => e);
    expect([(err as { code?: string }).code, r.target.lines.filter((l) => l.op !== 'cpuid').map((l) => `${l.op} ${l.msr}`)])
      .toEqual(['pt_busy', ['rdmsr 0x570']]);
    expect((err as Error).message).toMatch(/^CPU 0 of sim:skylake is traced by someone else \(IA32_RTIT_CTL=0x2109, TraceEn=1\)/);
  });
});
