// What an event is called when the file's EVENT_DESC feature does not name it: the generic
// hardware and software events by their `config` (uapi perf_event.h `enum perf_hw_id` and
// `enum perf_sw_ids`, spelled as perf's tools/perf/util/evsel.c `evsel__hw_names` and
// `evsel__sw_names` spell them), anything else by type and config.
import { PERF_TYPE } from './abi.js';

const HW = ['cycles', 'instructions', 'cache-references', 'cache-misses', 'branches', 'branch-misses', 'bus-cycles',
  'stalled-cycles-frontend', 'stalled-cycles-backend', 'ref-cycles'];
const SW = ['cpu-clock', 'task-clock', 'page-faults', 'context-switches', 'cpu-migrations', 'minor-faults', 'major-faults',
  'alignment-faults', 'emulation-faults', 'dummy', 'bpf-output', 'cgroup-switches'];

/** A name for the event of attr `type` and `config`. */
export function eventName(type: number, config: bigint): string {
  const table = type === PERF_TYPE.HARDWARE ? HW : type === PERF_TYPE.SOFTWARE ? SW : undefined;
  const name = table !== undefined && config < BigInt(table.length) ? table[Number(config)] : undefined;
  return name ?? `type ${type} config 0x${config.toString(16)}`;
}
