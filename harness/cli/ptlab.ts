// Entry point of the `ptlab` executable (bin/ptlab.js loads the compiled form). Standard output and
// error are written blocking (FdSink): bounded memory whatever reads them, and a reader that goes
// away ends the command quietly (exit 0: the reader has what it wanted). The global `process` is
// used, never `import process from 'node:process'`: that import reads every property of process,
// process.stdout among them, whose creation makes a piped stdout non-blocking (then every full
// pipe costs a wait).
import { isatty } from 'node:tty';
import { EXIT } from './exit-codes.js';
import { FdSink, OutputClosedError, OutputFailedError } from './fd-sink.js';
import { main, type CliIo } from './main.js';

const stdout = new FdSink(1), stderr = new FdSink(2);
const line = (s: string): string => (s.endsWith('\n') ? s : `${s}\n`);
const io: CliIo = {
  out: (s) => { stdout.write(line(s)); },
  outBytes: (b) => { stdout.writeBytes(b); },
  err: (s) => {
    try { stderr.write(line(s)); } catch (e) { if (!(e instanceof OutputClosedError || e instanceof OutputFailedError)) throw e; }
  },
  // A terminal on stderr gets one live status line, rewritten in place.
  ...(isatty(2) ? { status: (s: string) => { try { stderr.write(`\r\x1b[K${s.slice(0, (process.stderr.columns || 80) - 1)}`); } catch { /* closed: no status */ } } } : {}),
};

main(process.argv.slice(2), io).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    if (e instanceof OutputClosedError) { process.exitCode = 0; return; }
    // The output was lost (a full disk, /dev/full): not ptlab's failure, and not a verdict.
    if (e instanceof OutputFailedError) { io.err(`ptlab: ${e.message}`); process.exitCode = EXIT.incomplete; return; }
    // Not a verdict: a lab script that branches on 1 ("a verdict failed") must not take a crash for one.
    io.err(`ptlab: internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    process.exitCode = EXIT.internal;
  },
);
