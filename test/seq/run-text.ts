// Runs sequence text on a fresh sim (test helper): checked, then run, with its expectations.
import { createSim } from '../../harness/runner/targets.js';
import { checkSequence } from '../../harness/seq/check.js';
import { runSequence, type Expectation, type SeqOutcome } from '../../harness/seq/exec.js';
import { parseSeqText } from '../../harness/seq/parse.js';

/** Runs `text` as the file t.yaml on the sim (its `cpu:`, else skylake), seed 1. */
export async function runText(text: string): Promise<SeqOutcome & { lines: string[] }> {
  const seq = checkSequence(parseSeqText('t.yaml', text));
  const { sim, target } = await createSim(seq.cpu ?? 'skylake', 1);
  try {
    const out = await runSequence(seq, target, 1, { truth: () => sim.truth(0) });
    return { ...out, lines: target.lines.map((l) => JSON.stringify(l)) };
  } finally {
    await sim[Symbol.asyncDispose]();
  }
}

/** The expectation of the step at `line` of t.yaml (exactly one). */
export function at(out: { expectations: readonly Expectation[] }, line: number): Expectation {
  const found = out.expectations.filter((e) => e.name.startsWith(`t.yaml:${line} `));
  if (found.length !== 1) throw new Error(`expected one expectation at line ${line}, got ${JSON.stringify(out.expectations, null, 1)}`);
  return found[0]!;
}

/** The text of `lines`, one step per line after a `steps:` header (line 1 is `steps:`, so step i is at line i + 2). */
export function steps(...lines: string[]): string {
  return ['steps:', ...lines.map((l) => `  - ${l}`)].join('\n');
}
