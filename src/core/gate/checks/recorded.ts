import type { Ledger, LedgerEntry } from '../../harness/ledger';
import { manifestAt, type Harness } from '../../harness/repo';
import { compare, parseCriterion } from '../criterion';
import type { GateCheck } from '../types';
import type { NamedCheck } from './check';

/**
 * The checks on the metric values recorded on the version (`evotrainer version advance …
 * --metrics`), for a version the evidence gate has not judged: evaluated, the primary
 * metric not below the promoted version's, the success criterion met, and no metric newly
 * past its manifest warning threshold that the parent was not past. Each decides: no
 * interval, so nothing goes to a person.
 */
export interface RecordedContext {
  h: Harness;
  ledger: Ledger;
  entry: LedgerEntry;
}

export const evaluated: NamedCheck<RecordedContext> = {
  name: 'evaluated',
  async run({ entry }) {
    return [{ check: 'evaluated', category: 'evidence', passed: entry.status === 'evaluated', detail: `status ${entry.status}` }];
  },
};

export const recordedPrimary: NamedCheck<RecordedContext> = {
  name: 'primary metric',
  async run({ entry, ledger }) {
    const primary = entry.primaryMetric;
    const value = primary ? entry.metrics[primary] : undefined;
    const best = ledger.promoted ? ledger.entries.get(ledger.promoted.version) : undefined;
    const bestValue = primary && best ? best.metrics[primary] : undefined;
    const check = (passed: boolean, detail: string): GateCheck[] => [{ check: 'primary metric', category: 'primary', passed, detail }];
    if (value === undefined) return check(false, `no ${primary ?? 'primary metric'} value recorded`);
    if (bestValue === undefined) return check(true, `${primary} ${value} (the promoted ${best?.id ?? 'line'} has no value to compare)`);
    return check(value >= bestValue, `${primary} ${value} vs promoted ${best!.id} ${bestValue} (${value >= bestValue ? 'no regression' : 'regressed'})`);
  },
};

export const recordedCriterion: NamedCheck<RecordedContext> = {
  name: 'success criterion',
  async run({ entry }) {
    if (!entry.hypothesis) return [];
    const crit = parseCriterion(entry.hypothesis.successCriterion);
    if (!crit) return [{ check: 'success criterion', category: 'target', passed: false, detail: `"${entry.hypothesis.successCriterion}" is not machine-checkable (write it as METRIC OP NUMBER); a person must judge it (--override "REASON")` }];
    const v = entry.metrics[crit.metric];
    return [{ check: 'success criterion', category: 'target', passed: v !== undefined && compare(v, crit.op, crit.value), detail: v === undefined ? `${crit.metric} was not recorded (add it with --metrics)` : `${crit.metric} = ${v}, needs ${crit.op} ${crit.value}` }];
  },
};

export const recordedSideEffects: NamedCheck<RecordedContext> = {
  name: 'side effects',
  async run({ h, entry, ledger }) {
    const thresholds = (await manifestAt(h, entry.commit)).thresholds ?? {};
    const parent = entry.parent ? ledger.entries.get(entry.parent) : undefined;
    const out: GateCheck[] = [];
    for (const [metric, t] of Object.entries(thresholds)) {
      const v = entry.metrics[metric];
      if (v === undefined || t.warning === undefined) continue;
      const bad = (x: number) => compare(x, t.op ?? '>', t.warning!);
      const pv = parent?.metrics[metric];
      if (bad(v) && !(pv !== undefined && bad(pv))) out.push({ check: `side effect: ${metric}`, category: 'side_effect', passed: false, detail: `${metric} = ${v} crosses its warning threshold ${t.op ?? '>'} ${t.warning}${pv !== undefined ? ` (parent ${pv})` : ''}` });
    }
    return out;
  },
};
