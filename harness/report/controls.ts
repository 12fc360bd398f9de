// The negative controls a run ran with (`ptlab run --knob`, `--driver-fault`; `ptlab list --knobs` lists them): a
// model crueller or kinder than the SDM, or a deliberately wrong driver. A FAIL is what such a run
// must give, so wherever verdicts are shown (the summary table, the report's header, matrix cells
// and sections) the controls are named beside them. result.json's figures are their one record.
import type { ResultJson } from '../rundir/result.js';

/** The controls of one run, each as `knob NAME` or `driver fault NAME`, from its figures. */
export function controlsOf(figures: ResultJson['figures']): string[] {
  const names = (v: unknown): string[] => (typeof v === 'string' && v !== '' ? v.split(',') : []);
  return [...names(figures['knobs']).map((k) => `knob ${k}`), ...names(figures['driverFaults']).map((f) => `driver fault ${f}`)];
}

/** Every control any of `runs` ran with, in first-seen order. */
export function suiteControls(runs: readonly Pick<ResultJson, 'figures'>[]): string[] {
  return [...new Set(runs.flatMap((r) => controlsOf(r.figures)))];
}

/** The line that says a suite ran with negative controls, or undefined when it ran with none. */
export function controlsLine(controls: readonly string[]): string | undefined {
  return controls.length === 0 ? undefined
    : `negative controls: ${controls.join(', ')}: every judged run should FAIL; a pass is a bug the suite misses`;
}
