// transcript.jsonl made comparable across targets and runs: sequence numbers and timestamps
// dropped, and every physical address inside a buffer the run allocated written as the buffer's
// role (its allocation order) plus an offset, so two runs whose allocator placed the same buffers
// at other addresses read the same (issue 11 item 4).

/** One transcript line without seq and t_us, addresses as `@bufN+0xOFF`; `at` is its line number (1-based). */
export interface NormalLine {
  readonly at: number;
  readonly text: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

interface Buffer { readonly base: bigint; readonly size: bigint; readonly role: string }

const HEX = /0x[0-9a-f]+/g;

/** `alloc` lines: value `SIZE/ALIGN`, result the base (docs/transcript.md). */
function buffersOf(lines: readonly Record<string, unknown>[]): Buffer[] {
  const out: Buffer[] = [];
  for (const l of lines) {
    if (l.op !== 'alloc' || typeof l.result !== 'string' || typeof l.value !== 'string') continue;
    const size = l.value.split('/')[0];
    if (!size || !/^0x[0-9a-f]+$/.test(l.result) || !/^0x[0-9a-f]+$/.test(size)) continue;
    out.push({ base: BigInt(l.result), size: BigInt(size), role: `@buf${out.length}` });
  }
  return out;
}

/** `s` with each hex number inside a buffer replaced by the buffer's role and offset. */
function relocate(s: string, bufs: readonly Buffer[]): string {
  if (bufs.length === 0) return s;
  return s.replace(HEX, (h) => {
    const v = BigInt(h);
    const b = bufs.find((x) => v >= x.base && v < x.base + x.size);
    return b ? (v === b.base ? b.role : `${b.role}+0x${(v - b.base).toString(16)}`) : h;
  });
}

function relocateValue(v: unknown, bufs: readonly Buffer[]): unknown {
  if (typeof v === 'string') return relocate(v, bufs);
  if (Array.isArray(v)) return v.map((x) => relocateValue(x, bufs));
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, relocateValue(x, bufs)]));
  }
  return v;
}

/** The lines of a transcript.jsonl text, normalised (see the file comment). Unparsable lines are kept as text. */
export function normalTranscript(text: string): NormalLine[] {
  const raw = text.split('\n').filter((l) => l.trim().length > 0);
  const parsed = raw.map((l) => {
    try {
      const v: unknown = JSON.parse(l);
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { text: l };
    } catch {
      return { text: l };
    }
  });
  const bufs = buffersOf(parsed);
  return parsed.map((fields, i) => {
    const { seq: _seq, t_us: _t, ...rest } = fields;
    const norm = relocateValue(rest, bufs) as Record<string, unknown>;
    return { at: i + 1, text: JSON.stringify(norm), fields: norm };
  });
}
