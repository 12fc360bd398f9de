// Every option of libipt's ptdump and ptxed (their --help, libipt 2.x), with ptlab's equivalent or
// why there is none. One table: `dump` and `flow` refuse an option ptlab does not take with its
// row's reason instead of "unknown option", and docs/formats/libipt-options.md lists the same rows
// (test/cli/libipt-options.test.ts keeps the two equal and runs every equivalent).

/** The libipt tool an option belongs to. */
export type LibiptTool = 'ptdump' | 'ptxed';

export interface LibiptOption {
  readonly tool: LibiptTool;
  /** As libipt spells it; `--filter:addr<n>_cfg` stands for its n = 0…3 forms. */
  readonly option: string;
  /** What it does in libipt. */
  readonly does: string;
  /** ptlab's equivalent, as a command line; absent when ptlab has none. */
  readonly ptlab?: string;
  /** Why ptlab has none, or how its equivalent differs. */
  readonly note?: string;
}

const NO_ERRATA = 'taken and checked, so that the command lines in result.json run as they are; ptlab decodes by the SDM and applies no errata workaround yet: it names on stderr the packet-stream errata of that CPU (driver/hw/errata.ts)';
const TIMING = 'taken and checked; used by --time (and dump --tcal); a run directory gives it from image.json';
const KEEP_TCAL = 'ptlab does what libipt does without it: an OVF drops the cycle counts towards the next measurement and keeps the ratio (pt_tcal_update_ovf); keeping the counts over an OVF is not offered';
const INSN = 'flow lists branches and events; --insn lists each instruction as ptxed does (iced-x86 disassembly), and this option implies it';
const NO_SIDEBAND = 'ptlab flow reads a perf.data whole, its sideband (MMAP, COMM, AUX flags) included: `ptlab flow PERF.DATA [--sysroot DIR]` (docs/perf.md); libipt\'s separate sideband streams are not taken';

