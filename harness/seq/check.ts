// From a parsed, schema-checked file to a Sequence: MSR and field names resolved against the field
// tables (with the nearest valid name when one is misspelled), field values encoded and
// range-checked, buffer/table/area names defined before use. Nothing runs before this passes.
import { basename } from 'node:path';
import { hex } from '../../driver/base/hex.js';
import { MASK64 } from '../../driver/hw/field.js';
import type { ProfileName } from '../sim/profiles.js';
import { SeqFileError, SeqFileErrors } from './errors.js';
import type { Masked, MsrRef, ReadExpect, Sequence, Step, TopaEntryRef, WriteValue } from './model.js';
import { KNOWN_MSRS, msrAt, nearestField, type KnownMsr } from './names.js';
import { nearest } from '../text/nearest.js';
import { PACKET_NAMES, type CountRange } from './packets.js';
import type { SeqPath, SeqSource } from './parse.js';
import { checkSchema, STEP_KINDS, type StepKind } from './schema.js';
import { checkTraceOrder, handlePmiStep, traceStep } from './check-trace.js';
import { WRMSR_ALLOWLIST, WRMSR_ALLOWLIST_TEXT } from '../link/msr-allowlist.js';
import { SIM_RULES, type SeqTargetRules } from './target-rules.js';

type Obj = Readonly<Record<string, unknown>>;

/** IA32_RTIT_CTL, whose fields a `trace` step's `ctl` names. */
const CTL_REF: MsrRef = { address: KNOWN_MSRS.get('IA32_RTIT_CTL')!.address, known: KNOWN_MSRS.get('IA32_RTIT_CTL')!, label: 'IA32_RTIT_CTL' };

/**
 * Parses nothing, runs nothing: checks `src` for the target `rules` describes (default: the sim) and
 * returns its steps; throws SeqFileError at a mistake, SeqFileErrors when several steps have one.
 */
export function checkSequence(src: SeqSource, rules: SeqTargetRules = SIM_RULES): Sequence {
  checkSchema(src);
  const doc = src.value as Obj;
  const names = new Map<string, 'buffer' | 'table' | 'area'>();
  const c = new Checker(src, names, rules);
  const steps = c.steps(['steps'], doc.steps as unknown[]);
  checkTraceOrder(steps);
  return {
    file: src.file,
    name: typeof doc.name === 'string' ? doc.name : basename(src.file).replace(/\.ya?ml$/, ''),
    cpu: doc.cpu as ProfileName | undefined,
    seed: doc.seed === undefined ? undefined : Number(doc.seed),
    steps,
  };
}

const num = (v: unknown, dflt = 0): number => (v === undefined || v === null ? dflt : Number(v as bigint));
const big = (v: unknown): bigint => (typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v as bigint | number));

class Checker {
  /** The size of each buffer, by name (ToPA regions are checked against it). */
  private readonly sizes = new Map<string, number>();

  constructor(private readonly src: SeqSource, private readonly names: Map<string, 'buffer' | 'table' | 'area'>, private readonly rules: SeqTargetRules) {}

  /**
   * Every step of `list`, checked one by one: a step with a mistake is noted and the next one
   * checked all the same, so that a file's mistakes are all reported at once (SeqFileErrors).
   */
  steps(at: SeqPath, list: readonly unknown[]): Step[] {
    const out: Step[] = [], wrong: SeqFileError[] = [];
    list.forEach((s, i) => {
      try {
        out.push(this.step([...at, i], s as Obj));
      } catch (e) {
        if (e instanceof SeqFileErrors) wrong.push(...e.errors); // a `repeat` step's own steps
        else if (e instanceof SeqFileError) wrong.push(e);
        else throw e;
      }
    });
    if (wrong.length === 1) throw wrong[0]!;
    if (wrong.length > 1) throw new SeqFileErrors(wrong);
    return out;
  }

