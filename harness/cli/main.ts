// The `ptlab` command line: one sub-command per file under ./commands.
export interface CliIo {
  out(s: string): void;
  err(s: string): void;
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
    summary: 'doctor                           what this host can run: QEMU, KVM, Intel PT, pt_mode, QEMU intel-pt',
    load: async () => (await import('./commands/doctor.js')).doctorCommand,
  },
  list: {
    summary: 'list [--json]                    the scenarios: what each checks, where it applies, its negative control',
    load: async () => (await import('./commands/list.js')).listCommand,
  },
  run: {
    summary: 'run SCENARIO…|--all [--target sim|qemu|ssh] [--pt model|hardware] [--accel auto|tcg|kvm] [--cpu PROFILE|all]\n' +
      '          [--seed N] [--out DIR] [--knob NAME]… [--host H --port P --user U --key F --known-host F]\n' +
      '                                   run scenarios (default: every profile), one run directory each; exit 1 on any fail',
    load: async () => (await import('./commands/run.js')).runCommand,
  },
};

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ptlab ${c.summary}`);
  return ['usage:', ...lines, ''].join('\n');
}

/** Runs one command line; returns the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.err(`ptlab: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  return (await cmd.load())(rest, io);
}
