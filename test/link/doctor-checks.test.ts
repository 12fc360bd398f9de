// `ptlab doctor --target ssh`'s verdicts (harness/link/doctor/checks.ts) as a pure function of a
// machine's facts, and the refusal `ptlab run --target ssh` makes of a PT machine that cannot run
// it: one recorded fact set per situation a lab meets.
import { describe, expect, test } from 'vitest';
import { checkMachine, formatChecks, ptlabRunRefusal, type Check } from '../../harness/link/doctor/checks.js';
import { parseMachineFacts, type MachineFacts } from '../../harness/link/doctor/facts.js';
import type { ModuleState } from '../../harness/link/kstate.js';

const KSTATE: ModuleState = {
  abi: 2, files: 1, buffers: 0, bytes: 0, orphans: 0, orphanBytes: 0, mineBuffers: 0, mineBytes: 0, lockdown: false, nrCpus: 4,
  armed: [], armedMine: [], owned: [], ownedMine: [], taken: [],
};

/** A lab machine ready for PT runs. */
const LAB: MachineFacts = {
  helperAbi: 2, exec: false, kernel: '6.12.95+deb12-amd64', module: true, kstate: KSTATE, cpus: [0, 1, 2, 3], vendor: 'GenuineIntel', pt: true,
  traceEn: [], traceEnUnread: [], intelPtPmu: false, nmiWatchdog: '0', lockdown: '[none] integrity confidentiality', sigEnforce: 'N',
  moduleTaint: 'OE', isolated: [2, 3], nohzFull: '2-3',
};

const verdicts = (f: MachineFacts): Record<string, string> => Object.fromEntries(checkMachine(f).checks.map((c) => [c.what, c.verdict]));
const check = (f: MachineFacts, what: string): Check => checkMachine(f).checks.find((c) => c.what === what)!;

describe('the doctor\'s checks of a lab machine', () => {
  test('a ready machine passes all nine, and a run goes ahead', () => {
    expect(verdicts(LAB)).toEqual({
      helper: 'ok', 'module (ptlab.ko)': 'ok', 'Intel PT': 'ok', 'TraceEn=0 on every CPU': 'ok', "perf's intel_pt": 'ok',
      'NMI watchdog': 'ok', lockdown: 'ok', 'module signing': 'ok', 'isolated CPUs': 'ok',
    });
    expect(checkMachine(LAB).ready).toBe(true);
    expect(ptlabRunRefusal(LAB)).toBeUndefined();
  });

  test.for([
    { name: 'the module missing', facts: { ...LAB, module: false, kstate: undefined } as MachineFacts, what: 'module (ptlab.ko)', found: /absent/, todo: /insmod/ },
    { name: 'a module of another interface', facts: { ...LAB, kstate: { ...KSTATE, abi: 1 } }, what: 'module (ptlab.ko)', found: /interface 1, this ptlab speaks 2/, todo: /rmmod ptlab/ },
    { name: 'a locked-down kernel', facts: { ...LAB, lockdown: 'none [integrity] confidentiality', kstate: { ...KSTATE, lockdown: true } }, what: 'lockdown', found: /integrity/, todo: /lockdown=none/ },
    { name: 'a CPU someone traces on', facts: { ...LAB, traceEn: [1], intelPtPmu: true }, what: 'TraceEn=0 on every CPU', found: /CPUs 1 trace now/, todo: /--reclaim/ },
    { name: 'no Intel PT', facts: { ...LAB, vendor: 'AuthenticAMD', pt: false, traceEn: undefined }, what: 'Intel PT', found: /AuthenticAMD/, todo: /pt: model/ },
    { name: 'an old helper', facts: { module: false, pt: false } as MachineFacts, what: 'helper', found: /older than this ptlab/, todo: /make -C guest\/helper/ },
    { name: 'signatures enforced and the module not loaded', facts: { ...LAB, module: false, kstate: undefined, sigEnforce: 'Y' }, what: 'module signing', found: /module\.sig_enforce=1/, todo: /sign ptlab\.ko/ },
  ])('$name fails with what to do', ({ facts, what, found, todo }) => {
    const c = check(facts, what);
    expect({ verdict: c.verdict, found: found.test(c.found), todo: todo.test(c.todo ?? '') }).toEqual({ verdict: 'fail', found: true, todo: true });
    expect(checkMachine(facts).ready).toBe(false);
  });

  test('perf\'s intel_pt registered and nothing tracing: "cannot tell", with why', () => {
    const c = check({ ...LAB, intelPtPmu: true }, "perf's intel_pt");
    expect(c.verdict).toBe('unknown');
    expect(c.found).toMatch(/Linux exposes no count of live intel_pt events/);
  });

  test('no isolated CPU, a helper with --allow-exec, and orphans only warn', () => {
    const f: MachineFacts = { ...LAB, isolated: [], exec: true, kstate: { ...KSTATE, orphans: 2, orphanBytes: 8192, taken: [1] } };
    expect([check(f, 'isolated CPUs').verdict, check(f, 'helper').verdict, check(f, 'module (ptlab.ko)').verdict]).toEqual(['warn', 'warn', 'warn']);
    expect(check(f, 'isolated CPUs').todo).toMatch(/isolcpus=N nohz_full=N/);
    expect(checkMachine(f).ready).toBe(true);
  });

  test('ptlab run refuses a PT machine whose module is missing or whose kernel is locked down, naming each', () => {
    const r = ptlabRunRefusal({ ...LAB, module: false, kstate: undefined, lockdown: 'none [integrity] confidentiality' });
    expect(r).toMatch(/^module \(ptlab\.ko\): \/dev\/ptlab is absent.*; lockdown: the kernel is locked down \(integrity\)/);
  });

  test('a machine without PT is not the run refusal\'s business (the probe refuses it with the CPUID reason)', () => {
    expect(ptlabRunRefusal({ ...LAB, pt: false, module: false })).toBeUndefined();
  });

  test('the state verb\'s lines parse into the facts, "-" as unknown', () => {
    const m = new Map(Object.entries({
      helper: '2', exec: '0', kernel: '6.1.0-57-amd64', module: '1', cpus: '0-1', vendor: 'AuthenticAMD', pt: '0', traceen: '-',
      kstate: 'abi=0x2 files=0x1 buffers=0x0 bytes=0x0 orphans=0x0 orphan_bytes=0x0 mine_buffers=0x0 mine_bytes=0x0 lockdown=0x0 nr_cpus=0x2 armed=- armed_mine=- owned=- owned_mine=- taken=-',
      intel_pt_pmu: '0', nmi_watchdog: '0', lockdown: '-', sig_enforce: 'N', module_taint: 'OE', secure_boot: '-', isolated: '', nohz_full: '(null)', cmdline: 'console=ttyS0',
    }));
    expect(parseMachineFacts(m)).toEqual({
      helperAbi: 2, exec: false, kernel: '6.1.0-57-amd64', module: true, kstate: { ...KSTATE, nrCpus: 2 }, cpus: [0, 1], vendor: 'AuthenticAMD', pt: false,
      intelPtPmu: false, nmiWatchdog: '0', sigEnforce: 'N', moduleTaint: 'OE', isolated: [], nohzFull: '(null)', cmdline: 'console=ttyS0',
    });
  });

  test('the report prints one line per check, each with its verdict', () => {
    const lines = formatChecks('ssh:lab1', checkMachine({ ...LAB, isolated: [] }));
    expect(lines.filter((l) => /^\[(ok|warn|no|\?)\]/.test(l))).toHaveLength(9);
    expect(lines.at(-1)).toBe('ssh:lab1: ready for PT runs (ptlab run --target ssh)');
  });
});
