// `ptlab doctor`: what this host can run. `diagnose` is a pure function over the
// facts `gatherHostFacts` reads, so every verdict is testable with recorded host fixtures.
import { execa } from 'execa';
import { open, readdir, readFile } from 'node:fs/promises';
import type { CpuidRegs } from '../../driver/hw/cpuid.js';
import { cpuinfoHasFlag } from './accel.js';
import { findGuestImage, QEMU_BINARY } from './images.js';
import { loadRamMap } from './ram-map-addon.js';

/** What the host says about itself. */
export interface HostFacts {
  /** First line of `qemu-system-x86_64 --version`; undefined when QEMU is missing. */
  readonly qemuVersion?: string;
  /** /dev/kvm exists and opens read-write. */
  readonly kvmUsable: boolean;
  /** Loaded modules whose name starts with kvm (kvm_intel, kvm_amd, kvm_pvm …). */
  readonly kvmModules: readonly string[];
  readonly cpuinfo: string;
  /** /sys/module/kvm_intel/parameters/pt_mode; undefined when absent. */
  readonly ptMode?: number;
  readonly kernelRelease: string;
  /** QEMU started (stopped, -S) with `-cpu host,+intel-pt,enforce` under KVM; undefined when not tried. */
  readonly qemuAcceptsPt?: { readonly accepted: boolean; readonly detail: string };
  /** Host CPUID leaf 0x14 sub-leaves 0 and 1 (/dev/cpu/0/cpuid); undefined when unreadable. */
  readonly leaf14?: readonly [CpuidRegs, CpuidRegs];
  /** Whether the ram-map addon loads (guest RAM mapped), else why not (ram-map-addon.ts). */
  readonly ramMap?: { readonly mapped: true } | { readonly mapped: false; readonly reason: string };
  /** The guest image the qemu target boots (images.ts findGuestImage): where, or why there is none. */
  readonly guestImage?: { readonly found: true; readonly dir: string } | { readonly found: false; readonly missing: string };
  /** perf's intel_pt PMU (/sys/bus/event_source/devices/intel_pt/type): its type, or undefined when not registered. */
  readonly perfIntelPtType?: number;
}

/** One line of the report. */
export interface Finding {
  readonly ok: boolean;
  readonly what: string;
  readonly detail: string;
}

/** Where a scenario family can run. */
export interface ScenarioRow {
  readonly scenario: string;
  readonly sim: string;
  readonly qemuModel: string;
  readonly qemuKvm: string;
  readonly bareMetal: string;
}

export interface Diagnosis {
  readonly findings: readonly Finding[];
  /** A real-PT run (`--target qemu --pt hardware` under KVM) is possible on this host. */
  readonly realPt: boolean;
  readonly matrix: readonly ScenarioRow[];
}

/**
 * QEMU's fixed leaf-0x14 requirements on the host (docs/prior-art.md §5, QEMU
 * `x86_cpu_filter_features`): `intel-pt` is dropped unless all hold. Returns the unmet ones.
 */
export function qemuLeaf14Shortfalls(sub0: CpuidRegs, sub1: CpuidRegs, lip = false): string[] {
  const miss: string[] = [];
  const has = (v: number, m: number): boolean => ((v >>> 0) & m) >>> 0 === m >>> 0;
  if (sub0.eax === 0) miss.push('14H.0:EAX (max sub-leaf) = 0, QEMU needs ≥ 1');
  if (!has(sub0.ebx, 0xf)) miss.push(`14H.0:EBX = 0x${(sub0.ebx >>> 0).toString(16)} lacks bits 3:0 (0xF)`);
  if (!has(sub0.ecx, 0x7)) miss.push(`14H.0:ECX = 0x${(sub0.ecx >>> 0).toString(16)} lacks bits 2:0 (0x7)`);
  if (!has(sub1.eax, 0x0249_0000)) miss.push(`14H.1:EAX = 0x${(sub1.eax >>> 0).toString(16)} lacks MTC bitmap 0x0249 in 31:16`);
  if ((sub1.eax & 0x3) < 2) miss.push(`14H.1:EAX[2:0] = ${sub1.eax & 0x7} address ranges, QEMU needs ≥ 2`);
  if (!has(sub1.ebx, 0x003f_1fff)) miss.push(`14H.1:EBX = 0x${(sub1.ebx >>> 0).toString(16)} lacks 0x003F1FFF`);
  if (((sub0.ecx >>> 31) & 1) !== (lip ? 1 : 0)) miss.push(`14H.0:ECX[31] (LIP) = ${(sub0.ecx >>> 31) & 1} differs from intel-pt-lip=${lip ? 'on' : 'off'}`);
  return miss;
}

