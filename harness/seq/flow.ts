// `collect: expect: {flow: truth}` (docs/formats/seq.md "collect"): the collected stream decoded by
// ptlab's flow reconstruction (driver/decode/flow, as `ptlab flow --json` and the scenarios'
// flow check decode it: harness/runner/flow-check.ts) must equal, line for line, the path the
// reference model recorded (truth.jsonl, docs/formats/flow-json.md) since the previous collect.
import type { Loss } from '../../driver/collect/ledger.js';
import { compareFlowLines, flowOfStream, truthLinesOf } from '../runner/flow-check.js';
import type { GeneratedWorkload } from '../sim/workload/index.js';
import type { Judged } from './judge.js';

/** The flow of `bytes` (with the gaps of `lost`) against `truth`; the code image is that of the one workload run in between. */
export function judgeFlow(bytes: Uint8Array, workloads: readonly GeneratedWorkload[], lost: readonly Loss[], truth: readonly string[]): Judged {
  const images = distinct(workloads);
  if (images.length > 1) {
    return { what: 'flow = truth', ok: false, detail: `${images.length} different workloads ran since the previous collect; the flow is decoded against one code image (collect between them)` };
  }
  const flow = flowOfStream(bytes, images.map((w) => ({ bytes: w.image, base: w.base })), lost);
  const c = compareFlowLines(flow, truthLinesOf(truth));
  return { what: 'flow = truth', ok: c.ok, detail: `${c.detail}${lost.length ? `; ${lost.length} loss(es) in the ledger` : ''}` };
}

/** The workloads with different code (a run with the same seed and size builds the same image). */
function distinct(ws: readonly GeneratedWorkload[]): GeneratedWorkload[] {
  const out: GeneratedWorkload[] = [];
  for (const w of ws) if (!out.some((o) => o.base === w.base && Buffer.from(o.image).equals(w.image))) out.push(w);
  return out;
}
