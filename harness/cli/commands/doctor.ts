// `ptlab doctor [--json]`: whether this host can run real Intel PT, and which scenarios run where
// (harness/qemu/doctor.ts). `ptlab doctor --target ssh --host H …`: whether a lab machine is ready
// for PT runs — its helper, module and interface, PT, who traces, perf, the NMI watchdog,
// lockdown, module signing, isolated CPUs — each with a verdict and what to do
// (harness/link/doctor/, docs/hardware.md "The lab engineer's checklist"). Exit status 0 only when
// a real-PT run is possible (docs/exit-codes.md); 3 when the machine cannot be reached.
import { PtError } from '../../../driver/base/errors.js';
import { checkMachine, formatChecks } from '../../link/doctor/checks.js';
import { readMachineFacts } from '../../link/doctor/facts.js';
import { diagnose, formatDiagnosis, gatherHostFacts } from '../../qemu/doctor.js';
import { connectSsh } from '../../runner/ssh-suite.js';
import { TargetUnavailableError } from '../../runner/suite-target.js';
import type { SshReach } from '../../runner/targets.js';
import { commandArgs, parseCommandLine, UsageError } from '../args.js';
import { EXIT } from '../exit-codes.js';
import type { CliIo } from '../main.js';
import { targetReachOf } from './run.js';

const USAGE = [
  'usage: ptlab doctor [--json]',
  '       ptlab doctor --target ssh --host H [--port P] [--user U] [--key F] [--known-host F] [--json]',
  '  --json        one JSON document: the findings and whether a real-PT run is possible (this host:',
  '                also the scenario matrix)',
  '  --target ssh  check a lab machine through its helper instead of this host',
  '  exit 0 when a real-PT run is possible (on this host, or on the machine), 1 when not, 2 on bad',
  '  usage, 3 when the machine cannot be reached',
].join('\n');

const OPTIONS = {
  json: { type: 'boolean' }, target: { type: 'string' },
  host: { type: 'string' }, port: { type: 'string' }, user: { type: 'string' }, key: { type: 'string' }, 'known-host': { type: 'string' },
} as const;

interface DoctorRequest {
  readonly json: boolean;
  /** `--target ssh`: the machine to check; undefined: this host. */
  readonly ssh: SshReach | undefined;
}

function parseDoctorArgs(argv: string[]): DoctorRequest | 'help' {
  const { values: v, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  if (positionals.length > 0) throw new UsageError(`takes no arguments (got ${positionals.join(' ')})`);
  const json = v.json === true;
  if (v.target === undefined) {
    const given = ['host', 'port', 'user', 'key', 'known-host'].filter((o) => v[o as keyof typeof v] !== undefined);
    if (given.length > 0) throw new UsageError(`--${given.join(', --')} ${given.length > 1 ? 'need' : 'needs'} --target ssh`);
    return { json, ssh: undefined };
  }
  if (v.target !== 'ssh') throw new UsageError(`--target ${v.target}: the doctor checks this host (no --target) or a lab machine (--target ssh)`);
  try {
    return { json, ssh: targetReachOf('ssh', v) as SshReach };
  } catch (e) {
    if (e instanceof PtError && e.code === 'bad_config') throw new UsageError(e.message);
    throw e;
  }
}

/** Prints the report; returns 0 when a real-PT run is possible, 1 when not, 2 on bad usage, 3 when unreachable. */
export async function doctorCommand(argv: string[], io: CliIo): Promise<number> {
  const args = commandArgs('doctor', USAGE, io, () => parseDoctorArgs(argv));
  if (typeof args === 'number') return args;
  if (args.ssh !== undefined) return machineDoctor(args.ssh, args.json, io);
  const d = diagnose(await gatherHostFacts());
  io.out(args.json ? JSON.stringify(d) : `${formatDiagnosis(d).join('\n')}\n`);
  return d.realPt ? EXIT.ok : EXIT.failed;
}

/** How long the doctor tries to reach a machine (a run waits longer: its machine may be booting). */
const DOCTOR_CONNECT_TIMEOUT_MS = 10_000;

/** `--target ssh`: connects (PT not required: the doctor says so), reads the facts, judges them. */
async function machineDoctor(reach: SshReach, json: boolean, io: CliIo): Promise<number> {
  const where = `ssh:${reach.label ?? reach.host}`;
  let facts;
  try {
    const t = await connectSsh({ connectTimeoutMs: DOCTOR_CONNECT_TIMEOUT_MS, ...reach }, false);
    try {
      facts = await readMachineFacts(t.helper);
    } finally {
      await t.dispose().catch(() => undefined);
    }
  } catch (e) {
    if (!(e instanceof TargetUnavailableError) && !(e instanceof PtError && e.code === 'bad_config')) throw e;
    io.err(`ptlab doctor: cannot reach the machine: ${e.message}`);
    return e instanceof TargetUnavailableError ? EXIT.unavailable : EXIT.usage;
  }
  const d = checkMachine(facts);
  io.out(json ? JSON.stringify({ machine: where, ...d, facts }) : `${formatChecks(where, d).join('\n')}\n`);
  return d.ready ? EXIT.ok : EXIT.failed;
}