  private step(at: SeqPath, s: Obj): Step {
    const kind = Object.keys(s).find((k): k is StepKind => (STEP_KINDS as readonly string[]).includes(k))!;
    const pos = this.src.pos(at);
    const cpu = num(s.cpu);
    switch (kind) {
      case 'cpuid': {
        const e = s.expect as Obj | undefined;
        const expect = e === undefined ? undefined : Object.fromEntries(Object.entries(e).map(([r, x]) => [r, this.masked([...at, 'expect', r], x, 0xffff_ffffn)]));
        return { kind, at: pos, leaf: num(s.cpuid), subleaf: num(s.subleaf), cpu, expect };
      }
      case 'rdmsr': {
        const msr = this.msr([...at, 'rdmsr'], s.rdmsr);
        return { kind, at: pos, msr, cpu, expect: this.readExpect(at, msr, s.expect, s.rule) };
      }
      case 'wrmsr': {
        const msr = this.msr([...at, 'wrmsr'], s.wrmsr);
        this.allowed([...at, 'wrmsr'], msr);
        const { value, text } = this.writeValue(at, msr, s);
        const expect = (s.expect ?? 'ok') as 'ok' | 'gp';
        if (s.rule !== undefined && expect !== 'gp') throw new SeqFileError('schema', this.src.pos([...at, 'rule'], true), `'rule' names the #GP rule of 'expect: gp'; this step expects ok`);
        return { kind, at: pos, msr, cpu, value, text, expect, rule: s.rule as string | undefined };
      }
      case 'alloc': {
        const name = this.define([...at, 'alloc'], s.alloc as string, 'buffer');
        const size = num(s.size);
        this.sizes.set(name, size);
        // Default: aligned to its size when that is a power of two (a ToPA region must be: docs/sdm/output.md §4.7), else 4 KiB.
        const pow2 = size >= 4096 && (size & (size - 1)) === 0;
        return { kind, at: pos, name, size, align: num(s.align, pow2 ? size : 4096) };
      }
      case 'topa': {
        const name = this.define([...at, 'topa'], s.topa as string, 'table');
        const entries = (s.entries as Obj[]).map((e, i): TopaEntryRef => {
          const p = [...at, 'entries', i];
          if (e.end !== undefined) return { kind: 'end', table: this.use([...p, 'end'], e.end as string, 'table') };
          const buffer = this.use([...p, 'buffer'], e.buffer as string, 'buffer');
          const size = this.sizes.get(buffer)!;
          if (size < 4096 || size > 128 * 2 ** 20 || (size & (size - 1)) !== 0) {
            throw new SeqFileError('bad-value', this.src.pos([...p, 'buffer']), `buffer ${buffer} is ${size} bytes: a ToPA output region is a power of two from 4 KiB to 128 MiB (docs/sdm/output.md §4.2)`);
          }
          return { kind: 'region', buffer, int: e.int === true, stop: e.stop === true };
        });
        return { kind, at: pos, name, entries };
      }
      case 'trace':
        return traceStep(this.src, at, s, s.ctl === undefined ? new Map() : this.fieldsOf([...at, 'ctl'], CTL_REF, s.ctl as Obj));
      case 'handle-pmi':
        return handlePmiStep(this.src, at, s);
      case 'pmi-enable':
        return { kind, at: pos, cpu: num(s['pmi-enable']) };
      case 'run': {
        const r = (s.run ?? {}) as Obj;
        const opt = (k: string): number | undefined => (r[k] === undefined ? undefined : num(r[k]));
        if (r.slices !== undefined && r['slice-branches'] === undefined) {
          throw new SeqFileError('schema', this.src.pos([...at, 'run', 'slices'], true), `'slices' counts slices of 'slice-branches' branches: give 'slice-branches' too`);
        }
        return { kind, at: pos, cpu, seed: opt('seed'), branches: opt('branches'), slices: opt('slices'), sliceBranches: opt('slice-branches'), expect: s.expect as 'exit' | 'slices' | undefined };
      }
      case 'wait-pmi': {
        const w = (s['wait-pmi'] ?? {}) as Obj;
        return { kind, at: pos, timeoutMs: num(w['timeout-ms'], 10_000), expect: (s.expect ?? 'pmi') as 'pmi' | 'none' };
      }
      case 'collect': {
        const c = (s.collect ?? {}) as Obj, e = (s.expect ?? {}) as Obj;
        if (e.flow !== undefined && !this.rules.model) {
          throw new SeqFileError('not-on-target', this.src.pos([...at, 'expect', 'flow']), `flow: truth compares with the reference model's truth, and on ${this.rules.label} the PT unit is the CPU's own (no truth): run it on the sim or qemu --pt model`);
        }
        return {
          kind, at: pos, cpu: num(c.cpu), bytes: e.bytes === undefined ? undefined : num(e.bytes), minBytes: e['min-bytes'] === undefined ? undefined : num(e['min-bytes']),
          packets: e.packets === undefined ? undefined : this.packets([...at, 'expect', 'packets'], e.packets as Obj), flow: e.flow as 'truth' | undefined,
        };
      }
      case 'xsaves': {
        const area = s.xsaves as string;
        if (this.names.get(area) !== 'area') this.define([...at, 'xsaves'], area, 'area');
        return { kind, at: pos, area, cpu, expect: (s.expect ?? 'ok') as 'ok' | 'gp' };
      }
      case 'xrstors':
        return { kind, at: pos, area: this.use([...at, 'xrstors'], s.xrstors as string, 'area'), cpu, expect: (s.expect ?? 'ok') as 'ok' | 'gp', rule: s.rule as string | undefined };
      case 'repeat':
        return { kind, at: pos, times: num(s.repeat), steps: this.steps([...at, 'steps'], s.steps as unknown[]) };
    }
  }

