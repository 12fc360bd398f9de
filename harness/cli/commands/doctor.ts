// `ptlab doctor [--json]`: whether this host can run real Intel PT, and which scenarios run where
// (harness/qemu/doctor.ts). Exit status 0 only when a real-PT run is possible (docs/exit-codes.md).
import { diagnose, formatDiagnosis, gatherHostFacts } from '../../qemu/doctor.js';
import { commandArgs, parseCommandLine, UsageError } from '../args.js';
import { EXIT } from '../exit-codes.js';
import type { CliIo } from '../main.js';

const USAGE = [
  'usage: ptlab doctor [--json]',
  '  --json   one JSON document: the findings, whether a real-PT run is possible, the scenario matrix',
  '  exit 0 when a real-PT run is possible on this host, 1 when not, 2 on bad usage',
].join('\n');

/** Prints the host report; returns 0 when a real-PT run is possible, 1 otherwise, 2 on bad usage. */
export async function doctorCommand(argv: string[], io: CliIo): Promise<number> {
  const args = commandArgs('doctor', USAGE, io, () => {
    const { values, positionals, help } = parseCommandLine(argv, { json: { type: 'boolean' } });
    if (help) return 'help';
    if (positionals.length > 0) throw new UsageError(`takes no arguments (got ${positionals.join(' ')})`);
    return { json: values.json === true };
  });
  if (typeof args === 'number') return args;
  const d = diagnose(await gatherHostFacts());
  io.out(args.json ? JSON.stringify(d) : `${formatDiagnosis(d).join('\n')}\n`);
  return d.realPt ? EXIT.ok : EXIT.failed;
}
