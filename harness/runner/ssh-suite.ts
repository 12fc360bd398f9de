// `ptlab run --target ssh --host H`: a lab machine's own PT through ptlab-helper over SSH
// (docs/design.md "ssh"), one connection for the whole suite. The host key is pinned: taken from
// --known-host (an OpenSSH public key file, or a known_hosts file looked up by host and port:
// ../ssh/known-hosts.ts), never trusted on first use. PT is required (requirePt): a CPU without it is
// refused — unless `reach.pt` is `model` (an inventory's stand-in machine, docs/hosts.md), where
// the reference model is the PT unit (ssh-model-suite.ts). A machine with PT is refused too when
// its module is missing, speaks another interface or cannot write MSRs (lockdown): the doctor's
// checks of harness/link/doctor/, read through the helper before any run.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UnsupportedError } from '../../driver/base/errors.js';
import { ptlabRunRefusal } from '../link/doctor/checks.js';
import { readMachineFacts } from '../link/doctor/facts.js';
import { readClientKey, readKnownHosts } from '../ssh/key-files.js';
import { pinnedHostKeys } from '../ssh/known-hosts.js';
import { SshTarget } from '../ssh/ssh-target.js';
import { laneCpus } from './cpu-map.js';
import { HelperPtSuite } from './helper-suite.js';
import { probedProfile } from './probed-profile.js';
import { SshModelSuite } from './ssh-model-suite.js';
import { TargetUnavailableError, throwIfInterrupted, type SuiteTarget } from './suite-target.js';
import type { SshReach } from './targets.js';

/** Bound of connect + helper start. */
const CONNECT_TIMEOUT_MS = 30_000;
/**
 * Connects to the lab machine as `reach` says (the pinned host key, the helper started);
 * TargetUnavailableError when it cannot, or, with `requirePt`, when its CPU lacks PT.
 */
export async function connectSsh(reach: SshReach, requirePt: boolean, signal?: AbortSignal): Promise<SshTarget> {
  const keyFile = reach.key ?? join(homedir(), '.ssh', 'id_ed25519');
  const knownFile = reach.knownHost ?? join(homedir(), '.ssh', 'known_hosts');
  const privateKey = await readClientKey(keyFile);
  const hostKey = pinnedHostKeys(await readKnownHosts(knownFile), reach.host, reach.port, knownFile);
  const where = `ssh:${reach.label ?? reach.host}`;
  try {
    return await SshTarget.connect({
      host: reach.host, ...(reach.port === undefined ? {} : { port: reach.port }), username: reach.user ?? 'root',
      privateKey, hostKey, requirePt, allowMsr: reach.allowMsr === true, timeoutMs: reach.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      ...(reach.label === undefined ? {} : { label: reach.label }), ...(signal ? { signal } : {}),
    });
  } catch (e) {
    throwIfInterrupted(signal, e);
    const hint = e instanceof UnsupportedError ? 'run PT scenarios on the model (--target sim, or --target qemu --pt model; in a --hosts inventory, pt: model)' : undefined;
    throw new TargetUnavailableError(where, `${where}: ${(e as Error).message}`, hint, { cause: e });
  }
}

/** Connects to the lab machine as `reach` says; TargetUnavailableError when it cannot, or cannot run PT. */
export async function openSshSuite(reach: SshReach, signal?: AbortSignal): Promise<SuiteTarget> {
  const where = `ssh:${reach.label ?? reach.host}`;
  const model = reach.pt === 'model';
  const t = await connectSsh(reach, !model, signal);
  try {
    if (model) return new SshModelSuite(t);
    const refusal = ptlabRunRefusal(await readMachineFacts(t.helper, signal ? { signal } : {}));
    if (refusal !== undefined) {
      throw new TargetUnavailableError(where, `${where}: ${refusal}`, `ptlab doctor --target ssh --host ${reach.host} checks the machine`);
    }
    // The lane's CPU: the first of --cpus, or the first CPU but 0 (cpu-map.ts laneCpus).
    const [cpu] = laneCpus(where, t.cpus, 1, reach.cpus);
    return new HelperPtSuite('ssh', t, await probedProfile(t, signal ? { signal } : {}), { reclaim: reach.reclaim === true, cpu: cpu! });
  } catch (e) {
    await t.dispose();
    throw e;
  }
}

