// `ptlab …` in-process (harness/cli/main.ts), with its exit status and what it printed.
import { main } from '../../harness/cli/main.js';

/** Runs `ptlab argv…` and returns its exit status, stdout and stderr. */
export async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
