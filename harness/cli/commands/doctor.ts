// `ptlab doctor`: whether this host can run real Intel PT, and which scenarios run where
// (harness/qemu/doctor.ts). Exit status 0 only when a real-PT run is possible.
import { diagnose, formatDiagnosis, gatherHostFacts } from '../../qemu/doctor.js';

/** Prints the host report; returns 0 when a real-PT run is possible, 1 otherwise, 2 on bad usage. */
export async function doctorCommand(argv: string[], io: { out(s: string): void; err(s: string): void }): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.out('usage: ptlab doctor\n  exit 0 when a real-PT run is possible on this host, 1 when not, 2 on bad usage\n');
    return 0;
  }
  if (argv.length > 0) {
    io.err(`ptlab doctor: takes no arguments (got ${argv.join(' ')})\n`);
    return 2;
  }
  const d = diagnose(await gatherHostFacts());
  io.out(`${formatDiagnosis(d).join('\n')}\n`);
  return d.realPt ? 0 : 1;
}
