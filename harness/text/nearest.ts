// "Did you mean …?": the valid name nearest to a misspelled one, for every place a user types a
// name (scenarios, profiles, knobs, commands, options, sequence-file and inventory keys).

/** Levenshtein distance, case-insensitive (a wrong case costs nothing: `stopped` → Stopped). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase(), y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[y.length]!;
}

/** The valid name nearest to `word`, when it is near enough to be a misspelling (at most a third of its letters wrong). */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined, bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestD) { best = c; bestD = d; }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** ` (did you mean NAME?)` for a misspelling of one of `candidates`, else the empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const n = nearest(word, candidates);
  return n === undefined ? '' : ` (did you mean ${n}?)`;
}
