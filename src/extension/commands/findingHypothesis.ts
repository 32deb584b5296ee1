// A hypothesis template seeded from a finding (New Version from Finding…). Pure: unit-tested.
import type { Finding, Layer } from '../../core/model';
import { LAYERS } from '../../core/harness/versions';

const CRITERION_OP: Record<string, string> = { dead_group_ratio: '<', git_history_share: '<', turns: '<', echo_trap_share: '<' };

/** A hypothesis template from a finding: the finding becomes the "because" (its context). */
export function hypothesisFromFinding(f: Finding): { hypothesis: string; targetMetric: string; success: string; because: string; layer: Layer } {
  const ev = f.evidence[0];
  const metric = ev?.metric ?? 'pass_rate';
  const op = CRITERION_OP[metric] ?? (metric.includes('ratio') || metric.includes('share') ? '<' : '>');
  const value = ev && typeof ev.value === 'number' ? Number(ev.value.toPrecision(2)) : 0;
  const layerWord = (f.suggestion ?? '').match(/Suggested layer: (\w+)/)?.[1] ?? 'reward';
  const layer = (LAYERS as readonly string[]).includes(layerWord) ? (layerWord as Layer) : 'reward';
  return {
    hypothesis: `If we change … , ${metric} improves because it addresses ${f.rule} (${f.title.toLowerCase()})`,
    targetMetric: metric,
    success: `${metric} ${op} ${value}`,
    because: `finding ${f.rule}: ${(f.suggestion ?? f.title).replace(/\s+/g, ' ').trim()}`,
    layer,
  };
}
