// `ptlab doctor` verdicts from recorded host facts, and the real command once on this host.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { doctorCommand } from '../../harness/cli/commands/doctor.js';
import { diagnose, qemuLeaf14Shortfalls, type HostFacts } from '../../harness/qemu/doctor.js';

/** An Ice Lake server host with kvm_intel pt_mode=1 (values shaped like a real /proc/cpuinfo). */
const PT_HOST: HostFacts = {
  qemuVersion: 'QEMU emulator version 8.2.2',
  kvmUsable: true,
  kvmModules: ['kvm_intel', 'kvm'],
  cpuinfo: 'processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr vmx intel_pt xsaves\n',
  ptMode: 1,
  kernelRelease: '6.1.0-56-amd64',
  qemuAcceptsPt: { accepted: true, detail: 'accepted' },
  // Leaf 0x14 as an Ice Lake reports it: 0.EBX=0x2f, 0.ECX=0x7, 1.EAX=0x02490002, 1.EBX=0x003f3fff.
  leaf14: [{ eax: 1, ebx: 0x2f, ecx: 0x7, edx: 0 }, { eax: 0x0249_0002, ebx: 0x003f_3fff, ecx: 0, edx: 0 }],
};

/** This lab's kind of host: AMD EPYC, kvm_pvm, no PT. */
const AMD_PVM_HOST: HostFacts = {
  qemuVersion: 'QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)',
  kvmUsable: true,
  kvmModules: ['kvm_pvm', 'kvm'],
  cpuinfo: 'processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu vme de pse tsc msr svm\n',
  kernelRelease: '6.6.0',
  qemuAcceptsPt: { accepted: false, detail: "refused: TCG doesn't support requested feature: CPUID.07H:EBX.intel-pt [bit 25]" },
};

describe('doctor verdicts', () => {
  test('a PT host with kvm_intel pt_mode=1 that QEMU accepts can run real PT', () => {
    expect(diagnose(PT_HOST).realPt).toBe(true);
  });

  test.for([
    { name: 'pt_mode=0', facts: { ...PT_HOST, ptMode: 0 } },
    { name: 'no intel_pt flag', facts: { ...PT_HOST, cpuinfo: PT_HOST.cpuinfo.replace(' intel_pt', '') } },
    { name: 'QEMU refuses +intel-pt,enforce', facts: { ...PT_HOST, qemuAcceptsPt: { accepted: false, detail: 'refused' } } },
    { name: 'kvm_intel not loaded', facts: { ...PT_HOST, kvmModules: ['kvm'] } },
    { name: '/dev/kvm unusable', facts: { ...PT_HOST, kvmUsable: false } },
    { name: 'an AMD host with kvm_pvm', facts: AMD_PVM_HOST },
  ])('$name: no real-PT run', ({ facts }) => {
    expect(diagnose(facts).realPt).toBe(false);
  });

  test('no guest image: the qemu target is not usable, said in its own line and in every matrix row', () => {
    const d = diagnose({ ...PT_HOST, guestImage: { found: false, missing: 'no guest image in /x/images/out (run `npm run images`)' } });
    expect([d.findings.find((f) => f.what === 'guest image'), d.realPt, [...new Set(d.matrix.map((r) => r.qemuModel))]]).toEqual([
      { ok: false, what: 'guest image', detail: 'no guest image in /x/images/out (run `npm run images`)' }, false, ['no: no guest image (npm run images)'],
    ]);
    expect(diagnose({ ...PT_HOST, guestImage: { found: true, dir: '/x/images/out' } }).matrix[0]!.qemuModel).toBe('yes');
  });

  test('perf\'s intel_pt PMU is checked: registered with its type, or not', () => {
    const find = (f: HostFacts) => diagnose(f).findings.find((x) => x.what === 'perf\'s intel_pt PMU');
    expect([find({ ...PT_HOST, perfIntelPtType: 8 })?.ok, /type 8/.test(find({ ...PT_HOST, perfIntelPtType: 8 })!.detail), find(AMD_PVM_HOST)?.ok]).toEqual([true, true, false]);
  });

  test('an absent pt_mode with kvm_intel loaded is explained by CONFIG_BROKEN', () => {
    const { ptMode: _drop, ...noPtMode } = PT_HOST;
    const d = diagnose(noPtMode);
    expect(d.realPt).toBe(false);
    expect(d.findings.find((f) => f.what === 'kvm_intel pt_mode')?.detail).toMatch(/CONFIG_BROKEN/);
  });

  test('guest-RAM access is reported: mapped, or the pread fallback with its reason; it never decides real PT', () => {
    const mapped = diagnose({ ...PT_HOST, ramMap: { mapped: true } });
    expect(mapped.findings.find((f) => f.what === 'guest RAM access')).toMatchObject({ ok: true, detail: expect.stringMatching(/^mmap/) });
    const slow = diagnose({ ...PT_HOST, ramMap: { mapped: false, reason: 'Node\'s headers (node_api.h) were not found' } });
    expect(slow.findings.find((f) => f.what === 'guest RAM access')).toMatchObject({ ok: false, detail: expect.stringMatching(/pread.*node_api\.h/) });
    expect(slow.realPt).toBe(true);
    expect(diagnose(PT_HOST).findings.some((f) => f.what === 'guest RAM access')).toBe(false);
  });

  test('XSAVES of PT state and PMI preservation never run inside a KVM guest, even on a PT host', () => {
    const m = diagnose(PT_HOST).matrix;
    expect(m.find((r) => r.scenario.startsWith('XSAVES'))?.qemuKvm).toMatch(/^never/);
    expect(m.find((r) => r.scenario.startsWith('PMI preservation'))?.qemuKvm).toMatch(/^never/);
  });
});

describe('QEMU leaf 0x14 requirements (docs/prior-art.md §5)', () => {
  test('QEMU own values meet its requirements', () => {
    expect(qemuLeaf14Shortfalls({ eax: 1, ebx: 0xf, ecx: 0x7, edx: 0 }, { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 })).toEqual([]);
  });

  test.for([
    { name: 'one address range', sub0: { eax: 1, ebx: 0xf, ecx: 0x7, edx: 0 }, sub1: { eax: 0x0249_0001, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
    { name: 'no single-range output (ECX bit 2)', sub0: { eax: 1, ebx: 0xf, ecx: 0x3, edx: 0 }, sub1: { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
    { name: 'LIP set but not requested', sub0: { eax: 1, ebx: 0xf, ecx: 0x8000_0007, edx: 0 }, sub1: { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
    { name: 'max sub-leaf 0', sub0: { eax: 0, ebx: 0xf, ecx: 0x7, edx: 0 }, sub1: { eax: 0x0249_0002, ebx: 0x003f_1fff, ecx: 0, edx: 0 } },
  ])('$name is a shortfall', ({ sub0, sub1 }) => {
    expect(qemuLeaf14Shortfalls(sub0, sub1)).toHaveLength(1);
  });
});

const hostHasPt = /^flags\s*:.*\bintel_pt\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));

describe.skipIf(hostHasPt)('ptlab doctor on this host (no intel_pt in /proc/cpuinfo)', () => {
  test('reports that no real-PT run is possible and exits 1', async () => {
    let out = '';
    const status = await doctorCommand([], { out: (s) => { out += s; }, err: () => undefined });
    expect(status).toBe(1);
    expect(out).toMatch(/real PT: no PT run is possible/);
    expect(out).toMatch(/\[ok\]  guest RAM access: mmap/);
  });
});