function vendorOf(cpuinfo: string): string {
  return /^vendor_id\s*:\s*(\S+)/m.exec(cpuinfo)?.[1] ?? 'unknown';
}

/** The verdicts for `facts`. */
export function diagnose(f: HostFacts): Diagnosis {
  const findings: Finding[] = [];
  const add = (ok: boolean, what: string, detail: string): void => { findings.push({ ok, what, detail }); };
  add(f.qemuVersion !== undefined, 'QEMU', f.qemuVersion ?? `${QEMU_BINARY} not found (apt-get install qemu-system-x86)`);
  const kvmIntel = f.kvmModules.includes('kvm_intel');
  add(f.kvmUsable, '/dev/kvm', f.kvmUsable ? `usable (modules: ${f.kvmModules.join(', ') || 'none listed'})` : 'missing or not accessible read-write');
  if (f.kvmModules.includes('kvm_pvm')) add(false, 'KVM flavour', 'kvm_pvm (Pagetable-based VM): boots only PVM guest kernels, not a stock kernel (docs/qemu.md §1)');
  const vendor = vendorOf(f.cpuinfo);
  add(vendor === 'GenuineIntel', 'CPU vendor', vendor);
  const ptFlag = cpuinfoHasFlag(f.cpuinfo, 'intel_pt');
  add(ptFlag, 'intel_pt in /proc/cpuinfo', ptFlag ? 'present' : 'absent: this CPU (or the hypervisor under it) offers no Intel PT');
  add(kvmIntel, 'kvm_intel', kvmIntel ? 'loaded' : 'not loaded');
  let ptModeOk = false;
  if (f.ptMode === undefined) {
    add(false, 'kvm_intel pt_mode', kvmIntel
      ? `absent on kernel ${f.kernelRelease}: since late 2024 pt_mode exists only in kernels built with CONFIG_BROKEN, so the host cannot give PT to guests without a custom kernel`
      : 'unknown (kvm_intel not loaded)');
  } else {
    ptModeOk = f.ptMode === 1;
    add(ptModeOk, 'kvm_intel pt_mode', f.ptMode === 1 ? '1 (host-guest: guests get PT)' : `${f.ptMode} (system mode: guests get no PT; reload kvm_intel with pt_mode=1)`);
  }
  const accepted = f.qemuAcceptsPt?.accepted === true;
  add(accepted, 'QEMU -cpu host,+intel-pt,enforce', f.qemuAcceptsPt === undefined ? 'not tried (no usable KVM)' : f.qemuAcceptsPt.detail);
  let leafOk = false;
  if (f.leaf14 === undefined) {
    add(false, 'host CPUID leaf 0x14', 'not readable (/dev/cpu/0/cpuid: load the cpuid module, run as root) or no PT');
  } else {
    const miss = qemuLeaf14Shortfalls(f.leaf14[0], f.leaf14[1]);
    leafOk = miss.length === 0;
    const regs = f.leaf14.map((r, i) => `14H.${i}: ${[r.eax, r.ebx, r.ecx, r.edx].map((v) => `0x${(v >>> 0).toString(16)}`).join(' ')}`).join('; ');
    add(leafOk, 'host leaf 0x14 vs QEMU requirements', leafOk ? `meets them (${regs})` : `${miss.join('; ')} (${regs})`);
  }
  if (f.ramMap !== undefined) {
    add(f.ramMap.mapped, 'guest RAM access', f.ramMap.mapped
      ? 'mmap of the shared RAM file (ram-map addon): collection runs near memcpy speed'
      : `pread of the shared RAM file, about ten times slower than mmap: ${f.ramMap.reason}`);
  }
  if (f.guestImage !== undefined) {
    add(f.guestImage.found, 'guest image', f.guestImage.found ? `built (${f.guestImage.dir})` : f.guestImage.missing);
  }
  // perf registers its intel_pt PMU where the kernel's PT driver found PT (arch/x86/events/intel/pt.c
  // pt_init): perf can trace here, and ptlab refuses a CPU perf traces on unless --reclaim.
  add(f.perfIntelPtType !== undefined, "perf's intel_pt PMU", f.perfIntelPtType !== undefined
    ? `registered (type ${f.perfIntelPtType}): perf can trace with intel_pt here; a CPU it traces on is refused unless --reclaim`
    : 'not registered (/sys/bus/event_source/devices/intel_pt): the kernel found no PT, so perf cannot trace with it here');
  const qemuModel = f.qemuVersion === undefined ? 'no: QEMU not found' : f.guestImage?.found === false ? 'no: no guest image (npm run images)' : 'yes';
  const realPt = f.qemuVersion !== undefined && f.guestImage?.found !== false && f.kvmUsable && vendor === 'GenuineIntel' && ptFlag && kvmIntel && ptModeOk && accepted && leafOk;
  const kvm = realPt ? 'yes' : 'no (see above)';
  const metal = vendor === 'GenuineIntel' && ptFlag ? 'yes (this host, via ssh + guest/ module)' : 'on a PT lab machine';
  const matrix: ScenarioRow[] = [
    { scenario: 'ToPA / single-range trace, ToPA PMI', sim: 'yes', qemuModel, qemuKvm: kvm, bareMetal: metal },
    { scenario: 'XSAVES/XRSTORS of PT state (IA32_XSS[8])', sim: 'yes', qemuModel: qemuModel === 'yes' ? 'yes (model)' : qemuModel, qemuKvm: 'never: KVM does not expose IA32_XSS[8] to guests', bareMetal: metal },
    { scenario: 'PMI preservation (CPUID.14H:EBX[6])', sim: 'yes', qemuModel: qemuModel === 'yes' ? 'yes (model)' : qemuModel, qemuKvm: 'never: QEMU leaf 0x14 EBX is 0xF', bareMetal: metal },
    { scenario: 'PTWRITE (CPUID.14H:EBX[4])', sim: 'yes', qemuModel: qemuModel === 'yes' ? 'yes (model)' : qemuModel, qemuKvm: 'never: QEMU leaf 0x14 EBX is 0xF', bareMetal: metal },
  ];
  return { findings, realPt, matrix };
}

