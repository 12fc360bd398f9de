// A running QEMU VM (a type-state: `launch()` returns it running, disposing stops it).
// Launch: spawn → QMP → guest agent (bounded by the caller's signal). Dispose: QMP `quit`
// (bounded) → SIGKILL → report an abnormal shutdown; the socket directory and the shared RAM
// file are always removed (the memory file outlives QEMU), and so is the default console log
// unless kept on request. The RAM file and the console log are created 0600 before QEMU starts.
import { execa, type ResultPromise } from 'execa';
import { mkdtemp, open, readFile, rename, rm } from 'node:fs/promises';
import { PtError, throwIfAborted } from '../../driver/base/errors.js';
import { qemuArgv, qemuPaths, type QemuConfig, type QemuPaths } from './config.js';
import { sleep, within, type TimedOpts } from '../link/deadline.js';
import { StateError, TargetError, type TargetEvidence, type TargetPhase } from '../link/errors.js';
import { GuestRam } from './guest-ram.js';
import { consoleLogDir, consoleLogPath, guestRamPath, keptLogPath, reapLeftovers, runDirPrefix, spawnArgs } from './leftovers.js';
import { findOnPath, QEMU_BINARY } from './images.js';
import { judgeLiveness } from './liveness.js';
import { QgaClient } from './qga.js';
import { QmpClient } from './qmp.js';
import { isNotListening } from '../link/socket.js';

/** How QEMU ended. */
export interface VmExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when QEMU could not be started at all (e.g. the binary is missing). */
  readonly spawnError?: string;
}

/** Options of `QemuVm.launch`; `timeoutMs` bounds the whole launch. */
export interface LaunchOptions extends TimedOpts {
  /**
   * Where to write the serial console log. By default a private file in this user's private
   * directory $TMPDIR/ptlab-logs-<uid> (leftovers.ts consoleLogDir), removed by dispose unless
   * `keepConsoleLog`; a launch that fails keeps it (renamed console-kept-…, its path in the error's
   * evidence). A path given here is the caller's: it is never removed.
   */
  readonly consoleLog?: string;
  /** Keep the default console log after dispose (for diagnosis). */
  readonly keepConsoleLog?: boolean;
  /** Wait until the guest agent answers (default: true unless the VM starts stopped). */
  readonly waitForAgent?: boolean;
  /** How long dispose waits after `quit` before killing QEMU (QUIT_TIMEOUT_MS by default). */
  readonly quitTimeoutMs?: number;
}

/** The VM's lifecycle: running until disposed. */
export type VmState = 'running' | 'disposing' | 'disposed';

/** Default bound of the whole launch (TCG boot takes ~4 s: docs/qemu.md §2). */
export const LAUNCH_TIMEOUT_MS = 60_000;
/** How long `quit` may take before QEMU is killed. */
export const QUIT_TIMEOUT_MS = 5_000;
/** One guest-agent synchronisation attempt during boot. */
const QGA_ATTEMPT_MS = 5_000;
const STDERR_KEEP = 16 * 1024;
/** QEMU's words when `enforce` meets a CPU feature it cannot give (docs/qemu.md §5). */
const PT_REFUSAL = /requested feature: CPUID\.07H:EBX\.intel-pt/;

/** A running QEMU guest with its QMP, guest-agent and guest-RAM channels. */
export class QemuVm implements AsyncDisposable {
  private stateNow: VmState = 'running';
  private exitNow: VmExit | undefined;

  private constructor(
    readonly argv: readonly string[],
    readonly paths: QemuPaths,
    private readonly child: ResultPromise,
    private readonly stderrBuf: { text: string },
    /** Resolves when QEMU exits. */
    readonly exited: Promise<VmExit>,
    readonly qmp: QmpClient,
    readonly qga: QgaClient | undefined,
    readonly ram: GuestRam,
    /** The host port forwarded to the guest's SSH port 22 (127.0.0.1). */
    readonly sshPort: number | undefined,
    private readonly quitTimeoutMs: number,
    /** What dispose does with the console log: ptlab's default one is removed, or kept (renamed); the caller's is left. */
    private readonly logAtEnd: 'remove' | 'keep' | 'leave',
  ) {
    this.logNow = paths.consoleLog;
    void exited.then((e) => { this.exitNow = e; });
  }

