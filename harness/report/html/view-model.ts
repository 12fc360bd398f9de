// The HTML report's view model (docs/report.md): what the page shows, built from a suite directory
// by suite-view.ts and run-view.ts and drawn by page.ts. Times are microseconds since the run's
// first transcript line; sizes are bytes; addresses are written as the buffer they fall in
// (`buf3`: the run's fourth allocation, as `ptlab diff` names them).
import type { LossLedger } from '../../../driver/collect/ledger.js';
import type { CorruptRecord, LeakRecord, ResultJson, Verdict } from '../../rundir/result.js';

/** An expectation and the figures as result.json holds them. */
export type Expectation = ResultJson['expectations'][number];
export type Figures = ResultJson['figures'];

/** A file of a run directory (or of the suite) that could not be read as the contract says. */
export interface FileProblem {
  readonly file: string;
  readonly problem: 'missing' | 'malformed';
  readonly detail: string;
}

/** Where a run sits in the matrix. `host` only when result.json or results.jsonl names one. */
export interface RunKey {
  readonly scenario: string;
  readonly target: string;
  readonly profile: string;
  readonly seed: number;
  readonly host?: string;
}

/** A run as the matrix and the heading of its section show it. */
export interface RunSummary extends RunKey {
  /** The anchor of its section (`#run-…`). */
  readonly id: string;
  /** `missing`: a run directory without a readable result.json. */
  readonly verdict: Verdict | 'missing';
  readonly reason?: string;
  /** The run directory, relative to the suite; absent for a run results.jsonl lists without one. */
  readonly dir?: string;
  /** The run's time (results.jsonl `ms`). */
  readonly ms?: number;
  /** The negative controls it ran with (`knob NAME`, `driver fault NAME`: report/controls.ts); absent when none. */
  readonly controls?: readonly string[];
}

/** One ToPA entry as the driver last wrote it. */
export interface TopaEntryView {
  readonly index: number;
  /** The region's buffer (`buf3`), or its hex address when no allocation holds it. */
  readonly region: string;
  /** Region size in bytes (an END entry: 0). */
  readonly size: number;
  readonly int: boolean;
  readonly stop: boolean;
  readonly end: boolean;
  /** How many `topa` lines wrote this entry. */
  readonly writes: number;
}

/** One ToPA table: the entries the transcript's `topa` lines left in it, by index. */
export interface TopaTableView {
  /** The table's buffer (`buf0`) and its physical address. */
  readonly role: string;
  readonly addr: string;
  readonly entries: readonly TopaEntryView[];
  /** Entries not listed (tables beyond the row budget). */
  readonly more: number;
}

/** One output region's fill: [µs, bytes] points; bytes null where the region left its table. */
export interface FillSeries {
  readonly region: string;
  readonly size: number;
  readonly points: readonly (readonly [number, number | null])[];
}

/** Each region's fill over time, from the OUTPUT_MASK_PTRS the driver read, wrote, saved or restored. */
export interface FillView {
  /** `topa`: regions of ToPA tables; `single`: the single-range output buffer. */
  readonly mode: 'topa' | 'single';
  readonly series: readonly FillSeries[];
  /** Regions not drawn (beyond the series budget). */
  readonly more: number;
  /** Pointer samples read from the transcript, and whether points were thinned to fit the budget. */
  readonly samples: number;
  readonly thinned: boolean;
}

/** One ToPA PMI: raised (its `pmi` event), handled (acknowledged and unmasked), the branch taken. */
export interface PmiView {
  /** The transcript line of the `pmi` event (1-based). */
  readonly line: number;
  readonly cpu: number;
  readonly raised: number;
  /** When the handler unmasked the PMI again after acknowledging it; null when it never did. */
  readonly handled: number | null;
  /** The `note` of the handler (`grow`, `chain`, `circular-fresh`, …); null when none was written. */
  readonly branch: string | null;
  /** How far the output pointer moved since the previous pointer read of that table; null when unknown. */
  readonly bytes: number | null;
  /** IA32_RTIT_STATUS flags the handler read (`Stopped`, `Error`, `PendTopaPMI`), space-separated. */
  readonly status: string;
  /** IA32_PERF_GLOBAL_STATUS.Trace_ToPA_PMI (bit 55) was set: a ToPA PMI. */
  readonly topa: boolean;
}

/** The PMI timeline of a run. */
export interface PmiTimeline {
  readonly pmis: readonly PmiView[];
  /** PMIs raised in all (the list may be cut to the row budget). */
  readonly count: number;
}

/** Transcript lines around the first failure. */
export interface Excerpt {
  /** Why this place: `the first fault line`, … */
  readonly why: string;
  /** The line it is centred on (1-based). */
  readonly at: number;
  readonly lines: readonly { readonly n: number; readonly text: string }[];
}

/** What an opened section shows: embedded once as JSON and drawn when the section opens. */
export interface RunDetail {
  readonly problems: readonly FileProblem[];
  readonly expectations: readonly Expectation[];
  /** result.json's `corrupt`: where the memory oracle saw PT reach memory the driver does not own. */
  readonly corrupt?: readonly CorruptRecord[];
  /** result.json's `leaked`: buffers left allocated because tracing could not be confirmed off. */
  readonly leaked?: readonly LeakRecord[];
  readonly figures: Figures;
  readonly libipt?: { readonly ptdump: string; readonly ptxed: string };
  readonly transcriptLines: number;
  readonly topa: { readonly tables: readonly TopaTableView[]; readonly moreTables: number };
  readonly fill?: FillView;
  readonly pmi: PmiTimeline;
  readonly losses?: LossLedger;
  readonly excerpt?: Excerpt;
}

/** A run: its summary, and (unless it was skipped or has no directory) what its section shows. */
export interface RunView {
  readonly summary: RunSummary;
  readonly detail?: RunDetail;
}

/** A whole suite directory. */
export interface SuiteView {
  /** The directory as given. */
  readonly dir: string;
  readonly runs: readonly RunView[];
  /** Suite files that could not be read (results.jsonl, junit.xml). */
  readonly problems: readonly FileProblem[];
}
