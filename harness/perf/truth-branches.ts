// A run's true path (truth.jsonl, docs/formats/flow-json.md) as the branch list perf's Intel PT
// decoder gives with `--itrace=b`: one (from, to) pair per *taken* branch, with 0 standing for
// untraced code, as tools/perf/util/intel-pt.c synthesises its branch samples:
//
//   enable at IP                       →  0 → IP        ("tr strt": TIP.PGE)
//   jcc taken, jmp, call, ret, far.*   →  ip → to       (a jcc not taken is no sample)
//   a branch with no `to`, then disable →  ip → 0       ("tr end" bound to that branch: TIP.PGD)
//   a branch to T, then disable at T    →  ip → T        (one sample, "tr end": the TIP.PGD's IP is the branch's target)
//   disable on its own                 →  IP → 0       ("tr end async": FUP then TIP.PGD; IP is where the path stood)
//   async from → to                    →  from → to     (FUP then TIP)

/** One taken branch as perf prints it with `-F ip,addr`. */
export interface PerfBranch {
  readonly from: bigint;
  readonly to: bigint;
}

type TruthRecord = { readonly kind: string; readonly ip?: string; readonly to?: string; readonly from?: string; readonly taken?: boolean };

/** Records whose kind the mapping does not know how perf reports; the caller decides (overflow: OVF handling). */
export class UnmappedRecord extends Error {
  constructor(readonly record: string, readonly line: number) {
    super(`truth.jsonl line ${line}: no perf branch mapping for ${record}`);
  }
}

const big = (s: string | undefined): bigint => (s === undefined ? 0n : BigInt(s));

/** The branch list of truth.jsonl's text; throws UnmappedRecord at a record kind it cannot map (overflow). */
export function truthAsPerfBranches(truth: string): PerfBranch[] {
  const out: PerfBranch[] = [];
  let at = 0n; // where the path stands: the last branch's target, or where tracing was enabled
  let unbound: PerfBranch | undefined; // a branch whose target the trace does not give, awaiting its disable
  let last: TruthRecord | undefined; // the record before this one
  const lines = truth.split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    const r = JSON.parse(text) as TruthRecord;
    if (unbound && r.kind !== 'disable') throw new UnmappedRecord(`a branch without "to" not followed by disable (${text})`, i + 1);
    const before = last;
    last = r;
    switch (r.kind) {
      case 'enable':
        at = big(r.ip);
        out.push({ from: 0n, to: at });
        return;
      case 'disable':
        // The TIP.PGD names the target of the branch just taken: perf gives that branch only, as the trace's end.
        if (!unbound && r.ip !== undefined && before?.to !== undefined && before.kind !== 'async' && BigInt(before.to) === BigInt(r.ip)) return;
        out.push(unbound ?? { from: at, to: 0n });
        unbound = undefined;
        return;
      case 'async':
        at = big(r.to);
        out.push({ from: big(r.from), to: at });
        return;
      case 'jcc':
      case 'jmp':
      case 'call':
      case 'ret':
      case 'far.call':
      case 'far.jmp':
      case 'far.ret':
        if (r.to === undefined) {
          unbound = { from: big(r.ip), to: 0n };
          return;
        }
        at = big(r.to);
        if (r.kind !== 'jcc' || r.taken === true) out.push({ from: big(r.ip), to: at });
        return;
      default:
        throw new UnmappedRecord(r.kind, i + 1);
    }
  });
  if (unbound) out.push(unbound);
  return out;
}

/** `perf script -F ip,addr` lines ("  IP =>  ADDR", hex without 0x) as branches; other lines are skipped. */
export function parsePerfScriptBranches(text: string): PerfBranch[] {
  const out: PerfBranch[] = [];
  for (const line of text.split('\n')) {
    const m = /([0-9a-f]+)\s+=>\s+([0-9a-f]+)\s*$/.exec(line);
    if (m) out.push({ from: BigInt(`0x${m[1]}`), to: BigInt(`0x${m[2]}`) });
  }
  return out;
}

/** The index of the first pair that differs (or the shorter length when one list is a prefix of the other); -1 when equal. */
export function firstDifference(a: readonly PerfBranch[], b: readonly PerfBranch[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i]!.from !== b[i]!.from || a[i]!.to !== b[i]!.to) return i;
  return a.length === b.length ? -1 : n;
}
