// The guest module's policy and lifecycle (guest/kmod/ptlab.c), and the helper's, in one TCG guest
// with two CPUs: the WRMSR allowlist, the reach check before any TraceEn=1, files that own their
// CPUs, buffers and event rings, the release that leaves nothing behind, rmmod, NMIs the module
// does not claim, the top half that freezes the workload, held starts (the late enable), and what
// the helper keeps to itself. A second helper runs over SSH, as a second lane or a second tool
// would, with its own file. Under TCG the PT MSRs read 0 and take no write: everything that needs
// a tracing CPU is in docs/hardware.md. The guest boots with pti=on: page-table isolation, which
// this AMD-vendor CPU does not need, so that a workload's CR3 is the user page-table root. CI runs
// this file on the 6.1 and on the 6.12 image (.ci/run).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PtError } from '../../driver/base/errors.js';
import type { TargetEvent, Workload } from '../../driver/target.js';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import type { HelperExecution } from '../../harness/link/helper-execution.js';
import { PTLAB_ABI } from '../../harness/link/kstate.js';
import { DEFAULT_APPEND } from '../../harness/qemu/config.js';
import { QemuTarget } from '../../harness/qemu/qemu-target.js';
import { imageSshKeys, SshClient, type SshConfig } from '../../harness/ssh/ssh-client.js';
import { qemuTestEnv } from './env.js';
import { exitImage } from './tcg-knobs.js';

const env = await qemuTestEnv();

const IA32_TSC_AUX = 0xc000_0103; // in the test guest's allow_msr=
const IA32_MISC_ENABLE = 0x1a0;
const CTL = 0x570, OUTPUT_BASE = 0x560, MASK_PTRS = 0x561;
const TRACE_TOPA = 0x2101n; // TraceEn, ToPA, BranchEn
const TRACE_SINGLE = 0x2001n; // TraceEn, BranchEn: single-range output
const END = 1n, INT = 4n, STOP = 16n;
/** `jmp $`: a workload that runs until it is killed. */
const LOOP: Workload = { name: 'loop', image: Uint8Array.from([0xeb, 0xfe]), base: 0x1000_0000n, entry: 0x1000_0000n };