  /** Packet counts by `ptlab dump --stats` name. */
  private packets(at: SeqPath, o: Obj): Map<string, CountRange> {
    const out = new Map<string, CountRange>();
    for (const [name, v] of Object.entries(o)) {
      if (!PACKET_NAMES.includes(name)) throw new SeqFileError('unknown-name', this.src.pos([...at, name], true), `no packet is named '${name}' (names: ${PACKET_NAMES.join(', ')})`, nearest(name, PACKET_NAMES));
      const r = typeof v === 'bigint' ? { min: Number(v), max: Number(v) } : { min: num((v as Obj).min), max: (v as Obj).max === undefined ? Infinity : num((v as Obj).max) };
      if (r.min > r.max) throw new SeqFileError('bad-value', this.src.pos([...at, name]), `min ${r.min} is above max ${r.max}`);
      out.set(name, r);
    }
    return out;
  }

  /** Refuses a WRMSR that reaches a real MSR outside the allowlist (harness/link/msr-allowlist.ts), unless --allow-msr. */
  private allowed(at: SeqPath, msr: MsrRef): void {
    if (this.rules.allowMsr || !this.rules.realMsr(msr.address) || WRMSR_ALLOWLIST.has(msr.address)) return;
    throw new SeqFileError('msr-not-allowed', this.src.pos(at), `WRMSR ${msr.label} writes a real MSR on ${this.rules.label}, and it is not a PT or performance-monitoring MSR (${WRMSR_ALLOWLIST_TEXT}): give --allow-msr to write it`);
  }

  /** An MSR by SDM name or number. */
  private msr(at: SeqPath, v: unknown): MsrRef {
    if (typeof v === 'string') {
      const known = KNOWN_MSRS.get(v);
      if (!known) throw new SeqFileError('unknown-msr', this.src.pos(at), `unknown MSR '${v}' (names come from driver/hw/msrs.ts; or give its number)`, nearest(v, KNOWN_MSRS.keys()));
      return { address: known.address, known, label: known.name };
    }
    const address = Number(v as bigint);
    const known = msrAt(address);
    return { address, known, label: known ? `${known.name} (${hex(BigInt(address))})` : hex(BigInt(address)) };
  }

  fieldsOf(at: SeqPath, msr: MsrRef, values: Obj): Map<string, bigint> {
    const known = this.table(at, msr);
    const out = new Map<string, bigint>();
    for (const [f, v] of Object.entries(values)) {
      const field = known.fields[f];
      if (!field) throw new SeqFileError('unknown-field', this.src.pos([...at, f], true), `${known.name} has no field '${f}' (fields: ${Object.keys(known.fields).join(', ')})`, nearestField(known, f));
      const x = big(v);
      const width = BigInt(field.hi - field.lo + 1);
      const fits = field.kind === 'addr' ? (x & ~(((1n << BigInt(field.hi + 1)) - 1n) & ~((1n << BigInt(field.lo)) - 1n))) === 0n : x < (1n << width);
      if (!fits) throw new SeqFileError('bad-value', this.src.pos([...at, f]), `${known.name}.${f} (bits ${field.hi}:${field.lo}) cannot hold ${hex(x)}`);
      out.set(f, x);
    }
    return out;
  }

