// QemuTarget against one TCG guest running the ptlab module and helper (guest/): MSRs through
// the module, a real #GP, CPUID, module buffers in the shared RAM file, pmemsave, the PT and
// XSAVES refusals, workloads, the PMI event path, and random ioctl arguments without an oops.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AllocationError, PtError, UnsupportedError } from '../../driver/base/errors.js';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import type { TargetEvent } from '../../driver/target.js';
import { xorshiftBytes } from '../../harness/link/helper-chan.js';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { qemuTestEnv } from './env.js';
import { exitImage } from './tcg-knobs.js';

const env = await qemuTestEnv();

const IA32_TSC_AUX = 0xc000_0103;
const IA32_PAT = 0x277;
/** IA32_PKRS: QEMU 7.2's TCG raises #GP for a write with bits 63:32 set (target/i386/tcg/sysemu/misc_helper.c). */
const IA32_PKRS = 0x6e1;


async function allEvents(events: AsyncIterable<TargetEvent>): Promise<TargetEvent[]> {
  const out: TargetEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

describe.skipIf(env.skip)(`QemuTarget on a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let t: QemuTarget;
  let logDir: string;

  beforeAll(async () => {
    if (env.skip) return;
    logDir = await mkdtemp(join(tmpdir(), 'ptlab-qemu-target-'));
    t = await QemuTarget.launch(
      { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd },
      // The tests write IA32_TSC_AUX and IA32_PKRS, outside the PT allowlist; the test guest's module lists them.
      { consoleLog: join(logDir, 'console.log'), timeoutMs: 90_000, allowMsr: true },
    );
  });

  afterAll(async () => {
    await t?.dispose();
    if (logDir !== undefined) await rm(logDir, { recursive: true, force: true });
  });

  test('the target is described as qemu:tcg and the guest loaded the ptlab module', () => {
    expect(t.description).toBe('qemu:tcg');
    expect(t.moduleLoaded).toBe(true);
  });

  test('CPUID leaf 0 of -cpu max under TCG names AuthenticAMD with max leaf 0xD (docs/qemu.md §5)', async () => {
    const r = await t.cpuid(0, 0);
    const vendor = Buffer.alloc(12);
    vendor.writeUInt32LE(r.ebx, 0); vendor.writeUInt32LE(r.edx, 4); vendor.writeUInt32LE(r.ecx, 8);
    expect({ vendor: vendor.toString('latin1'), maxLeaf: r.eax }).toEqual({ vendor: 'AuthenticAMD', maxLeaf: 0xd });
  });

  test('IA32_TSC_AUX takes a write, reads it back, and is restored', async () => {
    const old = await t.rdmsr(0, IA32_TSC_AUX);
    await t.wrmsr(0, IA32_TSC_AUX, 0x1234n);
    expect(await t.rdmsr(0, IA32_TSC_AUX)).toBe(0x1234n);
    await t.wrmsr(0, IA32_TSC_AUX, old);
    expect(await t.rdmsr(0, IA32_TSC_AUX)).toBe(old);
  });

  test('IA32_PAT reads the power-up value 0007040600070406H the kernel keeps for WB/WT/UC-/UC (SDM Vol. 3A "PAT")', async () => {
    // Linux rewrites PA4..PA7 (WC, WP at 1 and 5 in its layout) but keeps the bytes of PA0 (WB = 06) and PA3 (UC = 00).
    const pat = await t.rdmsr(0, IA32_PAT);
    expect(pat & 0xffn).toBe(0x06n);
    expect((pat >> 24n) & 0xffn).toBe(0x00n);
  });

  test('a WRMSR of IA32_PKRS with bit 32 set raises a real #GP, caught by the module', async () => {
    const e = await t.wrmsr(0, IA32_PKRS, 1n << 32n).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GeneralProtectionError);
    expect(e).toMatchObject({ vector: '#GP', msr: IA32_PKRS, value: 1n << 32n });
  });

  test('a batch stops at its #GP: the earlier write took effect, the later one did not run', async () => {
    await t.wrmsr(0, IA32_TSC_AUX, 0n);
    const res = await t.msrBatch(0, [
      { op: 'wrmsr', msr: IA32_TSC_AUX, value: 5n },
      { op: 'wrmsr', msr: IA32_PKRS, value: 1n << 33n },
      { op: 'wrmsr', msr: IA32_TSC_AUX, value: 6n },
    ]);
    expect(res.map((r) => r.ok)).toEqual([true, false]);
    expect(await t.rdmsr(0, IA32_TSC_AUX)).toBe(5n);
    await t.wrmsr(0, IA32_TSC_AUX, 0n);
  });

  test('RDMSR of an MSR QEMU 7.2 TCG does not implement reads 0 without #GP (why PT is probed by CPUID)', async () => {
    expect(await t.rdmsr(0, 0x570)).toBe(0n);
    await t.wrmsr(0, 0x570, 0x2000n); // BranchEn, TraceEn=0: past the module's policy, dropped by TCG
    expect(await t.rdmsr(0, 0x570)).toBe(0n);
  });

  test('--pt hardware is refused from CPUID: the guest CPU does not enumerate Intel PT', async () => {
    const p = await t.ptAvailable();
    expect(p.available).toBe(false);
    const e = await t.requirePt().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnsupportedError);
    expect((e as UnsupportedError).code).toBe('unsupported');
    expect((e as Error).message).toMatch(/does not enumerate Intel PT/);
    expect((e as Error).message).toMatch(/--pt model/);
  });

  test('XSAVES of component 8 is refused when CPUID.(EAX=0DH,ECX=1) lacks XSAVES or IA32_XSS[8]', async () => {
    const d1 = await t.cpuid(0xd, 1);
    expect(((d1.eax >>> 3) & 1) === 1 && ((d1.ecx >>> 8) & 1) === 1).toBe(false);
    const e = await t.xsaves(0, 1n << 8n).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnsupportedError);
    expect((e as Error).message).toMatch(/CPUID\.\(EAX=0DH,ECX=1\)/);
  });

  test('a module buffer of 4 MiB (order 10) is naturally aligned and zero-filled', async () => {
    const r = await t.phys.alloc(4 << 20, 4 << 20);
    try {
      expect(r.base % BigInt(4 << 20)).toBe(0n);
      expect((await t.phys.read(r.base, 4 << 20)).every((b) => b === 0)).toBe(true);
    } finally {
      await t.phys.free(r);
    }
  });

  test('more than 4 MiB contiguous is refused with AllocationError', async () => {
    await expect(t.phys.alloc(8 << 20, 4096)).rejects.toBeInstanceOf(AllocationError);
  });

  test('bytes the guest writes into a module buffer appear at its physical address in the shared RAM file', async () => {
    const r = await t.phys.alloc(64 * 1024, 64 * 1024);
    try {
      const id = t.moduleBuffer(r.base)!.id;
      await t.helper.bufFill(id, 0x1234);
      expect(t.vm.ram.shared).toBe(true);
      expect(t.vm.ram.access, t.vm.ram.slowPathReason).toBe('mmap');
      expect(await t.phys.read(r.base, 64 * 1024)).toEqual(xorshiftBytes(0x1234, 64 * 1024));
    } finally {
      await t.phys.free(r);
    }
  });

  test('bytes the host writes into the shared RAM file hash the same inside the guest', async () => {
    const r = await t.phys.alloc(128 * 1024, 4096);
    try {
      const data = xorshiftBytes(0xbeef, 128 * 1024);
      await t.phys.write(r.base, data);
      const id = t.moduleBuffer(r.base)!.id;
      expect(await t.helper.hash(id)).toBe(sha256(data));
    } finally {
      await t.phys.free(r);
    }
  });

  test('QMP pmemsave of a module buffer returns what the shared file holds', async () => {
    const r = await t.phys.alloc(16 * 1024, 4096);
    try {
      const data = xorshiftBytes(0x77, 16 * 1024);
      await t.phys.write(r.base, data);
      expect(await t.vm.ram.pmemsave(r.base, data.length)).toEqual(data);
    } finally {
      await t.phys.free(r);
    }
  });

  test('writes outside module buffers are refused with bad_address (the guest kernel lives there)', async () => {
    const e = await t.phys.write(0x10_0000n, new Uint8Array(8)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PtError);
    expect((e as PtError).code).toBe('bad_address');
  });

  test('a workload image runs at its base in the guest and its exit code arrives as an exit event', async () => {
    await using x = t.start(exitImage(7), 0);
    expect(await allEvents(x.events)).toEqual([{ kind: 'exit', cpu: 0, code: 7 }]);
  });

  test('a workload that hits INT3 ends with a fault event naming the signal', async () => {
    const image = Uint8Array.from([0xcc]);
    await using x = t.start({ name: 'int3', image, base: 0x1000_0000n, entry: 0x1000_0000n }, 0);
    const ev = await allEvents(x.events);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ kind: 'fault', cpu: 0 });
    expect(String((ev[0] as { error: Error }).error.message)).toMatch(/signal 5/);
  });

  test('an event the module records reaches the host through the helper stream', async () => {
    await t.pmiEnable(0);
    using sub = t.helper.subscribe();
    await t.helper.pmiTest(0);
    const ev = await sub.take({ signal: AbortSignal.timeout(5000) });
    expect(ev.value).toMatchObject({ kind: 'pmi' });
    expect(BigInt(ev.value!.fields[1]!) & 4n).toBe(4n); // PTLAB_EV_SYNTHETIC
  });

  test('an NMI without GLOBAL_STATUS bit 55 is not claimed as a ToPA PMI', async () => {
    await t.pmiEnable(0);
    using sub = t.helper.subscribe();
    await t.vm.qmp.execute('inject-nmi');
    await t.helper.pmiTest(0); // a marker: the next event must be this one, not a claimed NMI
    const ev = await sub.take({ signal: AbortSignal.timeout(5000) });
    expect(BigInt(ev.value!.fields[1]!) & 4n).toBe(4n);
  });

  test('1,000 random requests (ToPA tables, output MSRs and XRSTORS images among them) never oops the guest kernel and leave nothing allocated', async () => {
    let x = 0x9e3779b9;
    const rnd = (n: number): number => {
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      return x % n;
    };
    const pick = <T,>(a: readonly T[]): T => a[rnd(a.length)]!;
    const hex = (v: bigint | number): string => `0x${v.toString(16)}`;
    const numbers = [0, 1, 2, 7, 4095, 4096, 65536, 0x3fffff, 0x400000, 0x800000, 0xffffffff, 0x7fffffff];
    const big = ['0x0', '0x1', '0xffffffff', '0xffffffffffffffff', '0x8000000000000000', '0x100000000'];
    const h = t.helper;
    const bufs: { id: number; phys: bigint }[] = [];
    /** An address PT might be pointed at: inside a buffer of ours, just past one, or anywhere. */
    const addr = (): bigint => {
      const b = bufs.length > 0 ? pick(bufs) : undefined;
      return pick([b ? b.phys : 0n, b ? b.phys + BigInt(pick([0, 8, 0xff8, 0x1000, 0x10000])) : 0x1000n, BigInt(rnd(0x1000_0000)) & ~0xfffn]);
    };
    /** A ToPA entry: END, STOP, INT and the size at random, the base from addr(). */
    const entry = (): bigint => addr() | BigInt(rnd(16) << 6) | BigInt(pick([0, 1, 4, 16, 20]));
    const le = (v: bigint): string => Buffer.from(new BigUint64Array([v]).buffer).toString('hex');
    const image = (): string => {
      const a = Buffer.alloc(pick([0, 16, 576, 600, 640, 700]));
      if (a.length >= 528) { a.writeBigUInt64LE(pick([0n, 1n << 8n]), 512); a.writeBigUInt64LE(pick([0n, (1n << 63n) | (1n << 8n), (1n << 63n) | 0x1fcn]), 520); }
      if (a.length >= 600) { a.writeBigUInt64LE(pick([0n, 1n, 0x101n, 0x2101n]), 576); a.writeBigUInt64LE(addr(), 584); a.writeBigUInt64LE(BigInt(rnd(4) << 7) | 0x7fn, 592); }
      return a.length === 0 ? '-' : a.toString('hex');
    };
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const n = (): string => hex(pick(numbers));
      const cpu = String(pick([0, 0, 1, 3, 4096, 0xffffffff]));
      const id = (): string => String(bufs.length > 0 && rnd(4) > 0 ? pick(bufs).id : rnd(300));
      const req = pick([
        () => h.request('rdmsr', [cpu, hex(rnd(0x10000))]),
        () => h.request('wrmsr', [cpu, hex(pick([IA32_TSC_AUX, IA32_PKRS, 0x1a0, 0x570, 0x571, 0x560, 0x561])), pick(big)]),
        () => h.request('msrs', [cpu, `r${hex(rnd(0x2000))}`, `w${hex(IA32_PKRS)}=${pick(big)}`]),
        () => h.request('msrs', [cpu, `w0x560=${hex(addr())}`, `w0x561=${hex(BigInt(rnd(8) << 7) | BigInt(pick([0x7f, 0xfff, 0x1fff])))}`,
          `w0x570=${hex(pick([0x2001n, 0x2101n, 0x2141n, 0x2100n]))}`]),
        () => h.request('cpuid', [cpu, n(), n()]),
        async () => { const [bid, phys] = await h.request('alloc', [pick(['0x1000', '0x2000', '0x10000', n()])]); bufs.push({ id: Number(bid), phys: BigInt(phys!) }); return []; },
        () => h.request('free', [id()]),
        () => h.request('bufread', [id(), n(), hex(rnd(300000))]),
        () => h.request('bufwrite', [id(), hex(rnd(4) * 8), Array.from({ length: 1 + rnd(4) }, () => le(entry())).join('')]),
        () => h.request('hash', [id(), n(), n()]),
        () => h.request('xsaves', [cpu, pick(big)]),
        () => h.request('xrstors', [cpu, pick(['0x100', ...big]), image()]),
        () => h.request('arm', [cpu, hex(rnd(8))]),
        () => h.request('disarm', [cpu]),
        () => h.request('task', [cpu, String(pick([0, 1, 99999]))]),
        () => h.request('unmask', [cpu]),
        () => h.request('pmitest', [cpu]),
        () => h.request('kstate', []),
      ]);
      const code = await req().then(() => 'ok', (e: unknown) => {
        if (!(e instanceof PtError) || e.code === 'target_failed' && !('helperCode' in e)) throw e;
        return (e as { helperCode?: string }).helperCode ?? e.code;
      });
      outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
    }
    // The policy was met, not only bad syntax: refusals of each kind, and requests that passed.
    expect([...outcomes.keys()]).toEqual(expect.arrayContaining(['ok', 'perm', 'inval', 'gp', 'noent', 'nodev']));
    await h.reopen(); // the release: whatever the requests left, the module takes back
    expect(await h.kstate()).toMatchObject({ files: 1, buffers: 0, bytes: 0, orphans: 0, orphanBytes: 0, armed: [], owned: [], taken: [] });
    await t.wrmsr(0, IA32_PKRS, 0n);
    await t.wrmsr(0, IA32_TSC_AUX, 0n);
    const tainted = Number(new TextDecoder().decode((await h.exec('cat /proc/sys/kernel/tainted')).stdout).trim());
    expect(tainted & (1 << 7)).toBe(0); // taint flag D: the kernel died (an oops)
    const console = await readFile(t.vm.consoleLog, 'utf8');
    expect(console).not.toMatch(/Oops|BUG:|general protection fault|Call Trace/);
    const dmesg = new TextDecoder().decode((await h.exec('dmesg')).stdout);
    expect(dmesg).not.toMatch(/Oops|BUG:|general protection fault|Call Trace/);
  }, 60_000);
});
