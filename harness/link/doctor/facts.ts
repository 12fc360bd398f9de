// What a lab machine says about itself through the helper's `state` verb (guest/helper/state.c):
// the module and its state, the CPU's PT, who traces, perf, the NMI watchdog, lockdown, module
// signing and isolated CPUs. Only read here; doctor/checks.ts judges them.
import { HelperError } from '../errors.js';
import type { HelperChannel } from '../helper-chan.js';
import { parseCpuList, parseKstate, type ModuleState } from '../kstate.js';
import type { TimedOpts } from '../deadline.js';

/** The machine's facts; a field is undefined where the machine could not say. */
export interface MachineFacts {
  /** The module interface the helper was built for (PTLAB_ABI), or undefined for a helper without `state`. */
  readonly helperAbi?: number;
  /** The helper runs `exec` (started with --allow-exec). */
  readonly exec?: boolean;
  readonly kernel?: string;
  /** /dev/ptlab is open in the helper. */
  readonly module: boolean;
  /** The module's state, or why it could not be read. */
  readonly kstate?: ModuleState | { readonly error: string };
  readonly cpus?: readonly number[];
  readonly vendor?: string;
  /** CPUID.(EAX=07H,ECX=0):EBX[25]. */
  readonly pt: boolean;
  /** CPUs whose IA32_RTIT_CTL.TraceEn reads 1 (undefined: not read, no PT). */
  readonly traceEn?: readonly number[];
  /** CPUs whose IA32_RTIT_CTL could not be read. */
  readonly traceEnUnread?: readonly number[];
  /** perf registered the intel_pt PMU. */
  readonly intelPtPmu?: boolean;
  /** /proc/sys/kernel/nmi_watchdog. */
  readonly nmiWatchdog?: string;
  /** /sys/kernel/security/lockdown ("[none] integrity confidentiality"). */
  readonly lockdown?: string;
  /** /sys/module/module/parameters/sig_enforce (Y or N). */
  readonly sigEnforce?: string;
  /** /sys/module/ptlab/taint (E: loaded unsigned, O: out of tree). */
  readonly moduleTaint?: string;
  readonly secureBoot?: boolean;
  /** /sys/devices/system/cpu/isolated. */
  readonly isolated?: readonly number[];
  /** /sys/devices/system/cpu/nohz_full. */
  readonly nohzFull?: string;
  readonly cmdline?: string;
}

/** The facts from the `state` verb's lines; "-" is unknown. */
export function parseMachineFacts(m: ReadonlyMap<string, string>): MachineFacts {
  const get = (k: string): string | undefined => {
    const v = m.get(k);
    return v === undefined || v === '-' ? undefined : v;
  };
  const list = (k: string): readonly number[] | undefined => {
    const v = m.get(k);
    if (v === undefined) return undefined;
    try { return parseCpuList(v.trim()); } catch { return undefined; }
  };
  const kstateText = get('kstate');
  let kstate: MachineFacts['kstate'];
  if (kstateText !== undefined) {
    try { kstate = parseKstate(kstateText.split(' ')); } catch { kstate = { error: kstateText }; }
  }
  const pt = get('pt') === '1';
  const helper = get('helper'), exec = get('exec'), pmu = get('intel_pt_pmu'), sb = get('secure_boot');
  const cpus = list('cpus'), isolated = list('isolated');
  const traceEn = pt ? list('traceen') : undefined, traceEnUnread = pt ? list('traceen_unread') : undefined;
  const text = (k: string): Record<string, string> => { const v = get(k); return v === undefined ? {} : { [k]: v }; };
  return {
    module: get('module') === '1', pt,
    ...(helper === undefined ? {} : { helperAbi: Number(helper) }),
    ...(exec === undefined ? {} : { exec: exec === '1' }),
    ...(kstate === undefined ? {} : { kstate }),
    ...(cpus === undefined ? {} : { cpus }),
    ...(traceEn === undefined ? {} : { traceEn }),
    ...(traceEnUnread === undefined ? {} : { traceEnUnread }),
    ...(pmu === undefined ? {} : { intelPtPmu: pmu === '1' }),
    ...(sb === undefined ? {} : { secureBoot: sb === '1' }),
    ...(isolated === undefined ? {} : { isolated }),
    ...renamed(text('kernel'), 'kernel'), ...renamed(text('vendor'), 'vendor'),
    ...renamed(text('nmi_watchdog'), 'nmiWatchdog'), ...renamed(text('lockdown'), 'lockdown'),
    ...renamed(text('sig_enforce'), 'sigEnforce'), ...renamed(text('module_taint'), 'moduleTaint'),
    ...renamed(text('nohz_full'), 'nohzFull'), ...renamed(text('cmdline'), 'cmdline'),
  };
}

function renamed(o: Record<string, string>, to: string): Record<string, string> {
  const v = Object.values(o)[0];
  return v === undefined ? {} : { [to]: v };
}

/** Reads the facts through the helper; a helper too old for `state` says only that. */
export async function readMachineFacts(helper: HelperChannel, opts: TimedOpts = {}): Promise<MachineFacts> {
  try {
    return parseMachineFacts(await helper.facts(opts));
  } catch (e) {
    if (e instanceof HelperError && e.helperCode === 'unknown') return { module: false, pt: false };
    throw e;
  }
}
