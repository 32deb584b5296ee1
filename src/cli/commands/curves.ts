import { CURVES } from '../../core/diagnose/catalog';
import { curveSeries, listCurves, type CurveSeries } from '../../core/diagnose/curves';
import { sanitizeForTerminal } from '../../core/util/text';
import { UsageError } from '../args';
import { out, type Command } from '../command';
import { SCOPE_FLAGS, scopeFromFlags } from '../scope';
import { STORE_FLAG, withStore } from '../store';

const num = (v: number | null | undefined) => (v === null || v === undefined ? '' : Number.isNaN(v) ? 'nan' : !Number.isFinite(v) ? (v > 0 ? 'inf' : '-inf') : Math.abs(v) >= 1000 || Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));
const label = (s: { run: string; version: string | null }) => sanitizeForTerminal(`${s.run}${s.version ? `@${s.version}` : ''}`);

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/** Several series side by side, one row per step any of them logged. */
function aligned(series: CurveSeries[]): string {
  const steps = [...new Set(series.flatMap((s) => s.points.map((p) => p.step)))].sort((a, b) => a - b);
  const byStep = series.map((s) => new Map(s.points.map((p) => [p.step, p])));
  const one = series.length === 1;
  const head = ['step', ...series.map((s) => `${label(s)} ${sanitizeForTerminal(s.metric)}`), ...(one ? ['rollouts', 'pass rate', 'reward'] : [])];
  const rows = steps.map((step) => {
    const cells = byStep.map((m) => num(m.get(step)?.value));
    const p = one ? byStep[0]!.get(step) : undefined;
    return [String(step), ...cells, ...(one ? [p && p.rollouts ? String(p.rollouts) : '', num(p?.passRate), num(p?.rewardMean)] : [])];
  });
  return columns([head, ...rows]);
}

export const curves: Command = {
  summary: 'training curves in the store: list them, or one metric per run / version over steps, beside the rollouts dumped at each step',
  usage: 'evotrainer curves [METRIC] [options]',
  flags: { ...SCOPE_FLAGS, json: { type: 'boolean', description: 'print JSON' }, ...STORE_FLAG },
  async run(flags, positionals) {
    if (positionals.length > 1) throw new UsageError('give at most one metric');
    if (flags.split !== undefined) throw new UsageError('curves have no split; scope them with --run, --version, --steps');
    const scope = scopeFromFlags(flags);
    const metric = positionals[0];
    if (!metric) {
      const list = await withStore(flags, (s) => listCurves(s, scope));
      if (flags.json) out(JSON.stringify(list, null, 2));
      else if (!list.length) out('No training curves in the store. Import a trainer log, metrics file or event files with `evotrainer import PATH`.');
      else out(columns([['run', 'metric', 'points', 'steps', 'last'], ...list.map((c) => [label(c), sanitizeForTerminal(c.metric), String(c.points), `${c.firstStep}–${c.lastStep}`, num(c.last)])]));
      return 0;
    }
    const series = await withStore(flags, (s) => curveSeries(s, metric, scope));
    if (flags.json) out(JSON.stringify(series, null, 2));
    else if (!series.length) out(`No curve "${sanitizeForTerminal(metric)}" in ${scope.run ?? 'the store'}.${CURVES[metric] ? ` (looked for ${CURVES[metric].join(', ')})` : ''} \`evotrainer curves\` lists what there is.`);
    else out(aligned(series));
    return 0;
  },
};
