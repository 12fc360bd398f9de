// Which context a truth.jsonl record belongs to when several contexts share a
// CPU: the one whose image holds the record's IP; a record without an IP
// (`disable`) belongs to the context of the record before it.

/** A filter keeping the truth lines of the workload at [base, base + bytes). */
export function ownedTruth(base: bigint, bytes: number): (lines: readonly string[]) => string[] {
  const end = base + BigInt(bytes);
  return (lines) => {
    const out: string[] = [];
    let mine = false;
    for (const l of lines) {
      const m = /"ip":"(0x[0-9a-f]+)"/.exec(l);
      if (m) mine = BigInt(m[1]!) >= base && BigInt(m[1]!) < end;
      if (mine) out.push(l);
    }
    return out;
  };
}

/** The branch records (docs/formats/flow-json.md: they start with `ip`) of `lines` that belong to workload `w`. */
export function ownedBranches(lines: readonly string[], w: { readonly base: bigint; readonly image: Uint8Array }): number {
  return ownedTruth(w.base, w.image.length)(lines).filter((l) => l.startsWith('{"ip"')).length;
}
