// The layering of docs/design.md "Layers", as rules: imports only point downwards.
//
//   harness/cli, scenarios, runner, report, bench   what a user runs
//   harness/merge/                                   ptlab merge: above the runner and the report, below the CLI
//   harness/hosts/                                   ptlab run --hosts: above the runner, below the CLI
//   harness/report/html/                             ptlab report: reads run directories (rundir, report layer, codecs) only
//   harness/rundir/                                  the run directory: format, writers (RecordingTarget, staging), readers;
//                                                    runner, report, diff, merge, replay and seq import down into it
//   harness/hybrid/                                  targets composed of targets (`--pt model`)
//   harness/sim/   harness/qemu/   harness/ssh/      the targets; none imports another
//   harness/link/                                    the guest link both real targets use
//   driver/                                          session, ToPA, PMI, context switch, collect
//   driver/decode/                                   encoder, decoder, flow
//   driver/hw/                                       the SDM codecs
//   driver/base/                                     errors, hex, assertNever: imports nothing
//
// Type-only imports count (an upward `import type` is still an arrow). `test/architecture/`
// runs these rules in `npm test`, and shows that an upward import fails them.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'base-imports-nothing',
      comment: 'driver/base is the bottom of the graph: errors and small helpers every layer may use.',
      severity: 'error',
      from: { path: '^driver/base/' },
      to: { path: '^(driver|harness)/', pathNot: '^driver/base/' },
    },
    {
      name: 'codecs-import-only-base',
      comment: 'driver/hw holds the SDM codecs: pure functions over hardware facts, below the driver and the decoder.',
      severity: 'error',
      from: { path: '^driver/hw/' },
      to: { path: '^(driver|harness)/', pathNot: '^driver/(base|hw)/' },
    },
    {
      name: 'decoder-below-driver',
      comment: 'The packet decoder and flow reconstruction stand on the codecs, never on the driver.',
      severity: 'error',
      from: { path: '^driver/decode/' },
      to: { path: '^(driver|harness)/', pathNot: '^driver/(base|hw|decode)/' },
    },
    {
      name: 'driver-never-imports-harness',
      comment: 'A target is handed to the driver, which never learns which kind it has (driver/target.ts).',
      severity: 'error',
      from: { path: '^driver/' },
      to: { path: '^harness/' },
    },
    {
      name: 'link-below-targets',
      comment: 'The guest link (helper protocol, channel, deadlines) serves the qemu and ssh targets and knows neither.',
      severity: 'error',
      from: { path: '^harness/link/' },
      to: { path: '^harness/', pathNot: '^harness/(link|native)/' },
    },
    {
      name: 'sim-imports-no-other-target',
      severity: 'error',
      from: { path: '^harness/sim/' },
      to: { path: '^harness/(qemu|ssh|link)/' },
    },
    {
      name: 'qemu-imports-no-other-target',
      severity: 'error',
      from: { path: '^harness/qemu/' },
      to: { path: '^harness/(sim|ssh)/' },
    },
    {
      name: 'ssh-imports-no-other-target',
      severity: 'error',
      from: { path: '^harness/ssh/' },
      to: { path: '^harness/(sim|qemu)/' },
    },
    {
      name: 'targets-below-the-suite',
      comment: 'Targets do not know the runner, the scenarios, the CLI, the reports, the benchmarks or the targets composed of them (harness/hybrid).',
      severity: 'error',
      from: { path: '^harness/(sim|qemu|ssh|link|native)/' },
      to: { path: '^harness/(cli|scenarios|runner|report|bench|hybrid|seq|diff|merge|replay)/' },
    },
    {
      name: 'merge-below-the-cli-only',
      comment: 'harness/merge joins shard directories (ptlab merge): it stands on the runner and the report, and only the CLI imports it.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/(cli|merge)/' },
      to: { path: '^harness/merge/' },
    },
    {
      name: 'hosts-below-the-cli-only',
      comment: 'harness/hosts runs a suite on every machine of an inventory (ptlab run --hosts): it stands on the runner, the report and the ssh key checks, and only the CLI imports it.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/(cli|hosts)/' },
      to: { path: '^harness/hosts/' },
    },
    {
      name: 'replay-below-the-cli-only',
      comment: 'harness/replay issues a recorded transcript again (ptlab replay): it stands on the runner, the run directory (its recorder and normaliser) and the targets, and only the CLI imports it.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/(cli|replay)/' },
      to: { path: '^harness/replay/' },
    },
    {
      name: 'crash-below-the-cli-only',
      comment: 'harness/crash is the crash-point sweep (npm run sweep -- --crash-points): it stands on the runner, the scenarios and the sim, and only the CLI (the sweep entry) imports it.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/(cli|crash)/' },
      to: { path: '^harness/crash/' },
    },
    {
      name: 'fuzz-below-the-cli-only',
      comment: 'harness/fuzz is the CLI fuzz (npm run fuzz): it drives ptlab as processes, so nothing but its CLI entry imports it, and it imports no command.',
      severity: 'error',
      from: { path: '^harness/', pathNot: '^harness/(cli|fuzz)/' },
      to: { path: '^harness/fuzz/' },
    },
    {
      name: 'rundir-below-its-readers-and-writers',
      comment: 'harness/rundir is the run directory: its format, its writers (RecordingTarget, staging and commit) and its readers. The runner, the report, diff, merge, replay and seq stand on it; it stands on the driver and harness/files.',
      severity: 'error',
      from: { path: '^harness/rundir/' },
      to: { path: '^harness/(cli|scenarios|runner|report|diff|merge|replay|seq|hosts|bench|crash|fuzz|perf)/' },
    },
    {
      name: 'report-html-reads-run-directories',
      comment: 'harness/report/html (ptlab report) reads run directories through harness/rundir, the report layer and the codecs; run and merge call it, it calls neither them nor a target.',
      severity: 'error',
      from: { path: '^harness/report/html/' },
      to: { path: '^harness/(cli|scenarios|runner|merge|seq|replay|bench|sim|qemu|ssh|link|hybrid|native)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|build|runs)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
