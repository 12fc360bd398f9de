// The scenario library, in the order `ptlab list` shows it.
import { PtError } from '../../driver/base/errors.js';
import type { Scenario } from './kit/scenario.js';
import { disTnt } from './dis-tnt.js';
import { ptwrite } from './ptwrite.js';
import { branchDisable } from './branch-disable.js';
import { cplUserOnly } from './cpl-user-only.js';
import { cr3Filter } from './cr3-filter.js';
import { ipFilter } from './ip-filter.js';
import { mtcTscTiming } from './mtc-tsc-timing.js';
import { ovfDrain } from './ovf-drain.js';
import { psbFrequency } from './psb-frequency.js';
import { retCompression } from './ret-compression.js';
import { tracestop } from './tracestop.js';
import { tracestopInSkid } from './tracestop-in-skid.js';
import { errReservedBit } from './err-reserved-bit.js';
import { errTopaEndInEntry0 } from './err-topa-end-in-entry0.js';
import { errTopaMisaligned } from './err-topa-misaligned.js';
import { errTopaMidrun } from './err-topa-midrun.js';
import { errWriteWhileEnabled } from './err-write-while-enabled.js';
import { kvmGuestLimits } from './kvm-guest-limits.js';
import { singleRangeErrors } from './single-range-errors.js';
import { contextSwitchManual } from './context-switch-manual.js';
import { pmiPreservation } from './pmi-preservation.js';
import { psbPreservation } from './psb-preservation.js';
import { pmiSkid } from './pmi-skid.js';
import { pmiTopHalf } from './pmi-top-half.js';
import { pmiNotTopa } from './pmi-not-topa.js';
import { pmiNotTopaContexts } from './pmi-not-topa-contexts.js';
import { errorOtherContext } from './error-other-context.js';
import { singleEntryTopa } from './single-entry-topa.js';
import { singleRangeWrap } from './single-range-wrap.js';
import { xsavesPendingPmi } from './xsaves-pending-pmi.js';
import { xsavesRoundtrip } from './xsaves-roundtrip.js';
import { topaChain } from './topa-chain.js';
import { topaCircularFresh } from './topa-circular-fresh.js';
import { topaGrow } from './topa-grow.js';
import { topaProtectUnread } from './topa-protect-unread.js';
import { topaProtectUnreadLate } from './topa-protect-unread-late.js';
import { topaStop } from './topa-stop.js';
import { topaChainStopEnd } from './topa-chain-stop-end.js';
import { pmiAtFinalStop } from './pmi-at-final-stop.js';
import { failSafeBusy } from './fail-safe-busy.js';
import { teardownEarlyEnd } from './teardown-early-end.js';
import { foreignOwner } from './foreign-owner.js';
import { traceConfined } from './trace-confined.js';
import { handlerLatency } from './handler-latency.js';
import { pmiBackToBack } from './pmi-back-to-back.js';
import { topaBudget } from './topa-budget.js';
import { topaCachedEntries } from './topa-cached-entries.js';
import { manualPmiOtherContext, xsavesPmiOtherContext } from './pmi-other-context.js';
import { protectUnreadOtherContext } from './protect-unread-other-context.js';
import { singleEntryOtherContext } from './single-entry-other-context.js';
import { didYouMean } from '../text/nearest.js';

/** Every scenario. */
export const SCENARIOS: readonly Scenario[] = [
  topaGrow, topaChain, topaCircularFresh, topaProtectUnread, topaProtectUnreadLate, topaStop, topaChainStopEnd, topaBudget, topaCachedEntries, singleRangeWrap, singleEntryTopa,
  pmiSkid, pmiBackToBack, pmiTopHalf, pmiNotTopa, pmiNotTopaContexts, pmiPreservation, psbPreservation, pmiAtFinalStop, xsavesRoundtrip, xsavesPendingPmi, xsavesPmiOtherContext, manualPmiOtherContext, protectUnreadOtherContext, singleEntryOtherContext, errorOtherContext, contextSwitchManual, failSafeBusy, foreignOwner, teardownEarlyEnd, traceConfined, handlerLatency,
  errReservedBit, errWriteWhileEnabled, errTopaMisaligned, errTopaMidrun, errTopaEndInEntry0, singleRangeErrors, kvmGuestLimits,
  cr3Filter, ipFilter, tracestop, tracestopInSkid, retCompression, psbFrequency, branchDisable, cplUserOnly, ovfDrain, mtcTscTiming,
  ptwrite, disTnt,
];

/** The scenario called `name`; PtError('bad_config') naming the known ones otherwise. */
export function findScenario(name: string): Scenario {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new PtError('bad_config', `unknown scenario '${name}'${didYouMean(name, SCENARIOS.map((x) => x.name))} (see ptlab list)`);
  return s;
}

export type { Scenario, ScenarioEnv, TargetKind } from './kit/scenario.js';