/** The helper error code of a rejected request, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(() => 'ok', (e: unknown) => (e as { helperCode?: string }).helperCode ?? (e as PtError).code);
}

/** Resolves when `cond` holds, polling every 50 ms; rejects after `ms`. */
async function until(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; ;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(env.skip)(`the guest module's policy on a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let t: QemuTarget;
  let logDir: string;
  let cfg: SshConfig;
  const h = (): HelperChannel => t.helper;

  const sh = async (cmd: string): Promise<string> => new TextDecoder().decode((await h().exec(cmd)).stdout);
  /** One process's state letter from /proc/PID/stat (R running, S sleeping, T stopped, t traced). */
  const stateOf = async (pid: number): Promise<string> => (await sh(`cat /proc/${pid}/stat 2>/dev/null`)).replace(/^.*\) /s, '')[0] ?? '-';
  const unknownNmis = async (): Promise<number> => (await sh('dmesg')).match(/NMI received for unknown reason/g)?.length ?? 0;

  /** A second helper, over SSH with its own file of the module (as a second lane or tool would). */
  const second = async (): Promise<{ h: HelperChannel } & AsyncDisposable> => {
    const ssh = await SshClient.connect(cfg);
    const chan = new HelperChannel('ssh ptlab-helper', await ssh.openExec('ptlab-helper'));
    await chan.connect({ timeoutMs: 20_000 });
    return { h: chan, [Symbol.asyncDispose]: async () => { await chan.close(); await ssh.close(); } };
  };

  beforeAll(async () => {
    if (env.skip) return;
    logDir = await mkdtemp(join(tmpdir(), 'ptlab-module-policy-'));
    t = await QemuTarget.launch(
      { accel: 'tcg', cpu: 'max', smp: 2, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd, append: `${DEFAULT_APPEND} pti=on` },
      { consoleLog: join(logDir, 'console.log'), timeoutMs: 90_000, allowMsr: true },
    );
    const keys = await imageSshKeys(env.image.hostKeyPub, env.image.clientKey);
    cfg = { host: '127.0.0.1', port: t.vm.sshPort!, username: 'root', privateKey: keys.privateKey, hostKey: keys.hostKey };
    await (await SshClient.connectWhenReady(cfg, { timeoutMs: 30_000 })).close();
  });

  afterAll(async () => {
    if (t !== undefined) {
      const console = await readFile(t.vm.consoleLog, 'utf8');
      await t.dispose();
      expect(console).not.toMatch(/Oops|BUG:|general protection fault|Call Trace/);
    }
    if (logDir !== undefined) await rm(logDir, { recursive: true, force: true });
  });

  test('the guest runs the image\'s kernel, and its module speaks the host\'s interface (PTLAB_ABI), not locked down', async () => {
    expect((await sh('uname -r')).trim()).toBe(env.skip ? '' : env.image.manifest.kernelVersion);
    expect(await h().kstate()).toMatchObject({ abi: PTLAB_ABI, lockdown: false, nrCpus: 2 });
  });

  describe('the WRMSR allowlist', () => {
    test('IA32_MISC_ENABLE (0x1a0) is refused with EPERM, and nothing of a batch holding it runs', async () => {
      await h().wrmsr(0, IA32_TSC_AUX, 1n);
      expect(await outcome(h().wrmsr(0, IA32_MISC_ENABLE, 0n))).toBe('perm');
      expect(await outcome(h().msrBatch(0, [
        { op: 'wrmsr', msr: IA32_TSC_AUX, value: 5n },
        { op: 'wrmsr', msr: IA32_MISC_ENABLE, value: 0n },
      ]))).toBe('perm');
      expect(await h().rdmsr(0, IA32_TSC_AUX)).toBe(1n);
    });

    test('a PT MSR passes the policy; TCG then drops the write (it reads 0)', async () => {
      await h().wrmsr(0, OUTPUT_BASE, 0x1000n);
      await h().wrmsr(0, CTL, 0x2000n);
      expect([await h().rdmsr(0, OUTPUT_BASE), await h().rdmsr(0, CTL)]).toEqual([0n, 0n]);
    });
  });

  describe('the reach check: a TraceEn=1 reaches only the file\'s buffers', () => {
    let T = 0n, T2 = 0n, R = 0n, R8 = 0n;
    const entries = (...e: bigint[]): Uint8Array => {
      const b = Buffer.alloc(4096);
      e.forEach((v, i) => b.writeBigUInt64LE(v, i * 8));
      return b;
    };
    beforeAll(async () => {
      if (env.skip) return;
      T = (await t.phys.alloc(4096, 4096)).base;
      T2 = (await t.phys.alloc(4096, 4096)).base;
      R = (await t.phys.alloc(4096, 4096)).base;
      R8 = (await t.phys.alloc(8192, 8192)).base;
    });
    const topa = (mask = 0x7fn): (bigint | undefined)[] => [T, mask, TRACE_TOPA];
    /** [tables written] → the batch's OUTPUT_BASE, MASK_PTRS and CTL (undefined: not written). */
    const cases: { name: string; want: 'ok' | 'inval'; tables?: () => [bigint, Uint8Array][]; out: () => (bigint | undefined)[] }[] = [
      { name: 'a single range inside a buffer', want: 'ok', out: () => [R, 0xfffn, TRACE_SINGLE] },
      { name: 'a single range larger than its buffer', want: 'inval', out: () => [R, 0x1fffn, TRACE_SINGLE] },
      { name: 'TraceEn alone, with the CPU\'s own OUTPUT_BASE (0 under TCG)', want: 'inval', out: () => [undefined, undefined, TRACE_TOPA] },
      { name: 'a ToPA ring: one region, then an END back to the table', want: 'ok', tables: () => [[T, entries(R, T | END)]], out: topa },
      { name: 'a ToPA region outside the buffers', want: 'inval', tables: () => [[T, entries(0x10_0000n, T | END)]], out: topa },
      { name: 'an END chain into a second table ending in STOP', want: 'ok', tables: () => [[T, entries(R, T2 | END)], [T2, entries(R8 | (1n << 6n) | STOP)]], out: topa },
      { name: 'an END chain whose second table names outside', want: 'inval', tables: () => [[T, entries(R, T2 | END)], [T2, entries(0x20_0000n | STOP)]], out: topa },
      { name: 'an END to a table outside the buffers', want: 'inval', tables: () => [[T, entries(R, 0x40_0000n | END)]], out: topa },
      { name: 'a region larger than its buffer (8 KiB in a 4 KiB one)', want: 'inval', tables: () => [[T, entries(R | (1n << 6n) | STOP)]], out: topa },
      { name: 'a single output region (entry 1 an END to its own table), INT set', want: 'ok', tables: () => [[T, entries(R | INT, T | END)]], out: topa },
      { name: 'STOP ends the walk: the entry after it is never reached', want: 'ok', tables: () => [[T, entries(R | STOP, 0x30_0000n)]], out: topa },
      { name: 'a ring back into a table already walked', want: 'ok', tables: () => [[T, entries(R, R, T2 | END)], [T2, entries(R8 | (1n << 6n), T | END)]], out: topa },
      { name: 'entries past the end of the table\'s buffer (no END, no STOP)', want: 'inval', tables: () => [[T, entries(...Array<bigint>(512).fill(R))]], out: topa },
      { name: 'the walk starts at the current entry (MASK_PTRS index 2)', want: 'ok', tables: () => [[T, entries(0x10_0000n, 0x10_0000n, R | STOP)]], out: () => topa((2n << 7n) | 0x7fn) },
    ];
    test.for(cases)('$name: $want, and a refused batch runs none of its WRMSRs', async ({ want, tables, out }) => {
      for (const [at, data] of tables?.() ?? []) await t.phys.write(at, data);
      const [base, mask, ctl] = out();
      await h().wrmsr(0, IA32_TSC_AUX, 0n);
      const marker = 0xabcn;
      const got = await outcome(h().msrBatch(0, [
        { op: 'wrmsr', msr: IA32_TSC_AUX, value: marker },
        ...(base === undefined ? [] : [{ op: 'wrmsr' as const, msr: OUTPUT_BASE, value: base }]),
        ...(mask === undefined ? [] : [{ op: 'wrmsr' as const, msr: MASK_PTRS, value: mask }]),
        { op: 'wrmsr', msr: CTL, value: ctl! },
      ]));
      expect({ got, marker: await h().rdmsr(0, IA32_TSC_AUX) }).toEqual({ got: want, marker: want === 'ok' ? marker : 0n });
    });

    test('a single WRMSR of TraceEn=1 is checked the same way', async () => {
      expect(await outcome(h().wrmsr(0, CTL, TRACE_TOPA))).toBe('inval');
    });

    test('an XRSTORS image with TraceEn=1 naming memory outside is refused; one inside passes the policy (then TCG lacks XSAVES)', async () => {
      await t.phys.write(T, entries(R, T | END));
      const image = (base: bigint): Uint8Array => {
        const a = Buffer.alloc(600);
        a.writeBigUInt64LE(1n << 8n, 512); // XSTATE_BV: PT state
        a.writeBigUInt64LE((1n << 63n) | (1n << 8n), 520); // XCOMP_BV: compacted, component 8
        a.writeBigUInt64LE(TRACE_TOPA, 576); // IA32_RTIT_CTL
        a.writeBigUInt64LE(base, 584); // IA32_RTIT_OUTPUT_BASE
        a.writeBigUInt64LE(0x7fn, 592); // IA32_RTIT_OUTPUT_MASK_PTRS
        return a;
      };
      expect([await outcome(h().xrstors(0, image(0x10_0000n), 1n << 8n)), await outcome(h().xrstors(0, image(T), 1n << 8n))])
        .toEqual(['inval', 'unsupported']);
    });
  });

  describe('files own their CPUs, buffers and events', () => {
    test('a second helper\'s file gets EBUSY on the first\'s CPU, buffer and armed CPU, and none of its events', async () => {
      await t.reopenModule();
      await t.wrmsr(0, CTL, 0x2000n); // CPU 0: programmed by the first file
      const buf = t.moduleBuffer((await t.phys.alloc(4096, 4096)).base)!;
      await t.pmiEnable(1); // CPU 1: armed by it
      await using b = await second();
      using theirs = b.h.subscribe();
      await b.h.pmiEvents(true);
      const refused = {
        wrmsr: await outcome(b.h.wrmsr(0, CTL, 0n)),
        free: await outcome(b.h.free(buf.id)),
        bufread: await outcome(b.h.bufRead(buf.id, 0, 8)),
        arm: await outcome(b.h.pmiArm(1, { clearTraceEn: false, freeze: false })),
        armProgrammed: await outcome(b.h.pmiArm(0, { clearTraceEn: false, freeze: false })),
        pmitest: await outcome(b.h.pmiTest(1)),
        unmask: await outcome(b.h.pmiUnmask(1)),
        read: await outcome(b.h.rdmsr(0, CTL)),
      };
      expect(refused).toEqual({ wrmsr: 'busy', free: 'busy', bufread: 'busy', arm: 'busy', armProgrammed: 'busy', pmitest: 'busy', unmask: 'busy', read: 'ok' });
      using ours = h().subscribe();
      await h().pmiTest(1);
      expect((await ours.take({ signal: AbortSignal.timeout(5000) })).value).toMatchObject({ kind: 'pmi', fields: expect.arrayContaining(['0x1']) });
      const leak = await Promise.race([theirs.take({ signal: AbortSignal.timeout(500) }).then((e) => e.value, () => undefined), new Promise((r) => setTimeout(r, 600))]);
      expect(leak).toBeUndefined();
      expect(await b.h.kstate()).toMatchObject({ files: 2, mineBuffers: 0, armed: [1], armedMine: [], owned: [0], ownedMine: [] });
    });

    test('closing a file that holds buffers, an armed and a programmed CPU leaves nothing: 0 buffers, nothing armed or owned, no orphan', async () => {
      await t.reopenModule();
      {
        await using b = await second();
        await b.h.alloc(4096);
        await b.h.alloc(65536);
        await b.h.wrmsr(1, CTL, 0x2000n);
        await b.h.pmiArm(1, { clearTraceEn: true, freeze: true });
        expect(await h().kstate()).toMatchObject({ files: 2, buffers: 2, bytes: 69632, armed: [1], owned: [1] });
      }
      await until(async () => (await h().kstate()).files === 1);
      expect(await h().kstate()).toMatchObject({ buffers: 0, bytes: 0, orphans: 0, orphanBytes: 0, armed: [], owned: [], taken: [] });
    });

    test('the helper\'s own reopen is a release too', async () => {
      await t.phys.alloc(8192, 8192);
      await t.wrmsr(0, CTL, 0x2000n);
      await t.pmiEnable(0);
      await t.reopenModule();
      expect(await h().kstate()).toMatchObject({ files: 1, buffers: 0, orphans: 0, armed: [], owned: [], taken: [] });
    });

    test('rmmod is refused while a file is open, and unloads once the last one closed', async () => {
      await t.closeModule();
      const b = await second();
      await b.h.alloc(4096);
      await b.h.pmiArm(1, { clearTraceEn: false, freeze: true });
      const refused = await h().exec('rmmod ptlab');
      expect(refused.exitCode).not.toBe(0);
      expect(await sh('lsmod | grep -c ^ptlab')).toMatch(/^1/);
      await b[Symbol.asyncDispose]();
      await until(async () => (await h().exec('rmmod ptlab')).exitCode === 0);
      expect(await sh('lsmod | grep -c ^ptlab')).toMatch(/^0/);
      const load = await h().exec('insmod /lib/modules/$(uname -r)/extra/ptlab.ko allow_msr=$(cat /etc/ptlab-allow-msr)');
      expect(load.exitCode, new TextDecoder().decode(load.stderr)).toBe(0);
      await t.reopenModule();
      expect(await h().kstate()).toMatchObject({ files: 1, buffers: 0, orphans: 0, armed: [], owned: [], taken: [] });
      expect(await sh('dmesg')).not.toMatch(/ptlab: .*(stay|kept TraceEn|still traces)/);
    });
  });

  describe('NMIs only where ptlab traces', () => {
    test('an NMI while nothing is armed is not claimed: the guest kernel reports it as unknown', async () => {
      expect((await h().kstate()).armed).toEqual([]);
      const before = await unknownNmis();
      await t.vm.qmp.execute('inject-nmi');
      await until(async () => (await unknownNmis()) > before);
    });

    test('on an armed CPU without the perf MSRs (TCG) the handler does not fault and claims nothing', async () => {
      await t.pmiEnable(1);
      using sub = h().subscribe();
      const before = await unknownNmis();
      await t.vm.qmp.execute('inject-nmi');
      await until(async () => (await unknownNmis()) > before);
      await h().pmiTest(1); // a marker: the first event must be this one, not a claimed NMI
      const ev = await sub.take({ signal: AbortSignal.timeout(5000) });
      expect(BigInt(ev.value!.fields[1]!) & 4n).toBe(4n); // PTLAB_EV_SYNTHETIC
      expect(await sh('dmesg')).not.toMatch(/Oops|BUG:|general protection fault|Call Trace/);
      await t.pmiDisarm(1);
    });
  });

  describe('the top half freezes the workload', () => {
    /** A looping workload on CPU 1, armed with the freeze, and frozen by a synthetic PMI; the event's flags. */
    const frozenLoop = async (): Promise<{ x: HelperExecution; flags: bigint }> => {
      const x = t.start(LOOP, 1) as HelperExecution;
      await until(async () => x.pid !== undefined);
      await t.pmiEnable(1);
      using sub = h().subscribe();
      await h().pmiTest(1);
      const ev = await sub.take({ signal: AbortSignal.timeout(5000) });
      expect(await stateOf(x.pid!)).toBe('T');
      return { x, flags: BigInt(ev.value!.fields[1]!) };
    };

    test('a looping workload is stopped (T) when its frozen PMI arrives, and runs (R) once the driver pulls the next event', async () => {
      await using x = t.start(LOOP, 1) as HelperExecution;
      await until(async () => x.pid !== undefined && (await stateOf(x.pid)) === 'R');
      await t.pmiEnable(1); // arms CPU 1 with the freeze; its workload is the task to stop
      const it = x.events[Symbol.asyncIterator]();
      await h().pmiTest(1);
      const ev = (await it.next()).value as TargetEvent;
      expect(ev).toMatchObject({ kind: 'pmi', cpu: 1, frozen: true });
      expect(await stateOf(x.pid!)).toBe('T');
      const next = it.next(); // sends cont before it waits
      await until(async () => (await stateOf(x.pid!)) === 'R');
      await x[Symbol.asyncDispose]();
      expect((await next).value).toMatchObject({ kind: 'fault' });
      await t.pmiDisarm(1);
    });

    test('a disarm lets a frozen workload run on', async () => {
      const { x, flags } = await frozenLoop();
      await using _ = x;
      expect(flags & 8n).toBe(8n); // PTLAB_EV_FROZEN
      await t.pmiDisarm(1);
      await until(async () => (await stateOf(x.pid!)) === 'R');
    });

    test('a frozen workload the CPU\'s task is replaced on runs on (the module sends it SIGCONT)', async () => {
      const { x } = await frozenLoop();
      await using _ = x;
      await h().pmiTask(1, 0);
      await until(async () => (await stateOf(x.pid!)) === 'R');
      await t.pmiDisarm(1);
    });

    test('a workload holds none of the helper\'s files: not the module\'s, which would hold its release back', async () => {
      await using x = t.start(LOOP, 1) as HelperExecution;
      await until(async () => x.pid !== undefined);
      const fds = (await sh(`ls -l /proc/${x.pid}/fd`)).split('\n').filter((l) => l.includes('->')).map((l) => l.replace(/^.*-> /, ''));
      expect(fds).toEqual(['/dev/null', '/dev/null', '/dev/null']);
    });
  });

  describe('the helper', () => {
    test('exec answers perm unless the helper was started with --allow-exec (only the test guest\'s port helper is)', async () => {
      await using b = await second();
      expect(await outcome(b.h.exec('true'))).toBe('perm');
      expect((await h().exec('true')).exitCode).toBe(0);
    });

    test('it keeps off the CPUs it armed or ran a workload on, and the workload runs pinned to its CPU', async () => {
      await using x = t.start(LOOP, 1) as HelperExecution;
      await until(async () => x.pid !== undefined);
      const allowed = async (pid: string): Promise<string> => (await sh(`grep Cpus_allowed_list /proc/${pid}/status`)).replace(/^.*:\s*/, '').trim();
      expect({ helper: await allowed('$PPID'), workload: await allowed(String(x.pid)) }).toEqual({ helper: '0', workload: '1' });
    });
  });

  describe('held starts (the late enable)', () => {
    test('a held workload waits at its entry, traced, and exits with its code only after go', async () => {
      await using x = t.start(exitImage(7), 1, { held: true }) as HelperExecution;
      await x.placed();
      expect(await stateOf(x.pid!)).toBe('t');
      const it = x.events[Symbol.asyncIterator]();
      const first = it.next();
      expect(await Promise.race([first.then(() => 'event'), new Promise((r) => setTimeout(() => r('none'), 500))])).toBe('none');
      await x.go();
      expect((await first).value).toEqual({ kind: 'exit', cpu: 1, code: 7 });
    });

    test('the CR3 is the user page-table root (page-aligned, bit 12 set under PTI), differs between two held children; disposing kills them', async () => {
      expect(` ${(await sh('grep -m1 ^flags /proc/cpuinfo')).trim()} `).toMatch(/ pti /);
      const x = t.start(exitImage(0), 0, { held: true }) as HelperExecution;
      const y = t.start(exitImage(0), 1, { held: true }) as HelperExecution;
      const [a, b] = [(await x.placed()).cr3, (await y.placed()).cr3];
      const pids = [x.pid!, y.pid!];
      await x[Symbol.asyncDispose]();
      await y[Symbol.asyncDispose]();
      expect({ defined: a !== undefined && b !== undefined, differ: a !== b }).toEqual({ defined: true, differ: true });
      for (const cr3 of [a!, b!]) expect({ low: cr3 & 0xfffn, user: (cr3 >> 12n) & 1n }).toEqual({ low: 0n, user: 1n });
      expect(await Promise.all(pids.map(stateOf))).toEqual(['-', '-']);
    });

    test('placed and go reject with bad_state on a workload not started held', async () => {
      await using x = t.start(exitImage(0), 1);
      expect(await outcome(x.placed())).toBe('bad_state');
      expect(await outcome(x.go())).toBe('bad_state');
    });
  });
});
