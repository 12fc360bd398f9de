// Is a guest that stopped answering its helper still alive? Asked once a helper request timed
// out: QEMU's own monitor answers from QEMU's main loop whatever the guest does, and the guest
// agent is a second guest process beside the helper. Together they tell apart a QEMU that is
// stopped or hung (QMP silent), a guest that is not running (QMP says paused, guest-panicked,
// shutdown…), a guest that is hung (QMP running, the agent silent too), and a helper request that
// is only slow (the agent answers: nothing is concluded, the request's own timeout stands).
import type { QgaClient } from './qga.js';
import type { QmpClient } from './qmp.js';

/** How long QMP `query-status` may take: QEMU answers it from its main loop at once when it runs. */
export const QMP_LIVENESS_MS = 3_000;
/** How long `guest-ping` may take: a guest under TCG on a loaded host answers well within this. */
export const QGA_LIVENESS_MS = 5_000;

/** The verdict on a silent guest: not responding (and whether QEMU itself is), or alive. */
export type Liveness =
  | { readonly alive: true }
  | { readonly alive: false; readonly qemuHung: boolean; readonly reason: string };

/** Asks QMP, then the guest agent (when there is one), whether the guest behind a silent helper still runs. */
export async function judgeLiveness(qmp: QmpClient, qga: QgaClient | undefined): Promise<Liveness> {
  let status: string;
  try {
    status = (await qmp.execute<{ status: string }>('query-status', undefined, { timeoutMs: QMP_LIVENESS_MS })).status;
  } catch {
    return { alive: false, qemuHung: true, reason: `QEMU is not responding: its helper and QMP (query-status, ${QMP_LIVENESS_MS} ms) are silent — the process is stopped or hung` };
  }
  if (status !== 'running') return { alive: false, qemuHung: false, reason: `the guest is not responding: it is not running (QMP status ${status})` };
  if (qga === undefined) return { alive: true };
  try {
    await qga.ping({ timeoutMs: QGA_LIVENESS_MS });
    return { alive: true };
  } catch {
    return { alive: false, qemuHung: false, reason: `the guest is not responding: its helper and its agent (guest-ping, ${QGA_LIVENESS_MS} ms) are silent while QEMU runs it` };
  }
}
