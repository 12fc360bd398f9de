// The repo cites its own docs: every `docs/…` path named in code, tests,
// scripts and docs exists, every section `docs/sdm/F.md §N` (or `§N.M`) cited is a numbered
// heading of that file, every `docs/design.md "Heading"` is one of its headings, and nothing
// points outside the repo.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = process.cwd();
const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n')
  .filter((f) => f !== '' && !f.startsWith('package-lock') && f !== 'test/docs/citations.test.ts' && /\.(ts|mjs|js|c|h|sh|md|json)$|^\.ci\//.test(f) && existsSync(join(root, f)));
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

/** Numbered headings of a markdown file: "## 4. Title" and "### 4.5 Title" give "4" and "4.5". */
function sections(file: string): Set<string> {
  const out = new Set<string>();
  for (const m of readFileSync(join(root, file), 'utf8').matchAll(/^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s/gm)) out.add(m[1]!);
  return out;
}

describe('citations of docs/', () => {
  test('every docs/ path cited exists', () => {
    const missing: string[] = [];
    for (const [f, t] of text) {
      for (const m of t.matchAll(/\bdocs\/[A-Za-z0-9_./-]+\.(md|json|xsd)\b/g)) if (!existsSync(join(root, m[0]))) missing.push(`${f}: ${m[0]}`);
    }
    expect(missing).toEqual([]);
  });

  test('every docs/sdm section cited is a numbered heading of its file', () => {
    const known = new Map<string, Set<string>>();
    const missing = new Set<string>();
    for (const [f, t] of text) {
      for (const m of t.matchAll(/docs\/sdm\/([a-z-]+|README)\.md((?:[ ,;]*(?:and |or )?§\s?\d+(?:\.\d+)*(?:[–-]§?\d+(?:\.\d+)*)?)+)/g)) {
        const file = `docs/sdm/${m[1]}.md`;
        if (!existsSync(join(root, file))) continue;
        const have = known.get(file) ?? sections(file);
        known.set(file, have);
        for (const s of m[2]!.matchAll(/§\s?(\d+(?:\.\d+)*)/g)) if (!have.has(s[1]!)) missing.add(`${file} §${s[1]} (cited in ${f})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  test('every docs/design.md "Heading" cited is a heading there', () => {
    const headings = new Set([...readFileSync(join(root, 'docs/design.md'), 'utf8').matchAll(/^#{2,4}\s+(.+)$/gm)].map((m) => m[1]!.trim()));
    const missing = new Set<string>();
    // A heading cited as `docs/design.md "Heading"` on one line (a quotation after a colon is not a heading).
    for (const [f, t] of text) for (const m of t.matchAll(/docs\/design\.md "([^"\n]+)"/g)) if (!headings.has(m[1]!)) missing.add(`"${m[1]}" (cited in ${f})`);
    expect([...missing]).toEqual([]);
  });

  test('nothing points outside the repo', () => {
    const outside = files.filter((f) => /\.\.\/shared|shared\/spec|\bqemu-notes\b|\banchors\.md\b/.test(text.get(f)!));
    expect(outside).toEqual([]);
  });
});
