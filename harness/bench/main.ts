// `npm run bench` (dist/harness/bench/main.js): builds the libipt tools, runs
// every section of sections.ts and prints their tables. Exits 1 when a
// section finds a correctness problem (e.g. the decoders disagree) or, with
// --check, when a whole-process speed target (cli section) is missed; 2 on
// bad usage or when libipt/gcc is missing.
import { buildLibiptTools, LibiptToolsError } from './libipt-tools.js';
import { SECTIONS } from './sections.js';

const USAGE = 'usage: npm run bench -- [--quick] [--check] [SECTION...]\n  sections: ' + SECTIONS.map((s) => s.name).join(', ') +
  '\n  --check: exit 1 when a speed target of the cli section is missed';

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes('--quick'), check = argv.includes('--check');
  const names = argv.filter((a) => !a.startsWith('--'));
  const unknownFlags = argv.filter((a) => a.startsWith('--') && a !== '--quick' && a !== '--check');
  const unknownSections = names.filter((n) => !SECTIONS.some((s) => s.name === n));
  if (unknownFlags.length > 0 || unknownSections.length > 0 || argv.includes('--help')) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let tools;
  try {
    tools = await buildLibiptTools();
  } catch (e) {
    if (!(e instanceof LibiptToolsError)) throw e;
    process.stderr.write(`bench: ${e.message}\n`);
    return 2;
  }
  let ok = true;
  for (const section of SECTIONS) {
    if (names.length > 0 && !names.includes(section.name)) continue;
    process.stdout.write(`== ${section.name}${quick ? ' (--quick)' : ''} ==\n`);
    const report = await section.run({ quick, tools, check });
    process.stdout.write(`${report.lines.join('\n')}\n\n`);
    ok &&= report.ok;
  }
  return ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
