// transcript.jsonl made comparable across targets and runs: sequence numbers and timestamps
// dropped, and every physical address inside a buffer the run allocated written as the buffer's
// role (its allocation order, buffer-roles.ts) plus an offset, so two runs whose allocator placed
// the same buffers at other addresses read the same. Only the places that hold physical
// addresses are rewritten: allocations, frees, ToPA entries, writes, the memory oracle's `corrupt`
// lines, IA32_RTIT_OUTPUT_BASE and its XSAVE slot, and fault texts. A workload's instruction
// addresses elsewhere (ADDRn_A/B) stay as they are, even when one happens to fall inside a buffer.
import { BufferRoles } from './buffer-roles.js';
import { parseTranscriptLine } from './parse-transcript.js';

/** One transcript line without seq and t_us, addresses as `@bufN+0xOFF`; `at` is its line number (1-based). */
export interface NormalLine {
  readonly at: number;
  readonly text: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

const HEX_NUMBER = /^0x[0-9a-f]+$/;

/** IA32_RTIT_OUTPUT_BASE: the one PT MSR that holds a physical address (docs/sdm/msrs.md). */
export const OUTPUT_BASE_MSR = '0x560';
const OUTPUT_BASE_NAME = 'IA32_RTIT_OUTPUT_BASE';

/** Ops whose every hex string is a physical address or an entry made of one. */
const MEMORY_OPS = new Set(['alloc', 'free', 'topa', 'write', 'corrupt']);

/** The 8-byte words of `data` (hex) with those that point into a buffer (a ToPA entry's base) named by role. */
function wordsOf(data: string, roles: BufferRoles): string {
  if (data.length % 16 !== 0) return data;
  const out: string[] = [];
  for (let i = 0; i < data.length; i += 16) {
    const w = Buffer.from(data.slice(i, i + 16), 'hex').readBigUInt64LE(0);
    const page = w & ~0xfffn;
    out.push(roles.find(page) ? `${roles.name(page)}|0x${(w & 0xfffn).toString(16)}` : `0x${w.toString(16)}`);
  }
  return out.join(' ');
}

/**
 * Reads transcript lines in order, keeping the run's buffer roles (an `alloc` line adds one), and
 * writes each line in its comparable form.
 */
export class TranscriptNormalizer {
  readonly roles = new BufferRoles();

  /** `fields` (one parsed line) without seq and t_us, addresses by role; an `alloc` adds its buffer first. */
  line(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const { seq: _seq, t_us: _t, ...rest } = fields;
    if (rest.op === 'alloc' && typeof rest.result === 'string' && typeof rest.value === 'string') {
      const size = rest.value.split('/')[0] ?? '';
      if (HEX_NUMBER.test(rest.result) && HEX_NUMBER.test(size)) this.roles.add(BigInt(rest.result), BigInt(size));
    }
    const addresses = MEMORY_OPS.has(String(rest.op)) || rest.msr === OUTPUT_BASE_MSR;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rest)) {
      if (k === 'data' && typeof v === 'string') out[k] = rest.op === 'xrstors' ? `${v.length / 2} bytes` : wordsOf(v, this.roles);
      else if (k === 'area' && v !== null && typeof v === 'object') out[k] = this.area(v as Record<string, unknown>);
      // An allocation's value is its size and alignment, never an address (a size may equal one).
      else if (typeof v === 'string' && (addresses || k === 'fault') && !(rest.op === 'alloc' && k === 'value')) out[k] = this.roles.names(v);
      else out[k] = v;
    }
    return out;
  }

  private area(a: Record<string, unknown>): Record<string, unknown> {
    const base = a[OUTPUT_BASE_NAME];
    return typeof base === 'string' && HEX_NUMBER.test(base) ? { ...a, [OUTPUT_BASE_NAME]: this.roles.name(BigInt(base)) } : a;
  }
}

/** The lines of a transcript.jsonl text, normalised (see the file comment). Unparsable lines are kept as text. */
export function normalTranscript(text: string): NormalLine[] {
  const n = new TranscriptNormalizer();
  return text.split('\n').filter((l) => l.trim().length > 0).map((l, i) => {
    const norm = n.line(parseTranscriptLine(l));
    return { at: i + 1, text: JSON.stringify(norm), fields: norm };
  });
}
