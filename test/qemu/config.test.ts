// The QEMU argv and the accelerator choice, without a VM.
import { describe, expect, test } from 'vitest';
import { chooseAccel, cpuinfoHasFlag, KVM_PT_CPU, TCG_CPU, type HostAccelFacts } from '../../harness/qemu/accel.js';
import { qemuArgv, qemuOptValue, qemuPaths, type QemuConfig } from '../../harness/qemu/config.js';
import { parseHostFwdPort } from '../../harness/qemu/vm.js';

const paths = qemuPaths('/tmp/ptlab-qemu-x', '/dev/shm/ptlab-abc', '/var/log/console.log');
const base: QemuConfig = { accel: 'tcg', cpu: 'max', smp: 1, memoryMiB: 256, kernel: '/img/vmlinux', initrd: '/img/initrd.gz' };

/** The value following `flag` each time it appears. */
function values(argv: readonly string[], flag: string): string[] {
  return argv.flatMap((a, i) => (a === flag && i + 1 < argv.length ? [argv[i + 1]!] : []));
}

describe('qemuArgv', () => {
  const argv = qemuArgv(base, paths);

  test.for([
    { flag: '-accel', want: ['tcg'] },
    { flag: '-cpu', want: ['max'] },
    { flag: '-smp', want: ['1'] },
    { flag: '-m', want: ['256M'] },
    { flag: '-kernel', want: ['/img/vmlinux'] },
    { flag: '-initrd', want: ['/img/initrd.gz'] },
    { flag: '-append', want: ['console=ttyS0 panic=-1 quiet'] },
    { flag: '-serial', want: ['file:/var/log/console.log'] },
    { flag: '-qmp', want: ['unix:/tmp/ptlab-qemu-x/qmp.sock,server=on,wait=off'] },
    { flag: '-machine', want: ['q35,memory-backend=ram0'] },
  ] as const)('passes $flag $want', ({ flag, want }) => {
    expect(values(argv, flag)).toEqual(want);
  });

  test('backs guest RAM with a shared file of the configured size', () => {
    expect(values(argv, '-object')).toEqual(['memory-backend-file,id=ram0,size=256M,mem-path=/dev/shm/ptlab-abc,share=on']);
  });

  test('puts the guest agent and helper sockets in the private run directory on named virtio ports', () => {
    expect(values(argv, '-chardev')).toEqual([
      'socket,id=qga0,path=/tmp/ptlab-qemu-x/qga.sock,server=on,wait=off',
      'socket,id=helper0,path=/tmp/ptlab-qemu-x/helper.sock,server=on,wait=off',
    ]);
    expect(values(argv, '-device')).toContain('virtserialport,bus=vser0.0,chardev=qga0,name=org.qemu.guest_agent.0');
    expect(values(argv, '-device')).toContain('virtserialport,bus=vser0.0,chardev=helper0,name=org.ptlab.helper.0');
  });

  test('forwards an ephemeral loopback port to the guest SSH port', () => {
    expect(values(argv, '-netdev')).toEqual(['user,id=net0,hostfwd=tcp:127.0.0.1:0-:22']);
  });

  test('starts the CPU only when not asked to start stopped', () => {
    expect(argv).not.toContain('-S');
    expect(qemuArgv({ ...base, startStopped: true }, paths)).toContain('-S');
  });

  test('appends extra arguments last', () => {
    expect(qemuArgv({ ...base, extraArgs: ['-d', 'int'] }, paths).slice(-2)).toEqual(['-d', 'int']);
  });

  test('doubles commas in paths inside QEMU options', () => {
    const p = qemuPaths('/tmp/a,b', '/dev/shm/x,y', '/tmp/log');
    expect(values(qemuArgv(base, p), '-qmp')).toEqual(['unix:/tmp/a,,b/qmp.sock,server=on,wait=off']);
    expect(qemuOptValue('a,b,c')).toBe('a,,b,,c');
  });
});

const PT_CPUINFO = 'processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr intel_pt sha_ni\n';
const NO_PT_CPUINFO = 'processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr sha_ni\n';

describe('chooseAccel', () => {
  test.for([
    { name: 'auto with kvm_intel, intel_pt and pt_mode=1', req: 'auto', host: { cpuinfo: PT_CPUINFO, kvmIntelLoaded: true, ptMode: 1 }, accel: 'kvm', cpu: KVM_PT_CPU },
    { name: 'auto with kvm_intel and intel_pt, pt_mode unreadable', req: 'auto', host: { cpuinfo: PT_CPUINFO, kvmIntelLoaded: true }, accel: 'kvm', cpu: KVM_PT_CPU },
    { name: 'auto without kvm_intel', req: 'auto', host: { cpuinfo: PT_CPUINFO, kvmIntelLoaded: false }, accel: 'tcg', cpu: TCG_CPU },
    { name: 'auto without the intel_pt flag', req: 'auto', host: { cpuinfo: NO_PT_CPUINFO, kvmIntelLoaded: true, ptMode: 1 }, accel: 'tcg', cpu: TCG_CPU },
    { name: 'auto with pt_mode=0', req: 'auto', host: { cpuinfo: PT_CPUINFO, kvmIntelLoaded: true, ptMode: 0 }, accel: 'tcg', cpu: TCG_CPU },
    { name: 'kvm requested on a host without PT', req: 'kvm', host: { cpuinfo: NO_PT_CPUINFO, kvmIntelLoaded: false }, accel: 'kvm', cpu: KVM_PT_CPU },
    { name: 'tcg requested on a PT host', req: 'tcg', host: { cpuinfo: PT_CPUINFO, kvmIntelLoaded: true, ptMode: 1 }, accel: 'tcg', cpu: TCG_CPU },
  ] as const)('$name gives $accel', ({ req, host, accel, cpu }) => {
    expect(chooseAccel(req, host as HostAccelFacts)).toMatchObject({ accel, cpu });
  });

  test('KVM is asked to refuse rather than drop Intel PT', () => {
    expect(KVM_PT_CPU).toBe('host,+intel-pt,enforce');
  });

  test('a flag is matched as a whole word of the flags line', () => {
    expect(cpuinfoHasFlag('flags\t: intel_ptx msr\n', 'intel_pt')).toBe(false);
    expect(cpuinfoHasFlag('model name\t: intel_pt\n', 'intel_pt')).toBe(false);
  });
});

describe('parseHostFwdPort', () => {
  const usernet = [
    'Hub -1 (net0):',
    '  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ',
    '  TCP[HOST_FORWARD]  13       127.0.0.1 40035       10.0.2.15    22     0     0',
    '',
  ].join('\r\n');

  test('reads the host port forwarded to guest port 22', () => {
    expect(parseHostFwdPort(usernet)).toBe(40035);
  });

  test('is undefined when no forward targets the port', () => {
    expect(parseHostFwdPort(usernet, 2222)).toBeUndefined();
  });
});
