// The `ptlab` command line: one sub-command per file under ./commands.
import { ptlabVersion } from '../runner/version.js';
import { EXIT_TABLE } from './exit-codes.js';
import { didYouMean } from '../text/nearest.js';

export interface CliIo {
  out(s: string): void;
  err(s: string): void;
  /** On a terminal: replaces the live status line on stderr ('' clears it). Absent when stderr is not a TTY. */
  status?(s: string): void;
  /** Raw bytes of whole lines for stdout (the fast path of dump and flow); absent: `out` gets them as text. */
  outBytes?(b: Uint8Array): void;
}

/**
 * Bytes handed to stdout at a time by the byte writers of dump and flow: a pipe's capacity, so a
 * write to a pipe with a reader returns at once and ptlab formats the next lines while the reader
 * drains these (1 MiB writes waited for the reader 16 times each).
 */
export const OUT_CHUNK = 64 * 1024;

/** Where a command sends whole output lines built as bytes: `outBytes`, or `out` as text. */
export function byteOutput(io: CliIo): (b: Uint8Array) => void {
  return io.outBytes ?? ((b) => io.out(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1')));
}

type Command = (argv: string[], io: CliIo) => Promise<number>;

/** Sub-commands, loaded on demand so `ptlab dump` does not pay for the model or QEMU code. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  dump: {
    summary: 'dump FILE.pt [--json|--stats]   decode a raw PT stream (ptdump-like; --json: packet JSON Lines)',
    load: async () => (await import('./commands/dump.js')).dumpCommand,
  },
  flow: {
    summary: 'flow TRACE.pt --image IMAGE.bin@0xBASE [--json] [--losses losses.json]   reconstruct the executed path',
    load: async () => (await import('./commands/flow.js')).flowCommand,
  },
  doctor: {
    summary: 'doctor [--json] [--target ssh …] what this host (or a lab machine) can run: QEMU, KVM, Intel PT, the module',
    load: async () => (await import('./commands/doctor.js')).doctorCommand,
  },
  list: {
    summary: 'list [--json]                    the scenarios: what each checks, where it applies, its negative control',
    load: async () => (await import('./commands/list.js')).listCommand,
  },
  run: {
    summary: 'run SCENARIO…|--all [--target sim|qemu|ssh] [--pt model|hardware] [--accel auto|tcg|kvm] [--cpu PROFILE|all]\n' +
      '          [--seed N|--seeds A-B] [--out DIR] [--json] [--max-target-failures N] [--knob NAME]… [--shard i/n] [--jobs N]\n' +
      '          [--host H --port P --user U --key F --known-host F] [--hosts FILE [--tags T1,T2]]\n' +
      '                                   run scenarios (default: every profile), one run directory each; exit 1 on any fail;\n' +
      '                                   --hosts: on every lab machine of an inventory in parallel, OUT/<host>/ each',
    load: async () => (await import('./commands/run.js')).runCommand,
  },
  merge: {
    summary: 'merge SHARD_DIR… --out SUITE [--force] [--copy]\n' +
      '                                   join the --out directories of run --shard i/n into one suite; exit as run',
    load: async () => (await import('./commands/merge.js')).mergeCommand,
  },
  diff: {
    summary: 'diff RUN_A RUN_B | --suite SUITE_A SUITE_B [--json] [--timing]\n' +
      '                                   compare two runs (or suites): verdicts, transcripts, packets, flow, losses; exit 1 when they differ',
    load: async () => (await import('./commands/diff.js')).diffCommand,
  },
  replay: {
    summary: 'replay RUN_DIR [--target sim|qemu|ssh] [--cpu PROFILE] [--knob NAME]… [--out DIR] [--json]\n' +
      '                                   issue a recorded run again on a target; exit 1 at the first operation whose result differs',
    load: async () => (await import('./commands/replay.js')).replayCommand,
  },
  report: {
    summary: 'report SUITE_DIR [--out FILE]     one self-contained HTML page of a suite: verdict matrix, ToPA, PMIs, losses',
    load: async () => (await import('./commands/report.js')).reportCommand,
  },
  export: {
    summary: 'export perf RUN_DIR -o FILE        a run directory as a perf.data for Linux perf (perf script --itrace=b)',
    load: async () => (await import('./commands/export.js')).exportCommand,
  },
  seq: {
    summary: 'seq FILE… [--target sim|qemu|ssh] [--pt model|hardware] [--accel auto|tcg|kvm] [--cpu PROFILE] [--seed N]\n' +
      '          [--out DIR] [--force] [--allow-msr] [--host H --port P --user U --key F --known-host F]\n' +
      '                                   run sequence files (cpuid/rdmsr/wrmsr/ToPA/trace/… steps with expectations); exit 1 on any fail',
    load: async () => (await import('./commands/seq.js')).seqCommand,
  },
};

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ptlab ${c.summary}`);
  return ['usage:', ...lines, '  ptlab help COMMAND | COMMAND --help   one command\'s options', '  ptlab --version', '', EXIT_TABLE, ''].join('\n');
}

/** Runs one command line; returns the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    io.out(`ptlab ${await ptlabVersion()}`);
    return 0;
  }
  if (name === 'help' && rest[0] !== undefined) {
    if (rest[0] in COMMANDS) return (await COMMANDS[rest[0]]!.load())(['--help'], io);
    io.err(`ptlab help: unknown command '${rest[0]}'${didYouMean(rest[0], Object.keys(COMMANDS))} (ptlab --help lists them)`);
    return 2;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name === undefined) io.err(usage());
    else io.out(usage());
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.err(`ptlab: unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))} (ptlab --help lists them)`);
    return 2;
  }
  return (await cmd.load())(rest, io);
}