  /** QEMU's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get state(): VmState {
    return this.stateNow;
  }

  /** How QEMU exited, once it has (whoever stopped it); undefined while it runs. */
  get exit(): VmExit | undefined {
    return this.exitNow;
  }

  /** The serial console log (removed by dispose when it is the default one and not kept; a kept one is renamed then). */
  get consoleLog(): string {
    return this.logNow;
  }

  private logNow: string;
  /** QMP stopped answering (a liveness probe said so): dispose kills QEMU without asking it to quit. */
  private hung = false;

  /**
   * Why this guest is not responding, or undefined while it is alive or has exited (its exit
   * explains itself): asked when a helper request timed out (harness/qemu/liveness.ts).
   */
  async whyNotResponding(): Promise<string | undefined> {
    if (this.exitNow !== undefined || this.stateNow !== 'running') return undefined;
    const v = await judgeLiveness(this.qmp, this.qga);
    if (v.alive) return undefined;
    if (v.qemuHung) this.hung = true;
    return v.reason;
  }

  /** The console log at dispose: removed, kept under its kept name, or left as the caller's. */
  private async endLog(): Promise<void> {
    if (this.logAtEnd === 'remove') await rm(this.logNow, { force: true });
    else if (this.logAtEnd === 'keep') this.logNow = await keepLog(this.logNow);
  }

  /** The guest agent; throws StateError when the VM was launched without waiting for it. */
  get agent(): QgaClient {
    if (this.qga === undefined) throw new StateError('guest agent', 'not-connected', ['connected']);
    return this.qga;
  }

