// A typed QEMU configuration and the argv it becomes (pure: docs/qemu.md §2 "QEMU command line",
// §4 shared guest RAM). Paths are chosen by the caller (vm.ts) so this stays testable.
import { join } from 'node:path';
import type { Accel } from './accel.js';

/** The name of the guest agent's virtio-serial port (what qemu-ga opens in the guest). */
export const QGA_PORT_NAME = 'org.qemu.guest_agent.0';
/** The name of the ptlab line helper's virtio-serial port (images/guest-root/etc/init.d/rcS). */
export const HELPER_PORT_NAME = 'org.ptlab.helper.0';

/** What the VM is. */
export interface QemuConfig {
  /** The QEMU binary; `qemu-system-x86_64` from PATH by default. */
  readonly qemuBinary?: string;
  readonly accel: Accel;
  /** `-cpu` value: `max` for TCG, `host,+intel-pt,enforce` for KVM (accel.ts). */
  readonly cpu: string;
  readonly smp: number;
  readonly memoryMiB: number;
  /** The PVH-bootable vmlinux (images/out/vmlinux). */
  readonly kernel: string;
  readonly initrd: string;
  /** Kernel command line; `console=ttyS0 panic=-1 quiet` by default. */
  readonly append?: string;
  /** Start with the CPU stopped (`-S`); `cont` over QMP starts it. */
  readonly startStopped?: boolean;
  /** Appended last, unchecked. */
  readonly extraArgs?: readonly string[];
}

/** Where the VM's host-side files live. */
export interface QemuPaths {
  /** A private directory (mkdtemp) holding the sockets; removed on dispose. */
  readonly runDir: string;
  readonly qmpSocket: string;
  readonly qgaSocket: string;
  readonly helperSocket: string;
  /** The guest RAM file, shared with QEMU (`/dev/shm/ptlab-<random>`); removed on dispose. */
  readonly memPath: string;
  /** The serial console log; kept after dispose for diagnosis. */
  readonly consoleLog: string;
}

/** The default kernel command line: serial console, exit QEMU on panic (with -no-reboot). */
export const DEFAULT_APPEND = 'console=ttyS0 panic=-1 quiet';

/** The socket paths inside `runDir`. */
export function qemuPaths(runDir: string, memPath: string, consoleLog: string): QemuPaths {
  return {
    runDir,
    qmpSocket: join(runDir, 'qmp.sock'),
    qgaSocket: join(runDir, 'qga.sock'),
    helperSocket: join(runDir, 'helper.sock'),
    memPath,
    consoleLog,
  };
}

/** Quotes a value inside a QEMU `key=value,…` option: a comma is written twice. */
export function qemuOptValue(value: string): string {
  return value.replaceAll(',', ',,');
}

/** The QEMU argv (without the binary) for `config` with its files at `paths`. */
export function qemuArgv(config: QemuConfig, paths: QemuPaths): string[] {
  const q = qemuOptValue;
  const socket = (id: string, path: string): string => `socket,id=${id},path=${q(path)},server=on,wait=off`;
  return [
    '-machine', 'q35,memory-backend=ram0',
    '-accel', config.accel,
    '-cpu', config.cpu,
    '-smp', String(config.smp),
    '-m', `${config.memoryMiB}M`,
    // Guest RAM in a shared file: file offset = guest physical address below the low-memory split.
    '-object', `memory-backend-file,id=ram0,size=${config.memoryMiB}M,mem-path=${q(paths.memPath)},share=on`,
    '-kernel', config.kernel,
    '-initrd', config.initrd,
    '-append', config.append ?? DEFAULT_APPEND,
    '-display', 'none',
    '-no-reboot',
    '-serial', `file:${paths.consoleLog}`,
    '-qmp', `unix:${q(paths.qmpSocket)},server=on,wait=off`,
    '-device', 'virtio-serial-pci,id=vser0',
    '-chardev', socket('qga0', paths.qgaSocket),
    '-device', `virtserialport,bus=vser0.0,chardev=qga0,name=${QGA_PORT_NAME}`,
    '-chardev', socket('helper0', paths.helperSocket),
    '-device', `virtserialport,bus=vser0.0,chardev=helper0,name=${HELPER_PORT_NAME}`,
    // Port 0: the host picks a free port; read it back with `info usernet` (docs/qemu.md §2).
    '-netdev', 'user,id=net0,hostfwd=tcp:127.0.0.1:0-:22',
    '-device', 'virtio-net-pci,netdev=net0',
    '-device', 'virtio-rng-pci',
    ...(config.startStopped === true ? ['-S'] : []),
    ...(config.extraArgs ?? []),
  ];
}
