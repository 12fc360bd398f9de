// Shared set-up for the generator tests: a generator on a collecting sink and
// CTL values built with the driver's field table.
import { IA32_RTIT_CTL, IA32_RTIT_STATUS } from '../../driver/hw/msrs.js';
import type { Encodable } from '../../driver/hw/field.js';
import { PacketGenerator, type GeneratorOptions } from '../../harness/sim/trace/generator.js';
import { CollectingSink } from '../../harness/sim/trace/sink.js';
import type { RtitRegs } from '../../harness/sim/trace/events.js';
import { tokens } from './pkt.js';

/** Where the test workloads live (docs/design.md: clear of ordinary static binaries). */
export const BASE = 0x10000000;

/** IA32_RTIT_CTL fields by name. */
export type CtlFields = Encodable<typeof IA32_RTIT_CTL.fields>;
type StatusFields = Encodable<typeof IA32_RTIT_STATUS.fields>;

/** User-mode branch tracing, the usual test configuration. */
export const USER_BRANCHES: CtlFields = { User: true, BranchEn: true, ToPA: true };

/** RTIT register values for `traceEnable`. */
export function regs(ctl: CtlFields = USER_BRANCHES, status: StatusFields = {}, extra: Partial<RtitRegs> = {}): RtitRegs {
  return { ctl: IA32_RTIT_CTL.encode({ ...ctl, TraceEn: true }), status: IA32_RTIT_STATUS.encode(status), ...extra };
}

/** A generator writing into a collecting sink, and a way to list what it wrote. */
export function make(opts: Partial<GeneratorOptions> = {}) {
  const sink = new CollectingSink();
  const g = new PacketGenerator({ sink, ...opts });
  let seen = 0;
  return {
    g,
    sink,
    /** Every packet so far. */
    all(): string[] {
      g.flush();
      return tokens(sink.bytes());
    },
    /** Packets written since the previous call of `next` (or since the start). */
    next(): string[] {
      g.flush();
      const t = tokens(sink.bytes());
      const out = t.slice(seen);
      seen = t.length;
      return out;
    },
    bytes(): Uint8Array {
      g.flush();
      return sink.bytes();
    },
  };
}

/** A generator already enabled at BASE with `ctl`; the enable packets are consumed. */
export function started(ctl: CtlFields = USER_BRANCHES, opts: Partial<GeneratorOptions> = {}, extra: Partial<RtitRegs> = {}) {
  const t = make(opts);
  t.g.traceEnable(BASE, regs(ctl, {}, extra));
  t.next();
  return t;
}