  /** Starts QEMU and returns once QMP (and, by default, the guest agent) answer. */
  static async launch(config: QemuConfig, opts: LaunchOptions = {}): Promise<QemuVm> {
    throwIfAborted(opts.signal);
    // A controller killed with SIGKILL cannot clean up: its QEMU, guest RAM and sockets go now.
    await reapLeftovers();
    const runDir = await mkdtemp(runDirPrefix());
    const consoleLog = opts.consoleLog ?? (await defaultConsoleLog());
    const paths = qemuPaths(runDir, guestRamPath(), consoleLog);
    // The guest's memory and console are private from the moment they exist: both files are
    // created 0600 here, and QEMU opens them as they are (it would create them 0644 otherwise).
    await createPrivate(paths.memPath);
    await createPrivate(consoleLog);
    const logAtEnd = opts.consoleLog !== undefined ? 'leave' : opts.keepConsoleLog === true ? 'keep' : 'remove';
    const argv = qemuArgv(config, paths);
    const binary = config.qemuBinary ?? QEMU_BINARY;
    const stderrBuf = { text: '' };
    // QEMU dies with us, even if we are killed with SIGKILL (setpriv sets PR_SET_PDEATHSIG, then execs it).
    const spawn = spawnArgs(binary, argv, await findOnPath('setpriv'));
    // Its own process group (detached): a terminal's Ctrl-C goes to ptlab's group only, so ptlab
    // stops the suite and then QEMU, instead of the guest dying under the run.
    const child = execa(spawn.file, spawn.args, {
      stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', buffer: false, reject: false, cleanup: true, detached: true,
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => { stderrBuf.text = (stderrBuf.text + s).slice(-STDERR_KEEP); });
    const exited: Promise<VmExit> = child.then((r) => {
      const exit: VmExit = { exitCode: r.exitCode ?? null, signal: r.signal ?? null };
      return r.exitCode === undefined && r.signal === undefined && r.failed ? { ...exit, spawnError: r.message } : exit;
    });
    let qmp: QmpClient | undefined;
    let qga: QgaClient | undefined;
    let ram: GuestRam | undefined;
    const deadline = AbortSignal.timeout(opts.timeoutMs ?? LAUNCH_TIMEOUT_MS);
    // Aborted when the launch fails, so retry loops still running stop at once.
    const gaveUp = new AbortController();
    const signal = AbortSignal.any([deadline, gaveUp.signal, ...(opts.signal === undefined ? [] : [opts.signal])]);
    let log = consoleLog;
    const evidence = async (): Promise<TargetEvidence> => ({
      argv: [binary, ...argv], pid: child.pid, stderr: stderrBuf.text, consoleLog: log, consoleTail: await tail(log),
    });
    const fail = async (phase: TargetPhase, e: unknown): Promise<never> => {
      gaveUp.abort(new Error('launch failed'));
      // The console log is the failure's evidence: kept (renamed, so no later launch reaps it).
      if (opts.consoleLog === undefined) log = await keepLog(log);
      const ev = await evidence();
      // Give QEMU a moment to report why it exited, if it is exiting.
      const exit = await within(exited, 200);
      await hardStop(child, exited);
      await ram?.close();
      await qga?.close();
      await qmp?.close();
      await removeFiles(paths);
      if (opts.signal?.aborted) throw new PtError('aborted', `QEMU launch aborted: ${String(opts.signal.reason)}`, { cause: e });
      const full = { ...ev, stderr: stderrBuf.text, exitCode: exit?.exitCode, signal: exit?.signal };
      if (exit !== undefined) throw exitError(phase, exit, full, e);
      if (deadline.aborted) throw new TargetError(phase, 'timeout', `QEMU launch timed out in phase ${phase}`, full, { cause: e });
      throw e instanceof TargetError ? e : new TargetError(phase, 'io', String(e), full, { cause: e });
    };

    let phase: TargetPhase = 'qmp-connect';
    try {
      qmp = await untilExit(exited, connectQmp(paths.qmpSocket, signal));
      ram = await GuestRam.open(paths.memPath, BigInt(config.memoryMiB) << 20n, qmp, runDir);
      const sshPort = parseHostFwdPort(await qmp.hmp('info usernet', { signal }));
      if (opts.waitForAgent ?? config.startStopped !== true) {
        phase = 'boot';
        qga = await untilExit(exited, connectQga(paths.qgaSocket, signal));
      }
      return new QemuVm(argv, paths, child, stderrBuf, exited, qmp, qga, ram, sshPort, opts.quitTimeoutMs ?? QUIT_TIMEOUT_MS, logAtEnd);
    } catch (e) {
      return fail(phase, e);
    }
  }

  /** The last lines of the serial console. */
  consoleTail(lines = 30): Promise<string> {
    return tail(this.paths.consoleLog, lines);
  }

  /**
   * Stops the VM: QMP `quit`, then SIGKILL if it does not exit in time; always removes the
   * sockets and the RAM file. Throws TargetError('shutdown', 'abnormal_shutdown') when QEMU had
   * to be killed or had died by a signal. Idempotent.
   */
  async dispose(): Promise<void> {
    if (this.stateNow !== 'running') return;
    this.stateNow = 'disposing';
    let killed = false;
    try {
      await this.qga?.close();
      if (this.exitNow === undefined && this.qmp.state === 'running' && !this.hung) {
        await this.qmp.execute('quit', undefined, { timeoutMs: this.quitTimeoutMs }).catch(() => undefined);
      }
      const soft = this.hung && this.exitNow === undefined ? undefined : await within(this.exited, this.quitTimeoutMs);
      if (soft === undefined) {
        killed = true;
        await hardStop(this.child, this.exited);
      }
      await this.qmp.close();
      await this.ram.close();
    } finally {
      await removeFiles(this.paths);
      this.stateNow = 'disposed';
    }
    const exit = await this.exited;
    if (killed || exit.signal !== null) {
      const consoleTail = await tail(this.consoleLog);
      await this.endLog();
      throw new TargetError('shutdown', 'abnormal_shutdown',
        !killed ? `QEMU died by ${exit.signal}` : this.hung ? 'QEMU was not responding and was killed'
          : `QEMU did not exit within ${this.quitTimeoutMs} ms of quit and was killed`,
        { argv: this.argv, exitCode: exit.exitCode, signal: exit.signal, stderr: this.stderrBuf.text, consoleLog: this.consoleLog, consoleTail });
    }
    await this.endLog();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** The host port of `hostfwd=tcp:127.0.0.1:0-:22` in HMP `info usernet` output. */
export function parseHostFwdPort(usernet: string, guestPort = 22): number | undefined {
  for (const line of usernet.split('\n')) {
    // "  TCP[HOST_FORWARD]  13  127.0.0.1 40035  10.0.2.15  22  0  0"
    const m = /HOST_FORWARD\]\s+\d+\s+\S+\s+(\d+)\s+\S+\s+(\d+)/.exec(line);
    if (m !== null && Number(m[2]) === guestPort) return Number(m[1]);
  }
  return undefined;
}

/** Retries the QMP connection until the socket exists (QEMU creates it during startup). */
async function connectQmp(path: string, signal: AbortSignal): Promise<QmpClient> {
  for (;;) {
    const qmp = new QmpClient(path);
    try {
      await qmp.connect({ signal });
      return qmp;
    } catch (e) {
      if (!isNotListening(e)) throw e;
      await sleep(20, signal);
    }
  }
}

/**
 * Synchronises with the guest agent, which starts ~4 s into the boot (docs/qemu.md §2). Bytes
 * sent before the agent opens its port wait in QEMU; an attempt is still retried after
 * QGA_ATTEMPT_MS in case they were lost.
 */
async function connectQga(path: string, signal: AbortSignal): Promise<QgaClient> {
  for (;;) {
    const qga = new QgaClient(path);
    try {
      await qga.connect({ signal, timeoutMs: QGA_ATTEMPT_MS });
      return qga;
    } catch (e) {
      await qga.close();
      if (signal.aborted) throw e;
      if (isNotListening(e)) await sleep(20, signal);
      else if (!(e instanceof TargetError && e.failure === 'timeout')) throw e;
    }
  }
}

/** Rejects with the exit if QEMU exits before `p` settles. */
async function untilExit<T>(exited: Promise<VmExit>, p: Promise<T>): Promise<T> {
  const exit = exited.then((x) => { throw new ExitedBeforeReady(x); });
  return Promise.race([p, exit]);
}

class ExitedBeforeReady extends Error {
  constructor(readonly exit: VmExit) {
    super(`QEMU exited (code ${exit.exitCode}, signal ${exit.signal})`);
  }
}

function exitError(phase: TargetPhase, exit: VmExit, evidence: TargetEvidence, cause: unknown): TargetError {
  const stderr = evidence.stderr ?? '';
  if (PT_REFUSAL.test(stderr)) {
    return new TargetError('launch', 'pt_refused',
      `QEMU refused to start: the accelerator cannot give the guest Intel PT (${firstLine(stderr, PT_REFUSAL)})`, evidence, { cause });
  }
  const why = exit.spawnError ?? `exit code ${exit.exitCode}${exit.signal === null ? '' : `, signal ${exit.signal}`}`;
  const last = stderr.trim().split('\n').at(-1) ?? '';
  return new TargetError(phase === 'qmp-connect' ? 'launch' : phase, 'exited', `QEMU exited before it was ready (${why}): ${last}`, evidence, { cause });
}

function firstLine(text: string, re: RegExp): string {
  return text.split('\n').find((l) => re.test(l))?.trim() ?? '';
}

async function hardStop(child: ResultPromise, exited: Promise<VmExit>): Promise<void> {
  const done = await within(exited, 0);
  if (done !== undefined) return;
  child.kill('SIGKILL');
  await exited;
}

async function removeFiles(paths: QemuPaths): Promise<void> {
  await rm(paths.runDir, { recursive: true, force: true });
  await rm(paths.memPath, { force: true });
}

/** Creates `path` empty with mode 0600 (an existing file is truncated and made 0600). */
async function createPrivate(path: string): Promise<void> {
  const fh = await open(path, 'w', 0o600);
  try {
    await fh.chmod(0o600);
  } finally {
    await fh.close();
  }
}

async function defaultConsoleLog(): Promise<string> {
  return consoleLogPath(await consoleLogDir());
}

/** Keeps the default console log `log` for diagnosis (renamed so no later launch reaps it); returns where it is now. */
async function keepLog(log: string): Promise<string> {
  const kept = keptLogPath(log);
  return rename(log, kept).then(() => kept, () => log);
}

/** The last `lines` lines of a text file ('' if unreadable). */
export async function tail(path: string, lines = 30): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').slice(-lines).join('\n');
}
