// `ptlab run` target options (harness/cli/commands/run.ts): --target qemu with --pt/--accel,
// --target ssh with --host/--port/--user/--key/--known-host, what is refused before anything
// runs, and how the ssh target finds its pinned host key (harness/ssh/known-hosts.ts).
import { describe, expect, test } from 'vitest';
import { parseRunArgs } from '../../harness/cli/commands/run.js';
import { pinnedHostKeys } from '../../harness/ssh/known-hosts.js';

const KEY = 'AAAAC3NzaC1lZDI1NTE5AAAAIHq0c2V0ZXN0a2V5Zm9ycHRsYWJ0ZXN0c29ubHkx';

describe('--target qemu', () => {
  test('defaults to the guest CPU\'s own PT (--pt hardware) and --accel auto', () => {
    expect(parseRunArgs(['topa-grow', '--target', 'qemu']).reach).toEqual({ kind: 'qemu', pt: 'hardware', accel: 'auto' });
  });

  test('--pt model --accel tcg keeps the model profiles of --cpu', () => {
    const p = parseRunArgs(['topa-grow', '--target', 'qemu', '--pt', 'model', '--accel', 'tcg', '--cpu', 'icelake']);
    expect([p.reach, p.profiles]).toEqual([{ kind: 'qemu', pt: 'model', accel: 'tcg' }, ['icelake']]);
  });

  test.for([
    { why: 'a model knob (negative controls are the sim\'s)', args: ['--pt', 'model', '--knob', 'no-topa-pmi'], msg: /--knob is a negative control of the sim target only/ },
    { why: '--cpu on the guest\'s own PT', args: ['--cpu', 'skylake'], msg: /--cpu chooses a model profile/ },
    { why: 'an unknown --pt', args: ['--pt', 'emulated'], msg: /--pt must be hardware or model/ },
    { why: 'an unknown --accel', args: ['--accel', 'hvf'], msg: /--accel must be auto, tcg or kvm/ },
    { why: 'an ssh option', args: ['--host', 'lab1'], msg: /--host does not apply to --target qemu/ },
  ])('refuses $why with PtError bad_config', ({ args, msg }) => {
    expect(() => parseRunArgs(['topa-grow', '--target', 'qemu', ...args])).toThrow(msg);
  });
});

describe('--target ssh', () => {
  test('takes host, port, user, key and pinned host key file', () => {
    const p = parseRunArgs(['--all', '--target', 'ssh', '--host', 'lab1', '--port', '2222', '--user', 'pt', '--key', 'id', '--known-host', 'kh']);
    expect(p.reach).toEqual({ kind: 'ssh', host: 'lab1', port: 2222, user: 'pt', key: 'id', knownHost: 'kh' });
  });

  test.for([
    { why: 'no --host', args: [], msg: /--target ssh needs --host/ },
    { why: 'a port out of range', args: ['--host', 'h', '--port', '70000'], msg: /--port must be 1..65535/ },
    { why: '--cpu (the machine has its own CPU)', args: ['--host', 'h', '--cpu', 'skylake'], msg: /--cpu chooses a model profile/ },
    { why: 'a qemu option', args: ['--host', 'h', '--pt', 'model'], msg: /--pt does not apply to --target ssh/ },
  ])('refuses $why with PtError bad_config', ({ args, msg }) => {
    expect(() => parseRunArgs(['topa-grow', '--target', 'ssh', ...args])).toThrow(msg);
  });
});

describe('--reclaim (take a CPU back from another tracer: harness/runner/claim.ts)', () => {
  test('goes with the CPU\'s own PT: qemu --pt hardware and ssh', () => {
    expect(parseRunArgs(['topa-grow', '--target', 'qemu', '--reclaim']).reach).toEqual({ kind: 'qemu', pt: 'hardware', accel: 'auto', reclaim: true });
    expect(parseRunArgs(['topa-grow', '--target', 'ssh', '--host', 'lab1', '--reclaim']).reach).toMatchObject({ kind: 'ssh', host: 'lab1', reclaim: true });
  });

  test.for([
    { where: 'the sim', args: [] },
    { where: 'qemu --pt model', args: ['--target', 'qemu', '--pt', 'model'] },
  ])('is refused on $where, whose CPUs are the model\'s and fresh for every run', ({ args }) => {
    expect(() => parseRunArgs(['topa-grow', ...args, '--reclaim'])).toThrow(/--reclaim takes a real CPU back from another tracer/);
  });

  test('is never the default', () => {
    expect(parseRunArgs(['topa-grow', '--target', 'ssh', '--host', 'lab1']).reach).not.toHaveProperty('reclaim');
  });
});

test('qemu and ssh options on the sim target are refused', () => {
  expect(() => parseRunArgs(['topa-grow', '--accel', 'tcg'])).toThrow(/--accel does not apply to --target sim/);
});

describe('the pinned host key', () => {
  test('an OpenSSH public key file gives its type and key', () => {
    expect(pinnedHostKeys(`ssh-ed25519 ${KEY} root@guest\n`, 'anything').keys[0]).toBe(`ssh-ed25519 ${KEY}`);
  });

  test.for([
    { host: 'lab1', port: 22, line: `lab1,10.0.0.5 ssh-ed25519 ${KEY}` },
    { host: '127.0.0.1', port: 2222, line: `[127.0.0.1]:2222 ssh-ed25519 ${KEY}` },
  ])('a known_hosts entry names $host port $port', ({ host, port, line }) => {
    const text = `# comment\nother ssh-rsa AAAAB3Nza\n${line}\n`;
    expect(pinnedHostKeys(text, host, port).keys[0]).toBe(`ssh-ed25519 ${KEY}`);
  });

  test('a known_hosts file without the host (or with only a hashed entry) is PtError bad_config', () => {
    expect(() => pinnedHostKeys(`|1|abc=|def= ssh-ed25519 ${KEY}\nlab2 ssh-ed25519 ${KEY}\n`, 'lab1', 22, 'kh'))
      .toThrow(expect.objectContaining({ code: 'bad_config', message: expect.stringMatching(/no host key for lab1 in kh/) }));
  });
});

describe('lists and repeats: nothing is dropped', () => {
  test('--cpu, --knob and the scenarios take repeats and comma lists alike, each once, in order', () => {
    const p = parseRunArgs(['topa-grow,topa-chain', 'topa-grow', '--cpu', 'skylake', '--cpu', 'icelake,skylake', '--knob', 'no-topa-pmi,wrong-topa-end']);
    expect([p.scenarios.map((s) => s.name), p.profiles, p.knobs]).toEqual([['topa-grow', 'topa-chain'], ['skylake', 'icelake'], ['no-topa-pmi', 'wrong-topa-end']]);
  });

  test('all among the --cpu values means every profile', () => {
    expect(parseRunArgs(['topa-grow', '--cpu', 'skylake', '--cpu', 'all']).profiles.length).toBeGreaterThan(2);
  });

  test.for([
    { args: ['--out', 'a', '--out', 'b'], msg: '--out was given 2 times (a, b): give it once' },
    { args: ['--seed', '1', '--seed=2'], msg: '--seed was given 2 times (1, 2): give it once' },
  ])('an option of one value given twice is refused: $msg', ({ args, msg }) => {
    expect(() => parseRunArgs(['topa-grow', ...args])).toThrow(msg);
  });
});
