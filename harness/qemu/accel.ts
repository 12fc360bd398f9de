// Which QEMU accelerator and CPU model to use (docs/design.md "qemu": KVM with `-cpu host,+intel-pt`
// on PT hardware with kvm_intel, TCG elsewhere). `chooseAccel` is pure; `probeHostAccel` reads
// the host files it needs.
import { readFile, stat } from 'node:fs/promises';

/** The QEMU accelerators ptlab uses. */
export type Accel = 'tcg' | 'kvm';
/** What the user asked for (`--accel`); `auto` lets `chooseAccel` decide. */
export type AccelRequest = Accel | 'auto';

/** What the host says about itself, as read from /proc and /sys. */
export interface HostAccelFacts {
  /** The text of /proc/cpuinfo. */
  readonly cpuinfo: string;
  /** /sys/module/kvm_intel exists. */
  readonly kvmIntelLoaded: boolean;
  /** /sys/module/kvm_intel/parameters/pt_mode, when readable (0 = system mode, 1 = host-guest). */
  readonly ptMode?: number;
}

/** The decision, with the reason a report can print. */
export interface AccelChoice {
  readonly accel: Accel;
  readonly cpu: string;
  readonly reason: string;
}

/** The CPU model for KVM: refuse to start rather than drop PT silently (docs/qemu.md §5 `enforce`). */
export const KVM_PT_CPU = 'host,+intel-pt,enforce';
/** The CPU model for TCG: QEMU's most capable model (no PT: docs/qemu.md §5). */
export const TCG_CPU = 'max';

/** True when the first processor's `flags` line in /proc/cpuinfo lists `flag`. */
export function cpuinfoHasFlag(cpuinfo: string, flag: string): boolean {
  const line = cpuinfo.split('\n').find((l) => /^flags\s*:/.test(l));
  if (line === undefined) return false;
  return line.slice(line.indexOf(':') + 1).trim().split(/\s+/).includes(flag);
}

/**
 * KVM when asked for, or under `auto` when kvm_intel is loaded, the CPU has intel_pt and
 * kvm_intel's pt_mode (if readable) is 1; TCG otherwise.
 */
export function chooseAccel(request: AccelRequest, host: HostAccelFacts): AccelChoice {
  if (request === 'tcg') return { accel: 'tcg', cpu: TCG_CPU, reason: 'TCG requested' };
  if (request === 'kvm') return { accel: 'kvm', cpu: KVM_PT_CPU, reason: 'KVM requested' };
  if (!host.kvmIntelLoaded) return { accel: 'tcg', cpu: TCG_CPU, reason: 'kvm_intel is not loaded' };
  if (!cpuinfoHasFlag(host.cpuinfo, 'intel_pt')) {
    return { accel: 'tcg', cpu: TCG_CPU, reason: 'the host CPU has no intel_pt flag' };
  }
  if (host.ptMode !== undefined && host.ptMode !== 1) {
    return { accel: 'tcg', cpu: TCG_CPU, reason: `kvm_intel pt_mode=${host.ptMode} (host-guest mode 1 is needed)` };
  }
  return { accel: 'kvm', cpu: KVM_PT_CPU, reason: 'kvm_intel is loaded and the host CPU has intel_pt' };
}

/** Reads the facts `chooseAccel` needs from this host. */
export async function probeHostAccel(root = '/'): Promise<HostAccelFacts> {
  const cpuinfo = await readFile(`${root}proc/cpuinfo`, 'utf8').catch(() => '');
  const ptModeText = await readFile(`${root}sys/module/kvm_intel/parameters/pt_mode`, 'utf8').catch(() => undefined);
  // A loaded (or built-in) module has a directory under /sys/module.
  const kvmIntelLoaded = await stat(`${root}sys/module/kvm_intel`).then((s) => s.isDirectory(), () => false);
  const ptMode = ptModeText === undefined ? undefined : Number.parseInt(ptModeText.trim(), 10);
  return ptMode === undefined || Number.isNaN(ptMode) ? { cpuinfo, kvmIntelLoaded } : { cpuinfo, kvmIntelLoaded, ptMode };
}
