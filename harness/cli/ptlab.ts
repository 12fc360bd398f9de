// Entry point of the `ptlab` executable (bin/ptlab.js loads the compiled form).
import process from 'node:process';
import { main, type CliIo } from './main.js';

const io: CliIo = {
  out: (s) => { process.stdout.write(s.endsWith('\n') ? s : `${s}\n`); },
  err: (s) => { process.stderr.write(s.endsWith('\n') ? s : `${s}\n`); },
};

main(process.argv.slice(2), io).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    io.err(`ptlab: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    process.exitCode = 1;
  },
);
