// A report section thread (section-thread.ts): builds the view of each run it is sent, from the
// run's files, exactly as the main thread would (run-view.ts runView), and posts it back.
import { parentPort } from 'node:worker_threads';
import { runView } from './run-view.js';
import type { SectionReply, SectionRequest } from './section-thread.js';

const port = parentPort;
if (port) {
  port.on('message', (m: SectionRequest) => {
    runView(m.job.src, m.job.id, m.job.key).then(
      (view): SectionReply => ({ seq: m.seq, ok: true, view }),
      (e: unknown): SectionReply => ({ seq: m.seq, ok: false, message: (e as Error).message ?? String(e) }),
    ).then((reply) => port.postMessage(reply));
  });
}
