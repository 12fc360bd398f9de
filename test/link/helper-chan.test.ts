// The helper line-protocol client against a fake helper (the real one runs in vm.test.ts).
import { describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import { HelperError, TargetError } from '../../harness/link/errors.js';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { fakeHelper } from './fake-helper.js';

describe('HelperChannel', () => {
  test('an err gp answer to rdmsr becomes GeneralProtectionError naming the MSR', async () => {
    await using h = await fakeHelper((verb) => (verb === 'ping' ? 'ok pong' : 'err gp Input/output error'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    const err = await chan.rdmsr(0, 0x571).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GeneralProtectionError);
    expect(err).toMatchObject({ vector: '#GP', msr: 0x571 });
  });

  test('an err gp answer to wrmsr carries the value written', async () => {
    await using h = await fakeHelper((verb) => (verb === 'ping' ? 'ok pong' : 'err gp Input/output error'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    await expect(chan.wrmsr(0, 0x570, 0x2001n)).rejects.toMatchObject({ msr: 0x570, value: 0x2001n });
  });

  test('other errors become HelperError with the helper code', async () => {
    await using h = await fakeHelper((verb) => (verb === 'ping' ? 'ok pong' : 'err nodev No such file or directory'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    await expect(chan.cpuid(3, 0x14, 0)).rejects.toBeInstanceOf(HelperError);
  });

  test('requests are sent with the CPU in decimal and the numbers in hex', async () => {
    const seen: string[] = [];
    await using h = await fakeHelper((verb, args) => {
      seen.push([verb, ...args].join(' '));
      return verb === 'ping' ? 'ok pong' : 'ok 0x14 0x1 0x0 0xffffffff';
    });
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    await expect(chan.cpuid(1, 0x14, 0)).resolves.toEqual({ eax: 0x14, ebx: 1, ecx: 0, edx: 0xffffffff });
    expect(seen.at(-1)).toBe('cpuid 1 0x14 0x0');
  });

  test('a request without an answer times out without blocking the next one', async () => {
    await using h = await fakeHelper((verb) => (verb === 'rdmsr' ? '' : 'ok pong'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    await expect(chan.rdmsr(0, 0x10, { timeoutMs: 50 })).rejects.toMatchObject({ phase: 'helper-command', failure: 'timeout' });
    await expect(chan.ping()).resolves.toBeUndefined();
  });

  test('a timeout the liveness probe explains loses the connection at once, with the probe\'s reason', async () => {
    await using h = await fakeHelper((verb) => (verb === 'rdmsr' ? '' : 'ok pong'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    let asked = 0;
    chan.watchLiveness(async () => { asked++; return 'QEMU is not responding'; });
    const [a, b] = await Promise.all([
      chan.rdmsr(0, 0x10, { timeoutMs: 50 }).catch((e: unknown) => e),
      chan.rdmsr(1, 0x10, { timeoutMs: 50 }).catch((e: unknown) => e),
    ]);
    const later = await chan.ping().catch((e: unknown) => e);
    expect({
      a: a instanceof TargetError && a.failure,
      b: b instanceof TargetError && /QEMU is not responding/.test(b.message),
      message: (a as Error).message,
      asked,
      lost: chan.lostBecause,
      later: later instanceof Error,
    }).toEqual({
      a: 'not_responding', b: true, message: 'helper-command: QEMU is not responding (after guest helper rdmsr timed out)', asked: 1,
      lost: 'QEMU is not responding (after guest helper rdmsr timed out)', later: true,
    });
  });

  test('a timeout the liveness probe finds alive stays a timeout, and the connection goes on', async () => {
    await using h = await fakeHelper((verb) => (verb === 'rdmsr' ? '' : 'ok pong'));
    await using chan = new HelperChannel(h.path);
    await chan.connect();
    chan.watchLiveness(async () => undefined);
    await expect(chan.rdmsr(0, 0x10, { timeoutMs: 50 })).rejects.toMatchObject({ failure: 'timeout' });
    await expect(chan.ping()).resolves.toBeUndefined();
    expect(chan.lostBecause).toBeUndefined();
  });
});