  private table(at: SeqPath, msr: MsrRef): KnownMsr {
    if (msr.known) return msr.known;
    throw new SeqFileError('unknown-field', this.src.pos(at), `MSR ${msr.label} has no field table: give a value, not fields`);
  }

  private readExpect(at: SeqPath, msr: MsrRef, e: unknown, rule: unknown): ReadExpect | undefined {
    if (rule !== undefined && e !== 'gp') throw new SeqFileError('schema', this.src.pos([...at, 'rule'], true), `'rule' names the #GP rule of 'expect: gp'`);
    if (e === undefined) return undefined;
    if (e === 'gp') return { kind: 'gp', ...(rule === undefined ? {} : { rule: rule as string }) };
    const o = e as Obj;
    if (typeof e === 'object' && Object.keys(o).length === 1 && typeof o.buffer === 'string') {
      if (!this.names.has(o.buffer)) throw this.unknownName([...at, 'expect', 'buffer'], o.buffer, 'buffer or table');
      return { kind: 'buffer', name: o.buffer };
    }
    if (typeof e === 'bigint' || Object.keys(o).every((k) => k === 'value' || k === 'mask')) return { kind: 'masked', m: this.masked([...at, 'expect'], e, MASK64) };
    return { kind: 'fields', fields: this.fieldsOf([...at, 'expect'], msr, o) };
  }

  private masked(at: SeqPath, v: unknown, full: bigint): Masked {
    const m: Masked = typeof v === 'bigint' ? { value: v, mask: full } : { value: big((v as Obj).value), mask: (v as Obj).mask === undefined ? full : big((v as Obj).mask) };
    if (m.value > full || m.mask > full) throw new SeqFileError('bad-value', this.src.pos(at), `value does not fit in ${full === MASK64 ? 64 : 32} bits`);
    if ((m.value & ~m.mask) !== 0n) throw new SeqFileError('bad-value', this.src.pos(at), `value ${hex(m.value)} has bits outside mask ${hex(m.mask)}: it can never match`);
    return m;
  }

  private writeValue(at: SeqPath, msr: MsrRef, s: Obj): { value: WriteValue; text: string } {
    if (s.fields !== undefined) {
      const known = this.table([...at, 'wrmsr'], msr);
      const fields = this.fieldsOf([...at, 'fields'], msr, s.fields as Obj);
      let raw = 0n;
      for (const [f, x] of fields) {
        const field = known.fields[f]!;
        raw |= field.kind === 'addr' ? x : x << BigInt(field.lo);
      }
      return { value: { kind: 'raw', value: raw }, text: `${[...fields].map(([f, x]) => `${f}=${x}`).join(' ')} (${hex(raw)})` };
    }
    const v = s.value;
    if (typeof v === 'bigint') {
      if (v > MASK64) throw new SeqFileError('bad-value', this.src.pos([...at, 'value']), `${hex(v)} is wider than 64 bits`);
      return { value: { kind: 'raw', value: v }, text: hex(v) };
    }
    const name = (v as Obj).buffer as string;
    if (!this.names.has(name)) throw this.unknownName([...at, 'value', 'buffer'], name, 'buffer or table');
    return { value: { kind: 'buffer', name }, text: `the base of ${name}` };
  }

  private define(at: SeqPath, name: string, what: 'buffer' | 'table' | 'area'): string {
    if (this.names.has(name)) throw new SeqFileError('unknown-name', this.src.pos(at), `'${name}' is already defined (as a ${this.names.get(name)!})`);
    this.names.set(name, what);
    return name;
  }

  private use(at: SeqPath, name: string, what: 'buffer' | 'table' | 'area'): string {
    if (this.names.get(name) !== what) throw this.unknownName(at, name, what);
    return name;
  }

  private unknownName(at: SeqPath, name: string, what: string): SeqFileError {
    const have = [...this.names.keys()];
    return new SeqFileError('unknown-name', this.src.pos(at), `no ${what} named '${name}' is defined before this step${have.length ? ` (defined: ${have.join(', ')})` : ''}`, nearest(name, have));
  }
}
