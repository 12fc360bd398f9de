// `ptlab export perf RUN_DIR -o FILE` as a user meets it: the file it writes (new, whole, 0600),
// and each way the command line or the run directory can be wrong (one line, exit 2, nothing written).
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ptlab } from '../cli/run-main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-export-cli-');
const suite = join(root, 'suite');
await ptlab('run', 'topa-grow', 'single-entry-topa', 'err-reserved-bit', '--cpu', 'skylake,broadwell', '--out', suite);
const run = join(suite, 'topa-grow', 'skylake');

describe('ptlab export perf', () => {
  test('writes a new perf.data, mode 0600, and leaves no temporary file beside it', async () => {
    const out = join(root, 'new', 'tg.data');
    await mkdir(join(root, 'new'));
    const r = await ptlab('export', 'perf', run, '-o', out);
    const st = await stat(out);
    const head = (await readFile(out)).subarray(0, 8).toString('latin1');
    expect([r.code, r.err, head, st.mode & 0o777, await readdir(join(root, 'new'))]).toEqual([0, '', 'PERFILE2', 0o600, ['tg.data']]);
  });

  test('refuses an -o that exists (a file, a dangling link) and leaves it as it was', async () => {
    const file = join(root, 'theirs.data'), link = join(root, 'dangling.data');
    await writeFile(file, 'not ptlab\'s');
    await symlink(join(root, 'nowhere'), link);
    const [a, b] = [await ptlab('export', 'perf', run, '-o', file), await ptlab('export', 'perf', run, '--out', link)];
    expect([a.code, a.err, await readFile(file, 'utf8'), b.code, b.err]).toEqual([
      2, `ptlab export: ${file} exists: ptlab writes a new file only and never replaces one (remove it or give another -o)`, 'not ptlab\'s',
      2, `ptlab export: ${link} exists: ptlab writes a new file only and never replaces one (remove it or give another -o)`,
    ]);
  });

  test('refuses what is not a run directory that traced: one line, exit 2, nothing written', async () => {
    const noImage = join(root, 'no-image');
    await mkdir(noImage);
    for (const f of ['result.json', 'trace.pt', 'transcript.jsonl', 'image.bin']) await writeFile(join(noImage, f), await readFile(join(run, f)));
    const out = join(root, 'never.data');
    const cases = {
      missing: join(root, 'nothing-here'),
      file: join(run, 'trace.pt'),
      'not a run': root,
      skipped: join(suite, 'single-entry-topa', 'skylake'),
      'never traced': join(suite, 'err-reserved-bit', 'skylake'),
      'no image.json': noImage,
    };
    const got: Record<string, [number, string]> = {};
    for (const [k, dir] of Object.entries(cases)) {
      const r = await ptlab('export', 'perf', dir, '-o', out);
      got[k] = [r.code, r.err];
    }
    expect(got).toEqual({
      missing: [2, `ptlab export: ${cases.missing}: not a directory (give a run directory, such as runs/a/topa-grow/skylake)`],
      file: [2, `ptlab export: ${cases.file}: not a directory (give a run directory, such as runs/a/topa-grow/skylake)`],
      'not a run': [2, `ptlab export: not a run directory (no result.json): ${root}`],
      skipped: [2, `ptlab export: ${cases.skipped}: a run directory without trace.pt: only a run that traced can be exported (a skipped run has none)`],
      'never traced': [2, `ptlab export: ${join(cases['never traced'], 'transcript.jsonl')}: no write of IA32_RTIT_CTL (WRMSR or XRSTORS) sets TraceEn: the run never traced`],
      'no image.json': [2, `ptlab export: ${noImage}: a run directory without image.json: it says where the code was loaded`],
    });
    expect(await stat(out).then(() => true, () => false)).toBe(false);
  });

  test('a wrong command line says what is wrong and where the options are', async () => {
    const got = await Promise.all([
      ptlab('export'), ptlab('export', 'ctf', run, '-o', 'x'), ptlab('export', 'perf', '-o', 'x'), ptlab('export', 'perf', run),
      ptlab('export', 'perf', run, run, '-o', 'x'),
    ]);
    expect(got.map((r) => [r.code, r.err.split('\n')[0]])).toEqual([
      [2, 'ptlab export: missing the format (perf)'],
      [2, 'ptlab export: unknown format \'ctf\' (formats: perf)'],
      [2, 'ptlab export: missing RUN_DIR'],
      [2, 'ptlab export: missing -o FILE: where to write the perf.data'],
      [2, 'ptlab export: one run directory, got 2'],
    ]);
  });

  test('--help and ptlab help export print the usage, exit 0', async () => {
    const [a, b] = [await ptlab('export', '--help'), await ptlab('help', 'export')];
    expect([a.code, a.out.split('\n')[0], b.code, b.out]).toEqual([0, 'usage: ptlab export perf RUN_DIR -o FILE', 0, a.out]);
  });

  test('an image path perf cannot name in a filter (a space) leaves the IP filters out, and says so', async () => {
    const spaced = join(root, 'a run');
    await mkdir(spaced);
    for (const f of await readdir(run)) await writeFile(join(spaced, f), await readFile(join(run, f)));
    const r = await ptlab('export', 'perf', spaced, '-o', join(root, 'spaced.data'));
    expect([r.code, r.err]).toEqual([0, expect.stringMatching(/^ptlab export: note: the run's IP filter ranges are left out: perf cannot name .*a run\/image\.bin in a filter/)]);
  });

  test('-o under /proc, /sys or /dev is refused', async () => {
    const r = await ptlab('export', 'perf', run, '-o', '/dev/shm-ptlab-never.data');
    expect([r.code, r.err]).toEqual([2, 'ptlab export: /dev/shm-ptlab-never.data lies under /dev, a kernel file system: give a path on a disk']);
  });
});