export const LIBIPT_OPTIONS: readonly LibiptOption[] = [
  // ---- ptdump ----
  { tool: 'ptdump', option: '--help', does: 'the help text', ptlab: 'ptlab dump --help' },
  { tool: 'ptdump', option: '--version', does: 'the version', ptlab: 'ptlab --version' },
  { tool: 'ptdump', option: 'FILE[:FROM[-TO]]', does: 'the trace, or its bytes FROM to TO; offsets count from FROM', ptlab: 'ptlab dump FILE:FROM-TO', note: 'FROM and TO are 0x… hex or decimal (libipt reads a leading 0 as octal); a name that is an existing file is that file' },
  { tool: 'ptdump', option: '--no-sync', does: 'start at the first byte instead of the first PSB', ptlab: 'ptlab dump --no-sync FILE' },
  { tool: 'ptdump', option: '--quiet', does: 'print nothing but errors', ptlab: 'ptlab dump --quiet FILE' },
  { tool: 'ptdump', option: '--no-pad', does: 'leave out PAD packets', ptlab: 'ptlab dump --no-pad FILE' },
  { tool: 'ptdump', option: '--no-timing', does: 'leave out TSC, CBR, TMA, MTC and CYC packets', ptlab: 'ptlab dump --no-timing FILE' },
  { tool: 'ptdump', option: '--no-cyc', does: 'leave out CYC packets', ptlab: 'ptlab dump --no-cyc FILE' },
  { tool: 'ptdump', option: '--no-offset', does: 'leave out the offset column', ptlab: 'ptlab dump --no-offset FILE' },
  { tool: 'ptdump', option: '--raw', does: 'show each packet\'s bytes in hex', ptlab: 'ptlab dump --raw FILE' },
  { tool: 'ptdump', option: '--lastip', does: 'show Last IP on packets with an IP payload', ptlab: 'ptlab dump --lastip FILE', note: 'always on in ptlab: the `ip` column' },
  { tool: 'ptdump', option: '--exec-mode', does: 'show the execution mode on MODE.Exec', ptlab: 'ptlab dump --exec-mode FILE', note: 'always on in ptlab: `16bit`, `32bit`, `64bit`' },
  { tool: 'ptdump', option: '--time', does: 'show the estimated TSC on timing packets', ptlab: 'ptlab dump --time FILE', note: 'on TSC, TMA, MTC and CYC lines, estimated as libipt does (docs/sdm/packets.md §13.1); `<unavailable>` before the first TSC. With --stats, --time is ptlab\'s own: the decode\'s throughput' },
  { tool: 'ptdump', option: '--tcal', does: 'show the time calibration', ptlab: 'ptlab dump --tcal FILE', note: 'the cycle-to-TSC ratio on TSC, CBR and MTC lines (`fcr`), where --time does not show the time' },
  { tool: 'ptdump', option: '--time-delta', does: 'show time as a delta to the previous value', ptlab: 'ptlab dump --time --time-delta FILE' },
  { tool: 'ptdump', option: '--no-tcal', does: 'skip time calibration', ptlab: 'ptlab dump --time --no-tcal FILE', note: 'CYCs are then not converted: the time moves at TSC and MTC only' },
  { tool: 'ptdump', option: '--no-wall-clock', does: 'print relative time when there is no TSC', note: 'ptlab shows `<unavailable>` until the first TSC: a time relative to an unknown start is not offered' },
  { tool: 'ptdump', option: '--cpu', does: 'decode with the errata of family/model[/stepping]', ptlab: 'ptlab dump --cpu 6/61 …', note: NO_ERRATA },
  { tool: 'ptdump', option: '--mtc-freq', does: 'IA32_RTIT_CTL.MTCFreq, for time estimation', ptlab: 'ptlab dump --mtc-freq N …', note: TIMING },
  { tool: 'ptdump', option: '--nom-freq', does: 'MSR_PLATFORM_INFO[15:8], for time estimation', ptlab: 'ptlab dump --nom-freq N …', note: TIMING },
  { tool: 'ptdump', option: '--cpuid-0x15.eax', does: 'CPUID.15H:EAX, for time estimation', ptlab: 'ptlab dump --cpuid-0x15.eax N …', note: TIMING },
  { tool: 'ptdump', option: '--cpuid-0x15.ebx', does: 'CPUID.15H:EBX, for time estimation', ptlab: 'ptlab dump --cpuid-0x15.ebx N …', note: TIMING },
  // ---- ptxed ----
  { tool: 'ptxed', option: '--help', does: 'the help text', ptlab: 'ptlab flow --help' },
  { tool: 'ptxed', option: '--version', does: 'the version', ptlab: 'ptlab --version' },
  { tool: 'ptxed', option: '--pt', does: 'the trace, FILE[:FROM[-TO]]', ptlab: 'ptlab flow --pt FILE:FROM-TO --raw IMAGE:BASE', note: 'as ptdump\'s <ptfile> above' },
  { tool: 'ptxed', option: '--raw', does: 'a raw code image, FILE[:FROM[-TO]]:BASE', ptlab: 'ptlab flow --raw IMAGE:BASE', note: 'the whole file: a part of it (FILE:FROM-TO:BASE) is refused' },
  { tool: 'ptxed', option: '--elf', does: 'an ELF file at its own or a given load address', ptlab: 'ptlab flow --pt TRACE --elf FILE[:BASE]', note: 'its executable PT_LOAD segments (ELF-64, little-endian); with BASE the lowest segment lands there, as libipt\'s load_elf; its function symbols name the addresses of the text lines (`<sym+0xoff>`)' },
  { tool: 'ptxed', option: '--quiet', does: 'print nothing but errors', ptlab: 'ptlab flow --quiet', note: 'also -q' },
  { tool: 'ptxed', option: '--stat', does: 'print statistics, even when quiet', ptlab: 'ptlab flow --stat', note: 'instructions, records, branches and errors' },
  { tool: 'ptxed', option: '--stat:insn', does: 'collect the number of instructions', note: 'ptlab flow --stat prints it with the other counts' },
  { tool: 'ptxed', option: '--stat:blocks', does: 'collect the number of blocks', note: 'ptlab has no block decoder: --stat counts branches' },
  { tool: 'ptxed', option: '--att', does: 'AT&T syntax', ptlab: 'ptlab flow --insn --att', note: INSN },
  { tool: 'ptxed', option: '--no-inst', does: 'instruction addresses only', ptlab: 'ptlab flow --insn --no-inst', note: INSN },
  { tool: 'ptxed', option: '--raw-insn', does: 'the bytes of each instruction', ptlab: 'ptlab flow --insn --raw-insn', note: INSN },
  { tool: 'ptxed', option: '--offset', does: 'the trace offset of each instruction', note: 'flow --json gives the trace offset of error records; branch records and --insn lines carry none yet' },
  { tool: 'ptxed', option: '--time', does: 'the timestamp of each instruction', ptlab: 'ptlab flow --time …', note: 'on each record (branch, event) rather than each instruction: "tsc" in the JSON, `tsc 0x…` at the end of a text line; test/time/flow-time.test.ts checks it against libipt\'s pt_insn_time' },
  { tool: 'ptxed', option: '--check', does: 'expensive self-checks', note: 'ptlab checks its decoders against the model\'s truth and libipt in its tests, not at run time' },
  { tool: 'ptxed', option: '--iscache-limit', does: 'the image section cache size', note: 'ptlab maps each image whole (up to its image bound)' },
  { tool: 'ptxed', option: '--event:time', does: 'the TSC of events', ptlab: 'ptlab flow --time …', note: 'enable, disable, async and overflow records carry "tsc" like branches' },
  { tool: 'ptxed', option: '--event:ip', does: 'the IP of events', note: 'flow records of events always carry their IP' },
  { tool: 'ptxed', option: '--event:tick', does: 'request tick events', note: 'flow has no tick events (they come from timing packets)' },
  { tool: 'ptxed', option: '--event:iflags', does: 'request RFLAGS.IF events', note: 'flow has no iflags events (dump shows MODE.Exec\'s `if`)' },
  { tool: 'ptxed', option: '--filter:addr<n>_cfg', does: 'IA32_RTIT_CTL.ADDRn_CFG, for address-filter decoding', note: 'flow trusts TIP.PGE/TIP.PGD for filtered ranges and needs no filter configuration' },
  { tool: 'ptxed', option: '--filter:addr<n>_a', does: 'IA32_RTIT_ADDRn_A', note: 'as --filter:addr<n>_cfg' },
  { tool: 'ptxed', option: '--filter:addr<n>_b', does: 'IA32_RTIT_ADDRn_B', note: 'as --filter:addr<n>_cfg' },
  { tool: 'ptxed', option: '--verbose', does: 'various information, even when quiet', note: 'flow prints what it found wrong on stderr always' },
  { tool: 'ptxed', option: '--cpu', does: 'decode with the errata of family/model[/stepping]', ptlab: 'ptlab flow --cpu 6/61 …', note: NO_ERRATA },
  { tool: 'ptxed', option: '--mtc-freq', does: 'IA32_RTIT_CTL.MTCFreq, for time estimation', ptlab: 'ptlab flow --mtc-freq N …', note: TIMING },
  { tool: 'ptxed', option: '--nom-freq', does: 'MSR_PLATFORM_INFO[15:8], for time estimation', ptlab: 'ptlab flow --nom-freq N …', note: TIMING },
  { tool: 'ptxed', option: '--cpuid-0x15.eax', does: 'CPUID.15H:EAX, for time estimation', ptlab: 'ptlab flow --cpuid-0x15.eax N …', note: TIMING },
  { tool: 'ptxed', option: '--cpuid-0x15.ebx', does: 'CPUID.15H:EBX, for time estimation', ptlab: 'ptlab flow --cpuid-0x15.ebx N …', note: TIMING },
  { tool: 'ptxed', option: '--insn-decoder', does: 'use the instruction flow decoder', note: 'flow has one decoder' },
  { tool: 'ptxed', option: '--block-decoder', does: 'use the block decoder (the default)', note: 'flow has one decoder' },
  { tool: 'ptxed', option: '--block:show-blocks', does: 'show blocks', note: 'ptlab has no block decoder' },
  { tool: 'ptxed', option: '--block:end-on-call', does: 'end blocks on calls', note: 'ptlab has no block decoder' },
  { tool: 'ptxed', option: '--block:end-on-jump', does: 'end blocks on jumps', note: 'ptlab has no block decoder' },
  { tool: 'ptxed', option: '--insn:keep-tcal-on-ovf', does: 'keep time calibration over an OVF', note: KEEP_TCAL },
  { tool: 'ptxed', option: '--block:keep-tcal-on-ovf', does: 'keep time calibration over an OVF', note: KEEP_TCAL },
  { tool: 'ptxed', option: '--sb', does: 'sideband records (with --sb:compact, --sb:verbose, --sb:filename, --sb:offset, --sb:time, --sb:switch, --sb:warn)', note: NO_SIDEBAND },
  { tool: 'ptxed', option: '--pevent', does: 'perf_event sideband streams and their parameters (--pevent:primary, --pevent:sysroot, …)', note: NO_SIDEBAND },
];

