// The CI examples of sharding (examples/ci/, docs/sharding.md): a GitHub Actions
// workflow with a matrix of shards and a merge job, and a Kubernetes Indexed Job. Every `ptlab`
// command line in them must parse with the real command's option spec (RUN_OPTIONS,
// MERGE_OPTIONS: an option ptlab does not have fails here), and `run` lines through parseRunArgs;
// the shards they run are 1..n of one n, and the merge names n shard directories.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseCommandLine, type OptionSpec } from '../../harness/cli/args.js';
import { MERGE_OPTIONS } from '../../harness/cli/commands/merge.js';
import { parseRunArgs, RUN_OPTIONS } from '../../harness/cli/commands/run.js';

const DIR = join(process.cwd(), 'examples', 'ci');
/** The option specs of the commands the examples may use. */
const SPECS: Record<string, Record<string, OptionSpec>> = { run: RUN_OPTIONS, merge: MERGE_OPTIONS };

/** Keys whose strings are shell: a GitHub step's `run`, a container's `command` and `args`. */
const SHELL_KEYS = new Set(['run', 'command', 'args']);

/** Every string under a SHELL_KEYS key in a YAML value. */
function scripts(v: unknown, shell = false): string[] {
  if (typeof v === 'string') return shell ? [v] : [];
  if (Array.isArray(v)) return v.flatMap((x) => scripts(x, shell));
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => scripts(x, shell || SHELL_KEYS.has(k)));
  return [];
}

interface PtlabLine { readonly command: string; readonly args: string[]; readonly text: string }

/**
 * The `ptlab` command lines of a shell text: GitHub expressions (`${{ … }}`) and shell arithmetic
 * (`$((…))`) become `1`, lines are joined at a trailing backslash, split at ; && || | and newlines,
 * cut into words (quotes removed), and the words after `ptlab CMD` are its arguments.
 */
function ptlabLines(text: string): PtlabLine[] {
  const plain = text.replace(/\$\{\{[^}]*\}\}/g, '1').replace(/\$\(\([^)]*\)\)/g, '1').replace(/\\\n/g, ' ');
  const out: PtlabLine[] = [];
  for (const part of plain.split(/\n|;|&&|\|\||\|/)) {
    const words = (part.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ''));
    const at = words.findIndex((w) => /(^|\/)ptlab(\.js)?$/.test(w));
    if (at >= 0 && words[at + 1] !== undefined) out.push({ command: words[at + 1]!, args: words.slice(at + 2), text: part.trim() });
  }
  return out;
}

const files = ['github-actions.yml', 'k8s-indexed-job.yaml'];
const docs = Object.fromEntries(files.map((f) => {
  const parsed = parseAllDocuments(readFileSync(join(DIR, f), 'utf8'));
  return [f, (Array.isArray(parsed) ? parsed : [parsed]).map((d) => { expect(d.errors).toEqual([]); return d.toJS() as unknown; })];
})) as Record<string, unknown[]>;
const linesOf = (f: string): PtlabLine[] => docs[f]!.flatMap((d) => scripts(d)).flatMap(ptlabLines);

describe.for(files)('examples/ci/%s', (file) => {
  test('runs shards with ptlab run --shard and joins them with ptlab merge', () => {
    const lines = linesOf(file);
    expect([lines.some((l) => l.command === 'run' && l.args.includes('--shard')), lines.some((l) => l.command === 'merge')]).toEqual([true, true]);
  });

  test('every ptlab command line names only options its command has, and parses', () => {
    const bad: string[] = [];
    for (const l of linesOf(file)) {
      const spec = SPECS[l.command];
      if (spec === undefined) { bad.push(`${l.text}: no option spec for 'ptlab ${l.command}' here`); continue; }
      try {
        parseCommandLine(l.args, spec);
        if (l.command === 'run') parseRunArgs(l.args);
      } catch (e) {
        bad.push(`${l.text}: ${(e as Error).message}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

test('the option check catches an option ptlab does not have', () => {
  const [l] = ptlabLines('npx ptlab run --all --shards ${{ matrix.shard }}/4');
  expect(() => parseCommandLine(l!.args, SPECS[l!.command]!)).toThrow(/--shards/);
});

describe('the shards of the examples are 1..n of one n, and the merge joins n of them', () => {
  /** n of `--shard i/n` in the run lines, and how many directories the merge names. */
  const cut = (f: string) => {
    const lines = linesOf(f);
    const shard = lines.find((l) => l.command === 'run')!.args;
    const merge = parseCommandLine(lines.find((l) => l.command === 'merge')!.args, MERGE_OPTIONS);
    return { n: Number(shard[shard.indexOf('--shard') + 1]!.split('/')[1]), merged: merge.positionals.length };
  };

  test('GitHub Actions: the matrix lists shards 1..n', () => {
    const wf = docs['github-actions.yml']![0] as { jobs: { shard: { strategy: { matrix: { shard: number[] } } }; merge: { needs: string; if: string } } };
    const { n, merged } = cut('github-actions.yml');
    expect([wf.jobs.shard.strategy.matrix.shard, merged, wf.jobs.merge.needs, wf.jobs.merge.if]).toEqual([Array.from({ length: n }, (_, i) => i + 1), n, 'shard', 'always()']);
  });

  test('Kubernetes: an Indexed Job of n completions, shard JOB_COMPLETION_INDEX + 1', () => {
    const job = docs['k8s-indexed-job.yaml']![0] as { spec: { completionMode: string; completions: number } };
    const { n, merged } = cut('k8s-indexed-job.yaml');
    const raw = readFileSync(join(DIR, 'k8s-indexed-job.yaml'), 'utf8');
    expect([job.spec.completionMode, job.spec.completions, merged, raw.includes(`--shard "$((JOB_COMPLETION_INDEX + 1))/${n}"`)]).toEqual(['Indexed', n, n, true]);
  });
});
