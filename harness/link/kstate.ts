// The guest module's state (guest/kmod/ptlab_uapi.h struct ptlab_kstate), as the helper's `kstate`
// verb sends it ("key=0x… key=<cpu list>"): what the module holds for every open file and for the
// asking one, and the interface version the host must match.

/** The module interface this host speaks (guest/kmod/ptlab_uapi.h PTLAB_ABI). */
export const PTLAB_ABI = 2;

/** struct ptlab_kstate. */
export interface ModuleState {
  readonly abi: number;
  /** Files open on /dev/ptlab. */
  readonly files: number;
  /** Buffers of every file, and their bytes. */
  readonly buffers: number;
  readonly bytes: number;
  /** Buffers left by a release whose CPU did not confirm TraceEn=0. */
  readonly orphans: number;
  readonly orphanBytes: number;
  /** Buffers of the asking file (the helper's). */
  readonly mineBuffers: number;
  readonly mineBytes: number;
  /** The kernel is locked down against MSR writes (LOCKDOWN_MSR). */
  readonly lockdown: boolean;
  readonly nrCpus: number;
  /** CPUs whose ToPA PMIs some file claims, and those the asking file claims. */
  readonly armed: readonly number[];
  readonly armedMine: readonly number[];
  /** CPUs whose PT some file programmed, and those the asking file programmed. */
  readonly owned: readonly number[];
  readonly ownedMine: readonly number[];
  /** CPUs a release could not stop (TraceEn still read 1). */
  readonly taken: readonly number[];
}

/** "0,2-3" → [0, 2, 3]; "-" → []. */
export function parseCpuList(text: string): number[] {
  if (text === '-' || text === '') return [];
  return text.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map((n) => Number(n));
    if (!Number.isInteger(a) || (b !== undefined && !Number.isInteger(b))) throw new Error(`not a CPU list: ${text}`);
    return b === undefined ? [a!] : Array.from({ length: b - a! + 1 }, (_, i) => a! + i);
  });
}

/** "key=value" fields (the `kstate` reply, or the `state` verb's kstate line) as a map. */
export function fieldsOf(text: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of text) {
    const eq = f.indexOf('=');
    if (eq > 0) m.set(f.slice(0, eq), f.slice(eq + 1));
  }
  return m;
}

/** Parses the fields of a `kstate` reply; throws on a missing field. */
export function parseKstate(fields: readonly string[]): ModuleState {
  const m = fieldsOf(fields);
  const get = (k: string): string => {
    const v = m.get(k);
    if (v === undefined) throw new Error(`the module's state lacks ${k}: ${fields.join(' ')}`);
    return v;
  };
  const num = (k: string): number => Number(BigInt(get(k)));
  return {
    abi: num('abi'), files: num('files'), buffers: num('buffers'), bytes: num('bytes'),
    orphans: num('orphans'), orphanBytes: num('orphan_bytes'), mineBuffers: num('mine_buffers'), mineBytes: num('mine_bytes'),
    lockdown: num('lockdown') === 1, nrCpus: num('nr_cpus'),
    armed: parseCpuList(get('armed')), armedMine: parseCpuList(get('armed_mine')),
    owned: parseCpuList(get('owned')), ownedMine: parseCpuList(get('owned_mine')), taken: parseCpuList(get('taken')),
  };
}
