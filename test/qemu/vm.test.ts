// One TCG guest for the whole file (docs/qemu.md §2: ~4 s boot): QMP, guest agent, guest RAM, cleanup.
import { randomBytes } from 'node:crypto';
import { access, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HelperError, StateError, TargetError } from '../../harness/link/errors.js';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { QemuVm } from '../../harness/qemu/vm.js';
import type { QemuConfig } from '../../harness/qemu/config.js';
import { qemuTestEnv } from './env.js';

const env = await qemuTestEnv();

function processGone(pid: number | undefined): boolean {
  if (pid === undefined) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

async function missing(path: string): Promise<boolean> {
  return access(path).then(() => false, () => true);
}

/** The bytes `xp /Nxb` prints, e.g. "0000000000009000: 0x01 0x02 …". */
function parseXpBytes(text: string): number[] {
  return [...text.matchAll(/0x([0-9a-f]{2})\b/g)].map((m) => Number.parseInt(m[1]!, 16));
}

describe.skipIf(env.skip)(`a TCG guest${env.skip ? ` (skipped: ${env.reason})` : ''}`, () => {
  let vm: QemuVm;
  let helper: HelperChannel;
  let logDir: string;
  let config: QemuConfig;

  beforeAll(async () => {
    if (env.skip) return;
    logDir = await mkdtemp(join(tmpdir(), 'ptlab-qemu-test-'));
    config = { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: env.image.kernel, initrd: env.image.initrd };
    vm = await QemuVm.launch(config, { consoleLog: join(logDir, 'console.log'), timeoutMs: 60_000 });
    helper = new HelperChannel(vm.paths.helperSocket);
    await helper.connect({ timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await helper?.close();
    await vm?.dispose();
    if (logDir !== undefined) await rm(logDir, { recursive: true, force: true });
  });

  test('QMP reports the VM running after boot', async () => {
    const status = await vm.qmp.execute<{ status: string; running: boolean }>('query-status');
    expect(status).toMatchObject({ status: 'running', running: true });
  });

  test('the QMP greeting names the QEMU version', () => {
    expect(vm.qmp.greeting?.version.qemu.major).toBeGreaterThanOrEqual(7);
  });

  test('an unknown QMP command fails with QmpError carrying the class and the command', async () => {
    const err = await vm.qmp.execute('no-such-command').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'QmpError', errorClass: 'CommandNotFound', sent: { execute: 'no-such-command' } });
  });

  test('stop and cont raise the STOP and RESUME events', async () => {
    using events = vm.qmp.subscribe(['STOP', 'RESUME']);
    await vm.qmp.execute('stop');
    await vm.qmp.execute('cont');
    const signal = AbortSignal.timeout(5000);
    expect((await events.take({ signal })).value?.event).toBe('STOP');
    expect((await events.take({ signal })).value?.event).toBe('RESUME');
  });

  test('the guest agent answers a ping', async () => {
    await expect(vm.agent.ping()).resolves.toBeUndefined();
  });

  test('exec returns stdout, stderr and the exit code', async () => {
    const r = await vm.agent.exec('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exitCode: 3, signal: null });
  });

  test('fileRead returns /proc/version of the image kernel', async () => {
    const text = Buffer.from(await vm.agent.fileRead('/proc/version')).toString('utf8');
    expect(text).toContain(`Linux version ${env.skip ? '' : env.image.manifest.kernelVersion}`);
  });

  test('a ping to a stopped VM times out, and after cont the agent resynchronises', async () => {
    await vm.qmp.execute('stop');
    try {
      const err = await vm.agent.ping({ timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TargetError);
      expect(err).toMatchObject({ phase: 'qga-command', failure: 'timeout' });
    } finally {
      await vm.qmp.execute('cont');
    }
    const r = await vm.agent.exec('/bin/echo', ['after-resync']);
    expect(r.stdout).toBe('after-resync\n');
  });

  test('the SSH port forward reaches the guest dropbear', async () => {
    expect(vm.sshPort).toBeGreaterThan(0);
    const banner = await new Promise<string>((resolve, reject) => {
      const s = createConnection({ host: '127.0.0.1', port: vm.sshPort! });
      s.setTimeout(5000, () => { s.destroy(); reject(new Error('no SSH banner')); });
      s.once('data', (d) => { s.destroy(); resolve(d.toString('utf8')); });
      s.once('error', reject);
    });
    expect(banner).toMatch(/^SSH-2\.0-dropbear/);
  });

  test('the guest helper answers a ping', async () => {
    await expect(helper.ping()).resolves.toBeUndefined();
  });

  // docs/qemu.md §5: under TCG `-cpu max` reports an AMD vendor and maximum basic leaf 0xD.
  test('CPUID leaf 0 through the helper gives the max model vendor and maximum leaf', async () => {
    const r = await helper.cpuid(0, 0, 0);
    const vendor = Buffer.alloc(12);
    vendor.writeUInt32LE(r.ebx, 0);
    vendor.writeUInt32LE(r.edx, 4);
    vendor.writeUInt32LE(r.ecx, 8);
    expect({ maxLeaf: r.eax, vendor: vendor.toString('latin1') }).toEqual({ maxLeaf: 0xd, vendor: 'AuthenticAMD' });
  });

  // docs/qemu.md §5: the PT MSRs read 0 under TCG (no #GP).
  test('RDMSR of IA32_RTIT_CTL through the helper reads 0 under TCG', async () => {
    await expect(helper.rdmsr(0, 0x570)).resolves.toBe(0n);
  });

  test('RDMSR on a CPU the guest does not have is a helper nodev error', async () => {
    const err = await helper.rdmsr(7, 0x570).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelperError);
    expect(err).toMatchObject({ helperCode: 'nodev' });
  });

  test('exec through the helper returns the status and both outputs', async () => {
    const r = await helper.exec('echo out; echo err >&2; exit 3');
    expect({ ...r, stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString() })
      .toEqual({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n' });
  });

  // The kernel never uses the first 64 KiB (CONFIG_X86_RESERVE_LOW), so the host may scribble there.
  const SCRATCH_PA = 0x9000n;

  test('bytes written through the shared RAM file are what HMP xp shows at that PA', async () => {
    const data = new Uint8Array(randomBytes(16));
    const saved = await vm.ram.read(SCRATCH_PA, 16);
    try {
      await vm.ram.write(SCRATCH_PA, data);
      const xp = await vm.qmp.hmp(`xp /16xb 0x${SCRATCH_PA.toString(16)}`);
      expect(parseXpBytes(xp)).toEqual([...data]);
    } finally {
      await vm.ram.write(SCRATCH_PA, saved);
    }
  });

  test('bytes written through the shared RAM file are what pmemsave reads back', async () => {
    const data = new Uint8Array(randomBytes(64));
    const saved = await vm.ram.read(SCRATCH_PA, 64);
    try {
      await vm.ram.write(SCRATCH_PA, data);
      expect(await vm.ram.pmemsave(SCRATCH_PA, 64)).toEqual(data);
    } finally {
      await vm.ram.write(SCRATCH_PA, saved);
    }
  });

  test('bytes the guest writes appear in the shared RAM file at the PA pmemsave reads them from', async () => {
    const marker = randomBytes(24);
    // Sent base64-encoded, so the raw marker exists only where the guest decoded it.
    const r = await vm.agent.exec('/bin/sh', ['-c', `echo ${marker.toString('base64')} | base64 -d > /dev/shm/marker`]);
    expect(r.exitCode).toBe(0);
    const pa = await findInFile(vm.paths.memPath, marker);
    expect(pa).toBeDefined();
    expect(Buffer.from(await vm.ram.pmemsave(BigInt(pa!), marker.length))).toEqual(marker);
    expect(Buffer.from(await vm.ram.read(BigInt(pa!), marker.length))).toEqual(marker);
  });

  test('a VM that never boots is timed out and cleaned up', async () => {
    const err = await QemuVm.launch({ ...config, startStopped: true }, {
      waitForAgent: true, timeoutMs: 1500, consoleLog: join(logDir, 'stopped.log'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetError);
    expect(err).toMatchObject({ phase: 'boot', failure: 'timeout' });
    const ev = (err as TargetError).evidence;
    const memPath = /mem-path=([^,]+)/.exec(ev.argv?.join(' ') ?? '')?.[1];
    expect(memPath).toMatch(/^\/dev\/shm\/ptlab-/);
    expect(await missing(memPath!)).toBe(true);
    expect(processGone(ev.pid)).toBe(true);
  });

  test('a QEMU that does not answer quit is killed, reported as an abnormal shutdown, and cleaned up', async () => {
    const hung = await QemuVm.launch({ ...config, startStopped: true }, {
      waitForAgent: false, quitTimeoutMs: 300, consoleLog: join(logDir, 'hung.log'),
    });
    process.kill(hung.pid!, 'SIGSTOP');
    const err = await hung.dispose().catch((e: unknown) => e);
    expect(err).toMatchObject({ phase: 'shutdown', failure: 'abnormal_shutdown' });
    expect(processGone(hung.pid)).toBe(true);
    expect(await missing(hung.paths.memPath)).toBe(true);
    expect(await missing(hung.paths.runDir)).toBe(true);
  });

  test('QEMU refusing Intel PT is reported as pt_refused', async () => {
    const err = await QemuVm.launch({ ...config, cpu: 'max,+intel-pt,enforce' }, {
      timeoutMs: 10_000, consoleLog: join(logDir, 'pt.log'),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'target_failed', phase: 'launch', failure: 'pt_refused' });
  });

  test('the image directory, its keys and the initramfs (which carries the SSH host key) are private to this user', async () => {
    if (env.skip) throw new Error(env.reason);
    const mode = async (p: string) => (await stat(p)).mode & 0o777;
    const modes = await Promise.all([env.image.dir, dirname(env.image.clientKey), env.image.initrd, env.image.clientKey].map(mode));
    expect(modes).toEqual([0o700, 0o700, 0o600, 0o600]);
  });

  test('the guest RAM file and the console log are private (0600) while the VM runs', async () => {
    const modes = await Promise.all([vm.paths.memPath, vm.consoleLog].map(async (p) => (await stat(p)).mode & 0o777));
    expect(modes).toEqual([0o600, 0o600]);
  });

  test('the default console log lives in a private directory and goes with the VM, unless kept on request', async () => {
    const quick = { waitForAgent: false, timeoutMs: 10_000 } as const;
    const plain = await QemuVm.launch(config, quick);
    const kept = await QemuVm.launch(config, { ...quick, keepConsoleLog: true });
    const dirMode = (await stat(dirname(plain.consoleLog))).mode & 0o777;
    const logMode = (await stat(plain.consoleLog)).mode & 0o777;
    await plain.dispose();
    await kept.dispose();
    const keptThere = !(await missing(kept.consoleLog));
    await rm(kept.consoleLog, { force: true });
    expect([dirMode, logMode, await missing(plain.consoleLog), keptThere]).toEqual([0o700, 0o600, true, true]);
  });

  test('dispose quits QEMU and removes the RAM file and the socket directory', async () => {
    const { pid } = vm;
    await vm.dispose();
    expect(processGone(pid)).toBe(true);
    expect(await missing(vm.paths.memPath)).toBe(true);
    expect(await missing(vm.paths.runDir)).toBe(true);
    expect(await missing(vm.consoleLog)).toBe(false);
  });

  test('QMP after dispose throws StateError naming both states', async () => {
    const err = await vm.qmp.execute('query-status').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateError);
    expect(err).toMatchObject({ state: 'closed', required: ['running'] });
  });
});

/** The file offset of the first occurrence of `needle`, read in chunks. */
async function findInFile(path: string, needle: Buffer): Promise<number | undefined> {
  const fh = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(16 << 20);
    for (let pos = 0; ; pos += chunk.length - needle.length) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
      const at = chunk.subarray(0, bytesRead).indexOf(needle);
      if (at >= 0) return pos + at;
      if (bytesRead < chunk.length) return undefined;
    }
  } finally {
    await fh.close();
  }
}
