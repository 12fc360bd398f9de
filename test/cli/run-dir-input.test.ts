// `dump` and `flow` take a run directory where they take a trace (its trace.pt; for flow also its
// image at image.json's base and its losses.json), and flow takes ptxed's --pt and --raw: each
// form decodes to exactly what the long form gives, and a directory that is no run's says so.
import { execa } from 'execa';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const root = await tmpRoot('ptlab-run-dir-input-');
await main(['run', 'topa-grow', 'single-entry-topa', '--cpu', 'skylake,broadwell', '--out', join(root, 'suite')], { out: () => undefined, err: () => undefined });
const run = join(root, 'suite', 'topa-grow', 'skylake');
const base = (JSON.parse(await readFile(join(run, 'image.json'), 'utf8')) as { base: string }).base;
const ptlab = (...args: string[]) => execa('node', [CLI, ...args], { reject: false, encoding: 'buffer' });
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

describe('a run directory in place of a trace', () => {
  test('flow RUN_DIR decodes as flow of its trace.pt with --image image.bin@BASE and --losses', async () => {
    const long = await ptlab('flow', join(run, 'trace.pt'), '--image', `${join(run, 'image.bin')}@${base}`, '--losses', join(run, 'losses.json'), '--json');
    const short = await ptlab('flow', run, '--json');
    expect([short.exitCode, short.stdout.length > 1000, Buffer.compare(Buffer.from(short.stdout), Buffer.from(long.stdout))]).toEqual([long.exitCode, true, 0]);
  });

  test('flow takes ptxed\'s --pt FILE and --raw FILE:BASE, and refuses the forms it does not take', async () => {
    const long = await ptlab('flow', join(run, 'trace.pt'), '--image', `${join(run, 'image.bin')}@${base}`, '--json');
    const ptxed = await ptlab('flow', '--pt', join(run, 'trace.pt'), '--raw', `${join(run, 'image.bin')}:${base}`, '--json');
    expect([ptxed.exitCode, Buffer.compare(Buffer.from(ptxed.stdout), Buffer.from(long.stdout))]).toEqual([long.exitCode, 0]);
    const part = await ptlab('flow', '--pt', join(run, 'trace.pt'), '--raw', `${join(run, 'image.bin')}:0-100:${base}`);
    const both = await ptlab('flow', join(run, 'trace.pt'), '--pt', join(run, 'trace.pt'), '--raw', `${join(run, 'image.bin')}:${base}`);
    expect([part.exitCode, text(part.stderr).split('\n')[0], both.exitCode, text(both.stderr).split('\n')[0]]).toEqual([
      2, expect.stringMatching(/^ptlab flow: bad --raw '.*' \(want FILE:BASE as ptxed takes it/),
      2, 'ptlab flow: --pt names the trace: give it or a positional TRACE.pt, not both',
    ]);
  });

  test('dump RUN_DIR prints what dump of its trace.pt prints', async () => {
    const [a, b] = [await ptlab('dump', run), await ptlab('dump', join(run, 'trace.pt'))];
    expect([a.exitCode, Buffer.compare(Buffer.from(a.stdout), Buffer.from(b.stdout))]).toEqual([b.exitCode, 0]);
  });

  test('a directory with no trace (a skipped run, or none at all) and one without image.json: exit 2, one line', async () => {
    const skipped = join(root, 'suite', 'single-entry-topa', 'skylake');
    const noImage = join(root, 'no-image');
    await mkdir(noImage, { recursive: true });
    await writeFile(join(noImage, 'trace.pt'), await readFile(join(run, 'trace.pt')));
    const [d, f, n] = [await ptlab('dump', skipped), await ptlab('flow', root), await ptlab('flow', noImage)];
    expect([d.exitCode, text(d.stderr), f.exitCode, text(f.stderr), n.exitCode, text(n.stderr)]).toEqual([
      2, `ptlab dump: ${skipped}: a directory without trace.pt: give a trace file, or a run directory of a run that traced (a skipped run has none)`,
      2, `ptlab flow: ${root}: a directory without trace.pt: give a trace file, or a run directory of a run that traced (a skipped run has none)`,
      2, `ptlab flow: ${noImage}: a run directory without image.json: give --image FILE@BASE`,
    ]);
  });
});
