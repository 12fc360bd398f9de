// Worker threads that build run sections for the report (suite-view.ts): a section means reading a
// run's transcript and parsing every line, and a suite has hundreds, so `ptlab report` and `ptlab
// merge` spread them over the machine's cores. A thread that cannot start or dies hands its runs
// back: the caller builds them itself, so a page is never lost to a thread.
import { Worker } from 'node:worker_threads';
import { firstBuilt } from '../../../driver/base/built-module.js';
import type { RunSource } from './run-view.js';
import type { RunKey, RunView } from './view-model.js';

/** One run to build: where it is, its anchor, and its key when result.json cannot say. */
export interface SectionJob {
  readonly src: RunSource;
  readonly id: string;
  readonly key: RunKey;
}

/** Main → thread. */
export interface SectionRequest {
  readonly seq: number;
  readonly job: SectionJob;
}

/** Thread → main: the view, or why it could not be built. */
export type SectionReply =
  | { readonly seq: number; readonly ok: true; readonly view: RunView }
  | { readonly seq: number; readonly ok: false; readonly message: string };

/** The built thread module: beside this one in dist/, or in dist/ when this runs from the TypeScript sources (vitest). */
function threadFile(): URL | undefined {
  return firstBuilt(import.meta.url, './section-worker.js', '../../../dist/harness/report/html/section-worker.js');
}

/** A worker thread building sections; `view` rejects when the thread fails or has died. */
export class SectionThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: RunView) => void; reject: (e: Error) => void }>();
  private seq = 0;
  private dead: Error | undefined;

  private constructor(file: URL) {
    this.worker = new Worker(file);
    this.worker.on('message', (m: SectionReply) => {
      const p = this.pending.get(m.seq);
      if (!p) return;
      this.pending.delete(m.seq);
      if (m.ok) p.resolve(m.view);
      else p.reject(new Error(m.message));
    });
    const fail = (e: Error): void => {
      this.dead ??= e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`a report section thread exited (code ${code})`)));
  }

  /** Up to `n` threads (none when the built module is missing). */
  static open(n: number): SectionThread[] {
    const file = n > 0 ? threadFile() : undefined;
    return file ? Array.from({ length: n }, () => new SectionThread(file)) : [];
  }

  view(job: SectionJob): Promise<RunView> {
    if (this.dead) return Promise.reject(this.dead);
    const seq = this.seq++;
    return new Promise<RunView>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, job } satisfies SectionRequest);
    });
  }

  close(): Promise<void> {
    return this.worker.terminate().then(() => undefined);
  }
}
