// `npm run bench` section for the qemu target: boot time, MSR round
// trip through the helper channel vs a guest-agent exec vs an SSH exec, MSR batch throughput,
// and guest-RAM collection through the shared file vs Buffer.copy of the same size. Reported,
// not asserted: the targets (helper ≥ 50× faster than a QGA exec; RAM ≥ 0.5× Buffer.copy) are
// printed as met or not met.
import { performance } from 'node:perf_hooks';
import type { BenchContext, BenchSection, SectionReport } from './sections.js';
import { SshClient, imageSshKeys } from '../ssh/ssh-client.js';
import { findGuestImage, findOnPath, QEMU_BINARY } from '../qemu/images.js';
import { QemuTarget } from '../qemu/qemu-target.js';
import { openRamFile } from '../qemu/ram-file.js';

const IA32_TSC_AUX = 0xc000_0103;

/** Median of `n` timed runs of `fn`, in milliseconds. */
async function medianMs(n: number, fn: () => Promise<unknown>): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)]!;
}

/** The measurements, for callers that want numbers rather than lines. */
export interface QemuBenchResult {
  readonly bootMs: number;
  readonly helperRdmsrMs: number;
  readonly qgaExecMs: number;
  readonly sshExecMs: number;
  readonly batchOpsPerSec: number;
  readonly ramBytes: number;
  /** How the host reached guest RAM ('mmap' unless the addon was unavailable), and why not mmap. */
  readonly ramAccess: string;
  readonly ramSlowReason: string | undefined;
  /** Collection as the driver does it: straight into the stream's array (ReadOpts.into). */
  readonly ramReadMBs: number;
  /** The first read of a new buffer (populated at allocation). */
  readonly ramFirstReadMBs: number;
  /** A new array per read. */
  readonly ramReadNewMBs: number;
  /** pread on the same file, for comparison with the fallback. */
  readonly preadMBs: number;
  readonly bufferCopyMBs: number;
}

/** Boots one TCG guest and measures every path once. */
export async function runQemuBench(quick: boolean): Promise<QemuBenchResult | { skipped: string }> {
  if ((await findOnPath(QEMU_BINARY)) === undefined) return { skipped: `${QEMU_BINARY} is not installed` };
  const found = await findGuestImage();
  if ('missing' in found) return { skipped: found.missing };
  const img = found.image;
  const bootStart = performance.now();
  await using t = await QemuTarget.launch({ accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: img.kernel, initrd: img.initrd }, { timeoutMs: 120_000 });
  const bootMs = performance.now() - bootStart;
  const n = quick ? 20 : 100;
  const helperRdmsrMs = await medianMs(n, () => t.rdmsr(0, IA32_TSC_AUX));
  const qgaExecMs = await medianMs(quick ? 5 : 20, () => t.vm.agent.exec('/bin/true'));
  const keys = await imageSshKeys(img.hostKeyPub, img.clientKey);
  await using ssh = await SshClient.connectWhenReady({ host: '127.0.0.1', port: t.vm.sshPort!, username: 'root', ...keys }, { timeoutMs: 30_000 });
  const sshExecMs = await medianMs(quick ? 5 : 20, () => ssh.exec('true'));
  const ops = Array.from({ length: 256 }, () => ({ op: 'rdmsr' as const, msr: IA32_TSC_AUX }));
  const batchMs = await medianMs(quick ? 5 : 20, () => t.msrBatch(0, ops));
  const ramBytes = 4 << 20;
  const region = await t.phys.alloc(ramBytes, ramBytes);
  const stream = new Uint8Array(ramBytes).fill(0xff); // touched: its own page faults are not the first read's
  const firstMs = await medianMs(1, () => t.phys.read(region.base, ramBytes, { into: stream }));
  const reps = quick ? 10 : 40;
  const readMs = await medianMs(reps, () => t.phys.read(region.base, ramBytes, { into: stream }));
  const readNewMs = await medianMs(reps, () => t.phys.read(region.base, ramBytes));
  const pread = await openRamFile(t.vm.paths.memPath, Number(region.base) + ramBytes, { access: 'pread' });
  const preadMs = await medianMs(reps, async () => pread.readInto(Number(region.base), stream));
  pread.close();
  const src = Buffer.alloc(ramBytes, 1);
  const dst = Buffer.alloc(ramBytes);
  const copyMs = await medianMs(reps, async () => { src.copy(dst); });
  await t.phys.free(region);
  const mbs = (ms: number): number => ramBytes / 1e6 / (ms / 1000);
  return {
    bootMs, helperRdmsrMs, qgaExecMs, sshExecMs,
    batchOpsPerSec: 256 / (batchMs / 1000),
    ramBytes,
    ramAccess: t.vm.ram.access,
    ramSlowReason: t.vm.ram.slowPathReason,
    ramReadMBs: mbs(readMs),
    ramFirstReadMBs: mbs(firstMs),
    ramReadNewMBs: mbs(readNewMs),
    preadMBs: mbs(preadMs),
    bufferCopyMBs: mbs(copyMs),
  };
}

/** The section `harness/bench/sections.ts` registers. */
export const qemuSection: BenchSection = {
  name: 'qemu',
  async run({ quick }: BenchContext): Promise<SectionReport> {
    const r = await runQemuBench(quick);
    if ('skipped' in r) return { lines: [`qemu: skipped (${r.skipped})`], ok: true };
    const ratio = r.qgaExecMs / r.helperRdmsrMs;
    const ram = r.ramReadMBs / r.bufferCopyMBs;
    return {
      ok: true,
      lines: [
        `qemu (TCG guest, medians): boot to helper ready ${r.bootMs.toFixed(0)} ms`,
        `MSR round trip: helper ${r.helperRdmsrMs.toFixed(2)} ms, guest-agent exec ${r.qgaExecMs.toFixed(1)} ms, ssh exec ${r.sshExecMs.toFixed(1)} ms; ` +
          `helper is ${ratio.toFixed(0)}x faster than a guest-agent exec (target >= 50x${ratio >= 50 ? '' : ', NOT MET'})`,
        `MSR batch of 256 reads: ${(r.batchOpsPerSec / 1000).toFixed(1)} k ops/s`,
        `guest RAM collection (${r.ramAccess}, ${r.ramBytes >> 20} MiB into the stream): ${r.ramReadMBs.toFixed(0)} MB/s vs Buffer.copy ${r.bufferCopyMBs.toFixed(0)} MB/s = ` +
          `${ram.toFixed(2)}x (target >= 0.5x${ram >= 0.5 ? '' : ', NOT MET'})` + (r.ramSlowReason === undefined ? '' : ` [not mapped: ${r.ramSlowReason}]`),
        `guest RAM, other paths: first read of a new buffer ${r.ramFirstReadMBs.toFixed(0)} MB/s, a new array per read ${r.ramReadNewMBs.toFixed(0)} MB/s, ` +
          `pread fallback ${r.preadMBs.toFixed(0)} MB/s (${(r.preadMBs / r.bufferCopyMBs).toFixed(2)}x)`,
      ],
    };
  },
};
