// The CPU and timing options libipt's ptdump and ptxed take (--cpu, --mtc-freq, --nom-freq,
// --cpuid-0x15.eax, --cpuid-0x15.ebx), which a run's result.json prints in its libipt command
// lines (harness/rundir/interop.ts). dump and flow take them so that a printed line runs as it is.
// The timing values feed time estimation alone (--time, --tcal: driver/decode/time/); a run
// directory's image.json gives those the options leave out. --cpu selects libipt's errata
// workarounds; ptlab decodes by the SDM, so the errata of that CPU that change the packet stream
// (driver/hw/errata.ts) are named on stderr, never applied in silence.
import { errataOf, erratum } from '../../driver/hw/errata.js';
import { familyModelName, type CpuSignature } from '../../driver/hw/cpuid.js';
import { UsageError, type ParsedValues } from './args.js';
import type { TraceTiming } from '../rundir/interop.js';

export const DECODE_CONFIG_OPTIONS = {
  cpu: { type: 'string' },
  'mtc-freq': { type: 'string' },
  'nom-freq': { type: 'string' },
  'cpuid-0x15.eax': { type: 'string' },
  'cpuid-0x15.ebx': { type: 'string' },
} as const;

/** What the options gave, validated. */
export interface DecodeConfig {
  /** Absent: libipt's `none` (decode by the specification). */
  readonly cpu?: CpuSignature;
  readonly mtcFreq?: number;
  readonly nomFreq?: number;
  readonly cpuid15?: { readonly eax?: number; readonly ebx?: number };
}

const NUMBER = /^(0x[0-9a-fA-F]+|[0-9]+)$/;

function numberIn(name: string, text: string, max: number): number {
  const n = NUMBER.test(text) ? Number(text) : NaN;
  if (!(n <= max)) throw new UsageError(`--${name} takes a number from 0 to ${max} (0x… hex or decimal), got '${text}'`);
  return n;
}

/** libipt's `--cpu none|f/m[/s]` (pt_cpu_parse): family up to 0xffff, model and stepping up to 0xff. */
function cpuOf(text: string): CpuSignature | undefined {
  if (text === 'none') return undefined;
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !NUMBER.test(p))) {
    throw new UsageError(`--cpu takes none or FAMILY/MODEL[/STEPPING] (e.g. 6/61), got '${text}'`);
  }
  return { family: numberIn('cpu family', parts[0]!, 0xffff), model: numberIn('cpu model', parts[1]!, 0xff), stepping: parts[2] === undefined ? 0 : numberIn('cpu stepping', parts[2], 0xff) };
}

/** The DecodeConfig of parsed `values`. */
export function decodeConfigOf(values: ParsedValues<typeof DECODE_CONFIG_OPTIONS>): DecodeConfig {
  const cpu = values.cpu === undefined ? undefined : cpuOf(values.cpu);
  const eax = values['cpuid-0x15.eax'], ebx = values['cpuid-0x15.ebx'];
  return {
    ...(cpu === undefined ? {} : { cpu }),
    // IA32_RTIT_CTL.MTCFreq is 4 bits (docs/sdm/msrs.md), MSR_PLATFORM_INFO[15:8] 8, a CPUID register 32.
    ...(values['mtc-freq'] === undefined ? {} : { mtcFreq: numberIn('mtc-freq', values['mtc-freq'], 15) }),
    ...(values['nom-freq'] === undefined ? {} : { nomFreq: numberIn('nom-freq', values['nom-freq'], 0xff) }),
    ...(eax === undefined && ebx === undefined ? {} : {
      cpuid15: { ...(eax === undefined ? {} : { eax: numberIn('cpuid-0x15.eax', eax, 0xffff_ffff) }), ...(ebx === undefined ? {} : { ebx: numberIn('cpuid-0x15.ebx', ebx, 0xffff_ffff) }) },
    }),
  };
}

/** `config` with what a run directory's image.json says of the trace's timing, where the options said nothing. */
export function withRunTiming(config: DecodeConfig, timing: TraceTiming | undefined): DecodeConfig {
  if (timing === undefined) return config;
  return {
    ...config,
    ...(config.mtcFreq === undefined && timing.mtcFreq !== null ? { mtcFreq: timing.mtcFreq } : {}),
    ...(config.nomFreq === undefined && timing.nomFreq !== null ? { nomFreq: timing.nomFreq } : {}),
    ...(timing.cpuid15 === null ? {} : { cpuid15: { eax: config.cpuid15?.eax ?? timing.cpuid15.eax, ebx: config.cpuid15?.ebx ?? timing.cpuid15.ebx } }),
  };
}

/** The stderr line naming the packet-stream errata of `config.cpu` that ptlab does not work around; undefined when there are none. */
export function errataNote(command: string, config: DecodeConfig): string | undefined {
  if (config.cpu === undefined) return undefined;
  const ids = [...errataOf(config.cpu)].filter((id) => erratum(id).effect.kind === 'decoding');
  if (ids.length === 0) return undefined;
  const { family, model, stepping } = config.cpu;
  return `ptlab ${command}: --cpu ${family}/${model}/${stepping} (${familyModelName(config.cpu)}) has packet-stream errata ${ids.join(', ')}: ` +
    'ptlab decodes by the SDM and works around none of them (libipt does; docs/sdm/errata.md)\n';
}
