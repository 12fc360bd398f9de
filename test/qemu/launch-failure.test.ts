// Launch failures carry the evidence and leave nothing behind (no guest image needed).
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { TargetError } from '../../harness/link/errors.js';
import { findOnPath, QEMU_BINARY } from '../../harness/qemu/images.js';
import { QemuVm } from '../../harness/qemu/vm.js';
import type { QemuConfig } from '../../harness/qemu/config.js';

const config: QemuConfig = { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 64, kernel: '/nonexistent/vmlinux', initrd: '/nonexistent/initrd' };
const haveQemu = (await findOnPath(QEMU_BINARY)) !== undefined;
const logDir = await mkdtemp(join(tmpdir(), 'ptlab-qemu-test-'));
const consoleLog = join(logDir, 'console.log');
afterAll(() => rm(logDir, { recursive: true, force: true }));

async function gone(path: string): Promise<boolean> {
  return access(path).then(() => false, () => true);
}

function memPathOf(err: TargetError): string {
  return /mem-path=([^,]+)/.exec(err.evidence.argv?.join(' ') ?? '')?.[1] ?? '';
}

describe('QemuVm.launch failures', () => {
  test('a missing QEMU binary is a launch failure that says QEMU exited', async () => {
    const err = await QemuVm.launch({ ...config, qemuBinary: '/nonexistent/qemu-system-x86_64' }, { timeoutMs: 5000, consoleLog })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetError);
    expect(err).toMatchObject({ code: 'target_failed', phase: 'launch', failure: 'exited' });
  });

  test.skipIf(!haveQemu)('QEMU rejecting its command line is reported with its stderr and exit code, and cleaned up', async () => {
    const err = await QemuVm.launch(config, { timeoutMs: 10_000, consoleLog }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetError);
    const te = err as TargetError;
    expect(te).toMatchObject({ phase: 'launch', failure: 'exited', evidence: { exitCode: 1 } });
    expect(te.evidence.stderr).toContain('/nonexistent/vmlinux');
    expect(await gone(memPathOf(te))).toBe(true);
  });

  test("the caller's abort ends the launch with PtError('aborted')", async () => {
    const ac = new AbortController();
    ac.abort('test');
    await expect(QemuVm.launch(config, { signal: ac.signal, consoleLog })).rejects.toMatchObject({ code: 'aborted' });
  });
});