/** The option name an argument gives (`--cpu=6/61` → `--cpu`, `--filter:addr1_a` → `--filter:addr<n>_a`). */
function optionOf(arg: string): string {
  const name = arg.split('=')[0]!;
  if (/^--sb(:|$)/.test(name)) return '--sb';
  if (name.startsWith('--pevent')) return '--pevent';
  return name.replace(/^--filter:addr[0-3]_/, '--filter:addr<n>_');
}

/**
 * Throws `make(message)` when `argv` gives a libipt option of `tool` that ptlab does not take,
 * with its row's reason; options ptlab takes (and options libipt lacks) are left to the parser.
 */
export function refuseLibiptOnly(tool: LibiptTool, argv: readonly string[], make: (message: string) => Error): void {
  for (const arg of argv) {
    if (arg === '--') return;
    if (!arg.startsWith('--')) continue;
    const row = LIBIPT_OPTIONS.find((o) => o.tool === tool && o.ptlab === undefined && o.option === optionOf(arg));
    if (row !== undefined) throw make(`${tool}'s ${row.option} (${row.does}) is not taken: ${row.note}`);
  }
}

/** The rows of `tool` as the Markdown table docs/formats/libipt-options.md holds (a test keeps the two equal). */
export function libiptOptionsTable(tool: LibiptTool): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|');
  const rows = LIBIPT_OPTIONS.filter((o) => o.tool === tool).map((o) =>
    `| \`${cell(o.option)}\` | ${cell(o.does)} | ${o.ptlab === undefined ? 'none' : `\`${cell(o.ptlab)}\``} | ${cell(o.note ?? '')} |`);
  return ['| option | in libipt | ptlab | note |', '|---|---|---|---|', ...rows].join('\n');
}