/** The report as text lines. */
export function formatDiagnosis(d: Diagnosis): string[] {
  const lines = d.findings.map((x) => `${x.ok ? '[ok]  ' : '[no]  '}${x.what}: ${x.detail}`);
  lines.push('', 'scenario | sim | qemu --pt model | qemu KVM --pt hardware | bare metal (ssh)');
  for (const r of d.matrix) lines.push(`${r.scenario} | ${r.sim} | ${r.qemuModel} | ${r.qemuKvm} | ${r.bareMetal}`);
  lines.push('', d.realPt
    ? 'real PT: possible here (ptlab run --target qemu --accel kvm --pt hardware)'
    : 'real PT: no PT run is possible on this host; use --target sim, --target qemu --pt model, or an SSH lab machine with PT');
  return lines;
}

/** Reads the facts of this host (runs QEMU once, stopped, when KVM is usable). */
export async function gatherHostFacts(): Promise<HostFacts> {
  const version = await execa(QEMU_BINARY, ['--version'], { reject: false, timeout: 10_000 });
  const qemuVersion = version.exitCode === 0 ? String(version.stdout).split('\n')[0] : undefined;
  const kvmUsable = await open('/dev/kvm', 'r+').then(async (fh) => { await fh.close(); return true; }, () => false);
  // Loaded and built-in modules both have a directory under /sys/module.
  const kvmModules = (await readdir('/sys/module').catch(() => [] as string[])).filter((m) => m.startsWith('kvm'));
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const ptText = await readFile('/sys/module/kvm_intel/parameters/pt_mode', 'utf8').catch(() => undefined);
  const kernelRelease = (await readFile('/proc/sys/kernel/osrelease', 'utf8').catch(() => 'unknown')).trim();
  const leaf14 = await readLeaf14();
  const qemuAcceptsPt = qemuVersion !== undefined && kvmUsable ? await tryQemuPt() : undefined;
  const loaded = await loadRamMap();
  const ramMap = 'addon' in loaded ? { mapped: true as const } : { mapped: false as const, reason: loaded.unavailable };
  const image = await findGuestImage();
  const guestImage = 'image' in image ? { found: true as const, dir: image.image.dir } : { found: false as const, missing: image.missing };
  const perfType = await readFile('/sys/bus/event_source/devices/intel_pt/type', 'utf8').then((t) => Number.parseInt(t.trim(), 10), () => undefined);
  return {
    ramMap, guestImage,
    ...(perfType === undefined || Number.isNaN(perfType) ? {} : { perfIntelPtType: perfType }),
    ...(qemuVersion === undefined ? {} : { qemuVersion }),
    kvmUsable, kvmModules, cpuinfo, kernelRelease,
    ...(ptText === undefined ? {} : { ptMode: Number.parseInt(ptText.trim(), 10) }),
    ...(qemuAcceptsPt === undefined ? {} : { qemuAcceptsPt }),
    ...(leaf14 === undefined ? {} : { leaf14 }),
  };
}

