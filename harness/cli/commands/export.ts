// `ptlab export perf RUN_DIR -o FILE`: a run directory as a perf.data that Linux perf decodes
// (`perf script -i FILE --itrace=b`; harness/perf/, docs/perf.md). FILE must not exist: it is
// written under a temporary name beside it, mode 0600, and takes its name only when whole.
// Exit 0 written; 2 bad usage, FILE exists, or RUN_DIR is not a run directory that traced;
// 4 FILE could not be written.
import { PtError } from '../../../driver/base/errors.js';
import { perfDataOfRun, type PerfExport } from '../../perf/export-run.js';
import { readRunForPerf } from '../../perf/read-run.js';
import { assertAbsent, writeNewFile } from '../../perf/write-new-file.js';
import { ptlabVersion } from '../../runner/version.js';
import { systemWords } from '../../text/strerror.js';
import { commandArgs, parseCommandLine, UsageError, type OptionSpec } from '../args.js';
import { EXIT } from '../exit-codes.js';
import { isDirectory } from '../run-dir-input.js';
import type { CliIo } from '../main.js';

export const EXPORT_USAGE = [
  'usage: ptlab export perf RUN_DIR -o FILE',
  '  writes the run directory RUN_DIR (its trace.pt, image.bin at image.json\'s base, the IA32_RTIT_CTL',
  '  of its transcript) as a perf.data file FILE for Linux perf:',
  '    perf script -i FILE --itrace=b -F hw:ip,addr   the taken branches, as perf\'s Intel PT decoder sees them',
  '  (hw: the synthesised branch samples; a bare -F ip,addr also asks it of the intel_pt event, which has no ADDR)',
  '  perf reads the code from RUN_DIR/image.bin (its absolute path is in the file): keep it there.',
  '  FILE must not exist (ptlab never replaces a file); it is created with mode 0600. docs/perf.md',
  '  exit 0: written; 2: bad usage, FILE exists, or RUN_DIR is not a run directory that traced; 4: cannot write FILE',
].join('\n');

const OPTIONS = { out: { type: 'string', short: 'o' } } as const satisfies Record<string, OptionSpec>;

/** The formats `export` writes. */
const FORMATS = ['perf'] as const;

function exportArgs(argv: string[]): { run: string; out: string } | 'help' {
  const { values, positionals, help } = parseCommandLine(argv, OPTIONS);
  if (help) return 'help';
  const [format, ...rest] = positionals;
  if (format === undefined) throw new UsageError(`missing the format (${FORMATS.join(', ')})`);
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`unknown format '${format}' (formats: ${FORMATS.join(', ')})`);
  if (rest.length !== 1) throw new UsageError(rest.length === 0 ? 'missing RUN_DIR' : `one run directory, got ${rest.length}`);
  if (values.out === undefined || values.out === '') throw new UsageError('missing -o FILE: where to write the perf.data');
  return { run: rest[0]!, out: values.out };
}

/** `ptlab export`. */
export async function exportCommand(argv: string[], io: CliIo): Promise<number> {
  const args = commandArgs('export', EXPORT_USAGE, io, () => exportArgs(argv));
  if (typeof args === 'number') return args;
  let data: PerfExport;
  try {
    if (!(await isDirectory(args.run))) throw new PtError('bad_config', `${args.run}: not a directory (give a run directory, such as runs/a/topa-grow/skylake)`);
    // Refused before anything is read: FILE exists (checked again, atomically, when it is written).
    await assertAbsent(args.out);
    data = perfDataOfRun(await readRunForPerf(args.run), await ptlabVersion());
  } catch (e) {
    if (!(e instanceof PtError)) throw e;
    io.err(`ptlab export: ${e.message}`);
    return EXIT.usage;
  }
  try {
    await writeNewFile(args.out, data.bytes);
  } catch (e) {
    if (e instanceof PtError) {
      io.err(`ptlab export: ${e.message}`);
      return EXIT.usage;
    }
    const code = (e as NodeJS.ErrnoException).code;
    if (code === undefined) throw e;
    io.err(`ptlab export: cannot write ${args.out}: ${systemWords(e)}`);
    return EXIT.incomplete;
  }
  for (const n of data.notes) io.err(`ptlab export: note: ${n}`);
  io.out(`perf.data: ${args.out} (${data.bytes.length} bytes; perf script -i ${args.out} --itrace=b -F hw:ip,addr)`);
  return EXIT.ok;
}
