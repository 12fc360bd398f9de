// A bare-metal lab machine (or any SSH host running guest/'s module and helper) as a Target:
// the helper runs over SSH on stdin/stdout with the same line protocol as on the QEMU
// virtio-serial port (docs/design.md "ssh"). Physical memory is the module's buffers, read and
// written through the helper (there is no shared RAM file on a remote machine).
import type { Duplex } from 'node:stream';
import { HelperChannel } from '../link/helper-chan.js';
import { HelperTarget, type HelperTargetOptions } from '../link/helper-target.js';
import { SshClient, type SshConfig } from './ssh-client.js';

/** How to reach the helper. */
export interface SshTargetOptions extends SshConfig, HelperTargetOptions {
  /** The name in `description` ("ssh:<label>"); the host by default. */
  readonly label?: string;
  /** The helper's command line on the remote machine. Default `ptlab-helper`. */
  readonly helperCommand?: string;
  /** `--pt hardware`: refuse (UnsupportedError) unless the CPU enumerates PT. Default false. */
  readonly requirePt?: boolean;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

/** A remote CPU driven through ptlab-helper over SSH. */
export class SshTarget extends HelperTarget {
  readonly description: string;

  private constructor(readonly ssh: SshClient, helper: HelperChannel, label: string, o: HelperTargetOptions, readonly cpus: number) {
    super(helper, o);
    this.description = `ssh:${label}`;
  }

  /** Connects (pinned host key), starts the helper and pings it. */
  static async connect(opts: SshTargetOptions): Promise<SshTarget> {
    const timed = { timeoutMs: opts.timeoutMs ?? 30_000, ...(opts.signal === undefined ? {} : { signal: opts.signal }) };
    const ssh = await SshClient.connectWhenReady(opts, timed);
    let helper: HelperChannel | undefined;
    try {
      const stream: Duplex = await ssh.openExec(opts.helperCommand ?? 'ptlab-helper');
      helper = new HelperChannel(`ssh://${ssh.host} ${opts.helperCommand ?? 'ptlab-helper'}`, stream);
      await helper.connect(timed);
      const { cpus } = await helper.info(timed);
      const o: HelperTargetOptions = { pmiClearsTraceEn: opts.pmiClearsTraceEn ?? false, allowMsr: opts.allowMsr ?? false };
      const t = new SshTarget(ssh, helper, opts.label ?? opts.host, o, Math.max(1, cpus));
      if (opts.requirePt === true) await t.requirePt(timed);
      return t;
    } catch (e) {
      await helper?.close();
      await ssh.close();
      throw e;
    }
  }

  /**
   * Gives the module buffers back (tracing confirmed off first, or they stay allocated:
   * HelperTarget.releaseBuffers), stops the helper and closes SSH; idempotent. Throws
   * TargetError('shutdown') after closing when buffers had to be left allocated.
   */
  async dispose(): Promise<void> {
    await this.disposeSafely(async () => {
      await this.helper.close();
      await this.ssh.close();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}
