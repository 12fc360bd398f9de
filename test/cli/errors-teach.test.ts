// Errors that teach: a mistyped command, scenario, profile, knob or option is answered with the
// nearest valid name, in two lines (the mistake, then where the options are), exit 2 — never the
// general usage with exit 0, and never ten lines of usage burying the one that matters.
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';

async function ptlab(...argv: string[]): Promise<{ code: number; err: string; out: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, err: err.join('\n'), out: out.join('\n') };
}

describe('a mistake is named with what was meant', () => {
  test.for([
    { argv: ['help', 'bogus'], err: 'ptlab help: unknown command \'bogus\' (ptlab --help lists them)' },
    { argv: ['help', 'replya'], err: 'ptlab help: unknown command \'replya\' (did you mean replay?) (ptlab --help lists them)' },
    { argv: ['dmp', 'x.pt'], err: 'ptlab: unknown command \'dmp\' (did you mean dump?) (ptlab --help lists them)' },
    { argv: ['run', 'topa-grwo'], err: 'ptlab run: unknown scenario \'topa-grwo\' (did you mean topa-grow?) (see ptlab list)\n(ptlab run --help shows its options)' },
    { argv: ['run', '--hlep'], err: 'ptlab run: Unknown option \'--hlep\' (did you mean --help?)\n(ptlab run --help shows its options)' },
    { argv: ['run', 'topa-grow', '--seeed', '3'], err: 'ptlab run: Unknown option \'--seeed\' (did you mean --seed?)\n(ptlab run --help shows its options)' },
    { argv: ['dump', '--jsn', 'x.pt'], err: 'ptlab dump: Unknown option \'--jsn\' (did you mean --json?)\n(ptlab dump --help shows its options)' },
  ])('ptlab $argv: exit 2, "$err"', async ({ argv, err }) => {
    const r = await ptlab(...argv);
    expect([r.code, r.err, r.out]).toEqual([2, err, '']);
  });

  test('a misspelled profile or knob names the nearest one', async () => {
    const [p, k] = [await ptlab('run', 'topa-grow', '--cpu', 'skylak'), await ptlab('run', 'topa-grow', '--knob', 'no-topa-pm')];
    expect([p.code, /unknown CPU profile 'skylak' \(did you mean skylake\?\)/.test(p.err), k.code, /unknown model knob 'no-topa-pm' \(did you mean no-topa-pmi\?\)/.test(k.err)])
      .toEqual([2, true, 2, true]);
  });
});
