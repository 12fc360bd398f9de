// transcript.jsonl made comparable across targets and runs: sequence numbers and timestamps
// dropped, and every physical address inside a buffer the run allocated written as the buffer's
// role (its allocation order) plus an offset, so two runs whose allocator placed the same buffers
// at other addresses read the same. Only the places that hold physical
// addresses are rewritten: allocations, frees, ToPA entries, writes, the memory oracle's `corrupt`
// lines, IA32_RTIT_OUTPUT_BASE and its XSAVE slot, and fault texts. A workload's instruction addresses elsewhere (ADDRn_A/B) stay as
// they are, even when one happens to fall inside a buffer.

/** One transcript line without seq and t_us, addresses as `@bufN+0xOFF`; `at` is its line number (1-based). */
export interface NormalLine {
  readonly at: number;
  readonly text: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A run's buffers in allocation order: the n-th allocation is `@bufn` on every target. */
export class BufferRoles {
  private readonly bufs: { readonly base: bigint; readonly size: bigint }[] = [];

  /** Records an allocation; returns its role number. */
  add(base: bigint, size: bigint): number {
    this.bufs.push({ base, size });
    return this.bufs.length - 1;
  }

  /** The role and offset of `addr`: the newest buffer holding it (a freed base may be handed out again). */
  find(addr: bigint): { readonly role: number; readonly off: bigint } | undefined {
    for (let i = this.bufs.length - 1; i >= 0; i--) {
      const b = this.bufs[i]!;
      if (addr >= b.base && addr < b.base + b.size) return { role: i, off: addr - b.base };
    }
    return undefined;
  }

  /** The buffer of role `role`, when it was allocated. */
  buffer(role: number): { readonly base: bigint; readonly size: bigint } | undefined {
    return this.bufs[role];
  }

  /** The base of role `role`, when it was allocated. */
  baseOf(role: number): bigint | undefined {
    return this.bufs[role]?.base;
  }

  /** `addr` as `@bufN` or `@bufN+0xOFF`, or its hex when no buffer holds it. */
  name(addr: bigint): string {
    const r = this.find(addr);
    return r === undefined ? `0x${addr.toString(16)}` : r.off === 0n ? `@buf${r.role}` : `@buf${r.role}+0x${r.off.toString(16)}`;
  }

  /** `s` with each hex number inside a buffer written by role. */
  names(s: string): string {
    return this.bufs.length === 0 ? s : s.replace(HEX, (h) => this.name(BigInt(h)));
  }
}

const HEX = /0x[0-9a-f]+/g;
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

/** The #GP rule id a transcript fault names (`#GP on WRMSR …: CTL.2: reserved bit …`), if any. */
export function gpRuleOf(line: string | undefined): string | undefined {
  const m = line?.match(/#GP on [A-Z]+[^:]*: ([A-Za-z0-9_.-]+):/);
  return m?.[1];
}

/** One line of transcript text, parsed; a line that is not a JSON object is kept as `{ text }`. */
export function parseTranscriptLine(l: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(l);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { text: l };
  } catch {
    return { text: l };
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
