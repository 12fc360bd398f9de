// `ptlab doctor --target ssh`: the verdicts on a lab machine, as a pure function of the facts its
// helper reports (doctor/facts.ts), so every verdict is testable with recorded facts. Each check
// says what it found and what to do (docs/hardware.md "The lab engineer's checklist"). A run on a
// machine with PT is refused where its module is missing, speaks another interface, or cannot
// write an MSR (lockdown): `ptlabRunRefusal`.
import { PTLAB_ABI } from '../kstate.js';
import type { MachineFacts } from './facts.js';

/** ok: nothing to do; warn: works, but a lab should fix it; fail: PT runs cannot work; unknown: cannot tell. */
export type Verdict = 'ok' | 'warn' | 'fail' | 'unknown';

/** One line of the doctor's report. */
export interface Check {
  readonly what: string;
  readonly verdict: Verdict;
  readonly found: string;
  /** What to do; absent when nothing is. */
  readonly todo?: string;
}

/** The doctor's report on one machine. */
export interface MachineDiagnosis {
  readonly checks: readonly Check[];
  /** Every check passed or only warns: a PT run can go ahead. */
  readonly ready: boolean;
}

const cpuList = (cpus: readonly number[]): string => cpus.join(',');

function helperCheck(f: MachineFacts): Check {
  const what = 'helper';
  if (f.helperAbi === undefined) return { what, verdict: 'fail', found: 'ptlab-helper answers no `state`: it is older than this ptlab', todo: 'rebuild and install guest/helper (make -C guest/helper)' };
  if (f.helperAbi !== PTLAB_ABI) return { what, verdict: 'fail', found: `ptlab-helper speaks module interface ${f.helperAbi}, this ptlab ${PTLAB_ABI}`, todo: 'rebuild and install guest/helper from this checkout' };
  if (f.exec === true) return { what, verdict: 'warn', found: 'ptlab-helper runs with --allow-exec: its exec verb is a root shell', todo: 'start it without --allow-exec on a lab machine' };
  return { what, verdict: 'ok', found: `ptlab-helper, module interface ${f.helperAbi}, exec off` };
}

function moduleCheck(f: MachineFacts): Check {
  const what = 'module (ptlab.ko)';
  const load = 'build guest/kmod against this kernel (make -C guest/kmod KVER=$(uname -r)) and insmod build/ptlab.ko';
  if (!f.module) return { what, verdict: 'fail', found: '/dev/ptlab is absent (or the helper cannot open it)', todo: load };
  const k = f.kstate;
  if (k === undefined || 'error' in k) return { what, verdict: 'fail', found: `its state cannot be read (${k === undefined ? 'no kstate' : k.error}): a module older than this ptlab`, todo: load };
  if (k.abi !== PTLAB_ABI) return { what, verdict: 'fail', found: `interface ${k.abi}, this ptlab speaks ${PTLAB_ABI}`, todo: `rmmod ptlab, then ${load}` };
  const held = [
    k.buffers > 0 ? `${k.buffers} buffers (${k.bytes} bytes) held by ${k.files - 1} other open files` : '',
    k.orphans > 0 ? `${k.orphans} orphaned buffers (${k.orphanBytes} bytes) a CPU may still trace into` : '',
    k.taken.length > 0 ? `CPUs ${cpuList(k.taken)} did not confirm TraceEn=0 at a release` : '',
  ].filter((s) => s !== '');
  if (k.orphans > 0 || k.taken.length > 0) return { what, verdict: 'warn', found: `interface ${k.abi}; ${held.join('; ')}`, todo: 'reboot the machine to give the orphans back (the reboot notifier stops PT first)' };
  return { what, verdict: 'ok', found: `loaded, interface ${k.abi}${held.length ? `; ${held.join('; ')}` : ''}` };
}

function ptCheck(f: MachineFacts): Check {
  const what = 'Intel PT';
  if (f.pt && f.vendor === 'GenuineIntel') return { what, verdict: 'ok', found: 'CPUID.(EAX=07H,ECX=0):EBX[25] = 1' };
  return {
    what, verdict: 'fail', found: `${f.vendor ?? 'unknown vendor'}, CPUID.(EAX=07H,ECX=0):EBX[25] = ${f.pt ? 1 : 0}: no Intel PT`,
    todo: 'enable Intel PT in the firmware, or list the machine as pt: model (docs/hosts.md)',
  };
}

function traceEnCheck(f: MachineFacts): Check {
  const what = 'TraceEn=0 on every CPU';
  if (!f.pt || f.traceEn === undefined) return { what, verdict: 'unknown', found: 'not read: the CPU has no PT' };
  const unread = f.traceEnUnread ?? [];
  if (f.traceEn.length > 0) return { what, verdict: 'fail', found: `CPUs ${cpuList(f.traceEn)} trace now (perf, another tool, a run that crashed)`, todo: 'stop that tracer, or take the CPU with ptlab run --reclaim (its trace is lost)' };
  if (unread.length > 0) return { what, verdict: 'warn', found: `IA32_RTIT_CTL unreadable on CPUs ${cpuList(unread)}` };
  return { what, verdict: 'ok', found: `TraceEn=0 on CPUs ${cpuList(f.cpus ?? [])}` };
}

