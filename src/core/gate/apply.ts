import { oneLine } from '../harness/git';
import { readLedger, requireEntry, type LedgerEntry } from '../harness/ledger';
import { HarnessError, type Harness } from '../harness/repo';
import { markPromoted, rejectVersion } from '../harness/versions';
import type { GateDecision } from '../model';
import type { RolloutStore } from '../store/store';
import { promotedLine } from './checks/promotedLine';
import { gateDecision, GateError, judgeRecorded, recordedDecision, recordGate, rejectionReason, runGate } from './gate';
import type { GateOptions, GateReport } from './types';

/** What is done with a decision: promote (a person's override when the gate did not say PROMOTE), reject with a reason, or nothing yet. */
export type GateAction = { act: 'promote'; override?: string } | { act: 'reject'; reason: string; by?: GateDecision['decidedBy'] } | { act: 'none' };

export interface DecideOptions extends GateOptions {
  /**
   * `eval_rollouts`: judge the version now on the store's eval rollouts (the evidence gate);
   * `recorded`: the decision the evidence gate recorded on the version, else the checks on
   * its recorded metric values.
   */
  judge: 'eval_rollouts' | 'recorded';
  /** Record a report judged now on the version (default true). */
  record?: boolean;
  /**
   * What to do with the decision (default `none`: a person decides later). `decision`:
   * promote on PROMOTE, reject on REJECT with the failing checks, leave NEEDS-HUMAN.
   * `promote`: promote; a decision other than PROMOTE needs `override` (else GateError).
   * A function chooses from the report (a person, the loop).
   */
  act?: 'none' | 'decision' | 'promote' | ((r: GateReport) => Promise<GateAction>);
  /** A person's reason to promote despite the gate (with act `promote`). */
  override?: string;
}

export interface DecideResult {
  /** The report judged now (null: the decision recorded earlier was used). */
  report: GateReport | null;
  /** The decision in force: as acted on (with the promoted-line check, and the override when a person overrode). */
  decision: GateDecision;
  applied: 'promoted' | 'rejected' | null;
  entry: LedgerEntry;
  repairs: string[];
}

/**
 * Gate, record, act — the one path by which a version is promoted or rejected on the gate's
 * decision, for the CLI (`gate`, `promote`), the editor and the evolve loop. Promotion
 * always checks that evo/promoted moves by fast-forward, and writes the decision (with its
 * reasons, and a person's override) on the version as the evidence of the transition.
 */
export async function decideAndApply(h: Harness, store: RolloutStore | null, o: DecideOptions): Promise<DecideResult> {
  let report: GateReport | null = null;
  if (o.judge === 'eval_rollouts') {
    if (!store) throw new HarnessError(`the evidence gate reads ${o.version}'s eval rollouts: open the store first`);
    report = await runGate(h, store, o);
    if (o.record !== false) await recordGate(h, report);
  }
  const action = await chooseAction(report, o);
  if (action.act === 'reject') {
    const entry = await rejectVersion(h, o.version, action.reason, action.by ?? 'gate');
    return { report, decision: entry.decision!, applied: 'rejected', entry, repairs: [] };
  }
  if (action.act === 'none') {
    const ledger = await readLedger(h);
    const entry = requireEntry(ledger, o.version);
    const decision = report ? gateDecision(report) : (recordedDecision(entry) ?? gateDecision((report = await judgeRecorded(h, ledger, entry))));
    return { report, decision, applied: null, entry, repairs: [] };
  }
  const judged = report;
  const r = await markPromoted(h, o.version, async (entry, ledger) => {
    let gate = judged ? gateDecision(judged) : recordedDecision(entry);
    if (!gate) gate = gateDecision((report = await judgeRecorded(h, ledger, entry)));
    const line = await promotedLine({ h, ledger, entry });
    gate = { ...gate, reasons: [...gate.reasons, { check: line.check, passed: line.passed === true, detail: line.detail }] };
    if (!line.passed) throw new GateError(gate);
    if (gate.decision === 'promote') return gate;
    if (!action.override) throw new GateError(gate);
    return { ...gate, decision: 'promote', decidedBy: 'human', reasons: [...gate.reasons, { check: 'human override', passed: true, detail: `${h.actor}: ${oneLine(action.override)}` }] };
  });
  return { report, decision: r.decision, applied: 'promoted', entry: r.entry, repairs: r.repairs };
}

async function chooseAction(report: GateReport | null, o: DecideOptions): Promise<GateAction> {
  const act = o.act ?? 'none';
  if (act === 'promote') return { act: 'promote', ...(o.override ? { override: o.override } : {}) };
  if (act === 'none') return { act: 'none' };
  if (!report) throw new HarnessError(`acting on ${o.version}'s decision as judged needs the evidence gate (judge: eval_rollouts)`);
  if (act === 'decision') return report.decision === 'promote' ? { act: 'promote' } : report.decision === 'reject' ? { act: 'reject', reason: rejectionReason(report), by: 'gate' } : { act: 'none' };
  return act(report);
}

/** A person's (or the loop's) promote: on the recorded decision, else the recorded metrics; `override` says why despite the gate. */
export async function promoteVersion(h: Harness, id: string, o: { override?: string } = {}): Promise<DecideResult> {
  return decideAndApply(h, null, { version: id, judge: 'recorded', act: 'promote', ...(o.override ? { override: o.override } : {}) });
}