async function readLeaf14(): Promise<readonly [CpuidRegs, CpuidRegs] | undefined> {
  try {
    const fh = await open('/dev/cpu/0/cpuid', 'r');
    try {
      const read = async (sub: number): Promise<CpuidRegs> => {
        const b = Buffer.alloc(16);
        await fh.read(b, 0, 16, sub * 2 ** 32 + 0x14);
        return { eax: b.readUInt32LE(0), ebx: b.readUInt32LE(4), ecx: b.readUInt32LE(8), edx: b.readUInt32LE(12) };
      };
      const leaf0 = Buffer.alloc(16);
      await fh.read(leaf0, 0, 16, 0);
      if (leaf0.readUInt32LE(0) < 0x14) return undefined;
      return [await read(0), await read(1)];
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

/** Starts QEMU stopped with `-cpu host,+intel-pt,enforce` under KVM: does it refuse? */
async function tryQemuPt(): Promise<{ accepted: boolean; detail: string }> {
  const r = await execa(QEMU_BINARY, ['-accel', 'kvm', '-machine', 'q35', '-cpu', 'host,+intel-pt,enforce', '-S', '-nodefaults', '-display', 'none', '-qmp', 'stdio'], {
    input: '{"execute":"qmp_capabilities"}\n{"execute":"quit"}\n', reject: false, timeout: 20_000,
  });
  const err = String(r.stderr).trim().split('\n').find((l) => l !== '') ?? '';
  if (r.exitCode === 0 && !/intel-pt/.test(String(r.stderr))) return { accepted: true, detail: 'accepted' };
  return { accepted: false, detail: `refused: ${err || `exit code ${r.exitCode}`}` };
}