function perfCheck(f: MachineFacts): Check {
  const what = "perf's intel_pt";
  if (f.intelPtPmu !== true) return { what, verdict: 'ok', found: 'no intel_pt PMU registered: perf cannot trace with PT here' };
  if (f.traceEn !== undefined && f.traceEn.length > 0) return { what, verdict: 'fail', found: 'the intel_pt PMU is registered and a CPU traces', todo: 'stop perf record -e intel_pt// (or the tool tracing) before the run' };
  return {
    what, verdict: 'unknown', found: 'cannot tell whether an intel_pt event is open: Linux exposes no count of live intel_pt events; none traces now (TraceEn=0)',
    todo: 'make sure no perf record -e intel_pt// runs during the suite (a run claims its CPU and refuses one that traces)',
  };
}

function watchdogCheck(f: MachineFacts): Check {
  const what = 'NMI watchdog';
  if (f.nmiWatchdog === undefined) return { what, verdict: 'unknown', found: '/proc/sys/kernel/nmi_watchdog is absent' };
  return f.nmiWatchdog.trim() === '0'
    ? { what, verdict: 'ok', found: 'off' }
    : { what, verdict: 'ok', found: `on (${f.nmiWatchdog.trim()}): perf's NMI handler also runs and unmasks LVTPC; the module claims bit 55 first on armed CPUs either way` };
}

function lockdownCheck(f: MachineFacts): Check {
  const what = 'lockdown';
  const mode = /\[(\w+)\]/.exec(f.lockdown ?? '')?.[1];
  const k = f.kstate !== undefined && !('error' in f.kstate) ? f.kstate : undefined;
  if (k?.lockdown === true || (mode !== undefined && mode !== 'none')) {
    return { what, verdict: 'fail', found: `the kernel is locked down (${mode ?? 'LOCKDOWN_MSR'}): the module writes no MSR`, todo: 'boot without lockdown (lockdown=none; Secure Boot turns it on in Debian\'s kernels)' };
  }
  if (k === undefined && mode === undefined) return { what, verdict: 'unknown', found: 'neither the module nor securityfs (/sys/kernel/security/lockdown) can say' };
  return { what, verdict: 'ok', found: 'none' };
}

function signingCheck(f: MachineFacts): Check {
  const what = 'module signing';
  const enforce = f.sigEnforce === 'Y' || f.secureBoot === true;
  const unsigned = (f.moduleTaint ?? '').includes('E');
  if (!f.module && enforce) return { what, verdict: 'fail', found: `signatures are enforced (${f.sigEnforce === 'Y' ? 'module.sig_enforce=1' : 'Secure Boot'}) and the module is not loaded`, todo: 'sign ptlab.ko with a key the kernel trusts (kmodsign or sign-file with an enrolled MOK)' };
  if (f.module && unsigned) return { what, verdict: 'ok', found: `loaded unsigned (taint ${f.moduleTaint}): fine while signatures are not enforced` };
  if (f.module) return { what, verdict: 'ok', found: enforce ? 'signatures enforced, and the module loaded: it is signed' : 'loaded' };
  return { what, verdict: 'unknown', found: `signatures ${f.sigEnforce === 'N' ? 'not enforced' : 'unknown'}; the module is not loaded` };
}

function isolationCheck(f: MachineFacts): Check {
  const what = 'isolated CPUs';
  const isolated = f.isolated ?? [];
  const nohz = f.nohzFull !== undefined && f.nohzFull !== '(null)' && f.nohzFull.trim() !== '' ? f.nohzFull.trim() : undefined;
  if (isolated.length === 0) {
    return { what, verdict: 'warn', found: 'none: the scheduler puts other tasks and ticks on the traced CPUs', todo: 'boot with isolcpus=N nohz_full=N for the CPUs the lanes trace on (--cpus, an inventory\'s cpus:)' };
  }
  return { what, verdict: 'ok', found: `CPUs ${cpuList(isolated)} isolated${nohz ? `, nohz_full ${nohz}` : ''}: trace there (--cpus ${cpuList(isolated)})` };
}

/** Every check, in the order of the report. */
export function checkMachine(f: MachineFacts): MachineDiagnosis {
  const checks = [helperCheck(f), moduleCheck(f), ptCheck(f), traceEnCheck(f), perfCheck(f), watchdogCheck(f), lockdownCheck(f), signingCheck(f), isolationCheck(f)];
  return { checks, ready: checks.every((c) => c.verdict !== 'fail') };
}

/**
 * Why `ptlab run` must not start on a machine with PT: its module is missing or speaks another
 * interface, or its kernel is locked down. Undefined when none of these holds (the run's own
 * probe and claim see to the rest).
 */
export function ptlabRunRefusal(f: MachineFacts): string | undefined {
  if (!f.pt) return undefined;
  const bad = [moduleCheck(f), lockdownCheck(f)].filter((c) => c.verdict === 'fail');
  return bad.length === 0 ? undefined : bad.map((c) => `${c.what}: ${c.found}${c.todo ? ` (${c.todo})` : ''}`).join('; ');
}

/** The report as text lines: "[ok]   what: found — todo". */
export function formatChecks(where: string, d: MachineDiagnosis): string[] {
  const tag: Record<Verdict, string> = { ok: '[ok]  ', warn: '[warn]', fail: '[no]  ', unknown: '[?]   ' };
  const lines = [`${where}:`, ...d.checks.map((c) => `${tag[c.verdict]} ${c.what}: ${c.found}${c.todo ? ` — ${c.todo}` : ''}`)];
  lines.push('', d.ready ? `${where}: ready for PT runs (ptlab run --target ssh)` : `${where}: not ready for PT runs: fix the [no] lines above`);
  return lines;
}
