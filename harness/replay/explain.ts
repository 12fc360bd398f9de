// A value divergence in the SDM's words: the fields of a register that differ between the recorded
// read and the replayed one ("IA32_RTIT_STATUS: Stopped 1 → 0"), from the driver/hw field tables.
import { KNOWN_MSRS, msrAt } from '../seq/names.js';
import { IA32_PERF_GLOBAL_STATUS, IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { RegisterCodec } from '../../driver/hw/field.js';

type Codec = Pick<RegisterCodec<any, any>, 'name' | 'decode'>;

function show(v: unknown): string {
  return typeof v === 'boolean' ? (v ? '1' : '0') : typeof v === 'bigint' ? `0x${v.toString(16)}` : String(v);
}

/** "NAME: F a → b, G c → d" for the fields of `codec` that differ between `a` and `b`; undefined if none. */
function fieldChanges(codec: Codec, a: bigint, b: bigint): string | undefined {
  const da = codec.decode(a) as Record<string, unknown>, db = codec.decode(b) as Record<string, unknown>;
  const diffs = Object.keys(da).filter((k) => show(da[k]) !== show(db[k])).map((k) => `${k} ${show(da[k])} → ${show(db[k])}`);
  return diffs.length ? `${codec.name}: ${diffs.join(', ')}` : undefined;
}

const HEX = /^0x[0-9a-f]+$/;

function isRecord(v: unknown): v is Readonly<Record<string, unknown>> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `ctl=0x… status=0x…` of a `pmi` line's result. */
function pmiRegs(result: unknown): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const [, k, v] of String(result).matchAll(/(\w+)=(0x[0-9a-f]+)/g)) m.set(k!, BigInt(v!));
  return m;
}

/**
 * The field changes behind a recorded and a replayed line of the same op: an RDMSR of a register
 * with a field table, or a PMI's GLOBAL_STATUS, CTL and STATUS. Empty when nothing can be named.
 */
export function explainLines(recorded: Readonly<Record<string, unknown>>, replayed: Readonly<Record<string, unknown>> | undefined): string[] {
  if (replayed === undefined || recorded.op !== replayed.op) return [];
  if (recorded.op === 'rdmsr' && typeof recorded.msr === 'string' && HEX.test(String(recorded.result)) && HEX.test(String(replayed.result))) {
    const known = msrAt(Number(recorded.msr));
    const c = known && fieldChanges(known.codec, BigInt(String(recorded.result)), BigInt(String(replayed.result)));
    return c ? [c] : [];
  }
  if (recorded.op === 'xsaves' && isRecord(recorded.area) && isRecord(replayed.area)) {
    const a = recorded.area, b = replayed.area;
    return Object.keys(a).filter((k) => a[k] !== b[k]).map((k) => {
      const codec = KNOWN_MSRS.get(k)?.codec;
      const bothHex = HEX.test(String(a[k])) && HEX.test(String(b[k]));
      return (codec && bothHex ? fieldChanges(codec, BigInt(String(a[k])), BigInt(String(b[k]))) : undefined) ?? `${k}: ${String(a[k])} → ${String(b[k])}`;
    });
  }
  if (recorded.op === 'pmi') {
    const out: string[] = [];
    if (HEX.test(String(recorded.value)) && HEX.test(String(replayed.value))) {
      const c = fieldChanges(IA32_PERF_GLOBAL_STATUS, BigInt(String(recorded.value)), BigInt(String(replayed.value)));
      if (c) out.push(c);
    }
    const a = pmiRegs(recorded.result), b = pmiRegs(replayed.result);
    for (const [key, codec] of [['ctl', IA32_RTIT_CTL], ['status', IA32_RTIT_STATUS]] as const) {
      const x = a.get(key), y = b.get(key);
      const c = x !== undefined && y !== undefined ? fieldChanges(codec, x, y) : undefined;
      if (c) out.push(c);
    }
    return out;
  }
  return [];
}
