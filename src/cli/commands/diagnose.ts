import { CATALOG } from '../../core/diagnose/catalog';
import { diagnose as diagnoseStore, problemLines, type Diagnosis } from '../../core/diagnose/diagnose';
import type { HealthReport, Scope } from '../../core/diagnose/health';
import { validateMetric } from '../../core/diagnose/validate';
import { UsageError } from '../args';
import { out, type Command } from '../command';
import { requireRolloutsInScope, SCOPE_FLAGS, scopeFromFlags } from '../scope';
import { harnessContext } from '../context';
import { STORE_FLAG, withStore } from '../store';

const FLAGS = {
  ...SCOPE_FLAGS,
  json: { type: 'boolean', description: 'print JSON' },
  harness: { type: 'string', description: 'harness repo with diagnostics/ (default: the one containing the working directory)' },
  trust: { type: 'boolean', description: "run the harness's script metrics (diagnostics/metrics/*.py: harness code) on this machine" },
  ...STORE_FLAG,
} as const;

const fmt = (v: number | null, unit: string) => (v === null ? 'not available' : unit === 'ratio' ? `${(v * 100).toFixed(1)}%` : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));

function healthText(h: HealthReport): string {
  const lines = [`Health of ${describeScope(h.scope)}: ${h.rollouts} rollouts in ${h.groups} groups${h.curvePoints ? `; ${h.curvePoints} training-curve values` : ''}`, ''];
  if (!h.rollouts && !h.curvePoints) return `No rollouts or training curves in ${describeScope(h.scope)}. Import some with \`evotrainer import PATH\` (rollout dumps, or the trainer's log, metrics file or event files).`;
  for (const dim of ['results', 'signal', 'behavior', 'efficiency', 'model_state', 'test_structure', 'sampling'] as const) {
    const ms = h.metrics.filter((x) => x.dimension === dim);
    if (!ms.length) continue;
    lines.push(dim.replace('_', ' '));
    for (const x of ms) {
      const mark = x.status === 'critical' ? 'CRITICAL' : x.status === 'warning' ? 'warning' : '';
      lines.push(`  ${x.name.padEnd(28)} ${fmt(x.value, x.unit).padEnd(14)} ${mark}${x.threshold ? ` (${x.threshold.op} ${x.threshold.value})` : ''}`.trimEnd());
    }
  }
  lines.push('', h.alerts.length ? `${h.alerts.length} alert(s): ${h.alerts.map((a) => a.name).join(', ')}` : 'No alerts.');
  return lines.join('\n');
}

function describeScope(s: Scope): string {
  const parts = [s.run && `run ${s.run}`, s.version && `version ${s.version}`, s.split, s.steps && `steps ${s.steps[0]}–${s.steps[1]}`].filter(Boolean);
  return parts.length ? parts.join(', ') : 'the whole store';
}

export const health: Command = {
  summary: 'the health report: every metric of the catalog over a run, version or step range, with alerts',
  flags: FLAGS,
  async run(flags) {
    const scope = scopeFromFlags(flags);
    const ctx = harnessContext(flags);
    const d = await ctx.withStore(async (s) => {
      await requireRolloutsInScope(s, scope, { curves: true });
      return diagnoseStore(s, { harness: ctx.root, scope, trust: ctx.trust, parts: 'health' });
    });
    const problems = problemLines(d);
    out(flags.json ? JSON.stringify({ ...d.health, problems }, null, 2) : healthText(d.health) + problemsText(problems));
    return 0;
  },
};

/** `evotrainer diagnose --json`: what the editor's Findings view and Health panel show too. */
export function diagnosisJson(d: Diagnosis) {
  return {
    scope: d.scope,
    rollouts: d.health.rollouts,
    findings: d.findings,
    problems: problemLines(d),
    failureModes: d.failureModes.map((m) => ({ failure_mode: m.mode, n: m.count, examples: m.examples, suggestedLayer: m.layer })),
    series: d.series.map((p) => p.label),
  };
}

export const diagnose: Command = {
  summary: 'findings: rules R1–R6 and the leak rule over metrics and their trends, and the failure modes of rollouts',
  flags: FLAGS,
  async run(flags) {
    const scope = scopeFromFlags(flags);
    const ctx = harnessContext(flags);
    const result = diagnosisJson(
      await ctx.withStore(async (s) => {
        await requireRolloutsInScope(s, scope, { curves: true });
        return diagnoseStore(s, { harness: ctx.root, scope, trust: ctx.trust });
      }),
    );
    if (flags.json) {
      out(JSON.stringify(result, null, 2));
      return 0;
    }
    const lines = [`Diagnosis of ${describeScope(scope)} (${result.rollouts} rollouts; trends over ${result.series.length} evaluation(s))`, ''];
    if (!result.findings.length) lines.push('No rule fired.');
    for (const f of result.findings) lines.push(`[${f.severity.toUpperCase()}] ${f.rule} ${f.title}`, `    ${f.suggestion}`);
    lines.push('', 'Failure modes:');
    for (const m of result.failureModes) lines.push(`  ${m.failure_mode.padEnd(22)} ${String(m.n).padStart(6)}  e.g. ${m.examples.join(', ')}${m.suggestedLayer ? `  → ${m.suggestedLayer}` : ''}`);
    out(lines.join('\n') + problemsText(result.problems));
    return 0;
  },
};

function problemsText(problems: string[]): string {
  return problems.length ? `\n\nHarness diagnostics that could not run (the rest did):\n${problems.map((p) => `  ${p}`).join('\n')}` : '';
}

export const metric: Command = {
  summary: 'metric validate NAME: how well a metric separates successful from failed rollouts (AUC, effect size, bootstrap 95% CI)',
  usage: 'evotrainer metric validate NAME|--all [options]',
  flags: { ...FLAGS, all: { type: 'boolean', description: 'every metric with a per-rollout value' } },
  async run(flags, [sub, name]) {
    if (sub !== 'validate') throw new UsageError('use `metric validate NAME` (or `metric validate --all`)');
    const names = flags.all ? CATALOG.filter((d) => d.feature).map((d) => d.name) : name ? [name] : [];
    if (!names.length) throw new UsageError('name a metric, or pass --all');
    const scope = scopeFromFlags(flags);
    const results = await withStore(flags, async (s) => {
      await requireRolloutsInScope(s, scope);
      const rs = [];
      for (const n of names) {
        try {
          rs.push(await validateMetric(s, n, scope));
        } catch (err) {
          if (!flags.all) throw err;
          rs.push({ metric: n, error: (err as Error).message });
        }
      }
      return rs;
    });
    if (flags.json) {
      out(JSON.stringify(results, null, 2));
      return 0;
    }
    const lines = [`${'metric'.padEnd(28)} ${'AUC'.padEnd(22)} ${'effect size (d)'.padEnd(24)} success vs failure mean`];
    for (const r of results) {
      if ('error' in r) {
        lines.push(`${r.metric.padEnd(28)} ${r.error}`);
        continue;
      }
      lines.push(`${r.metric.padEnd(28)} ${`${r.auc.toFixed(3)} [${r.aucCi[0].toFixed(2)}, ${r.aucCi[1].toFixed(2)}]`.padEnd(22)} ${`${r.effectSize.toFixed(2)} [${r.effectCi[0].toFixed(2)}, ${r.effectCi[1].toFixed(2)}]`.padEnd(24)} ${fmt(r.meanSuccess, r.unit)} vs ${fmt(r.meanFailure, r.unit)} (n=${r.successes}/${r.failures})`);
    }
    out(lines.join('\n'));
    return 0;
  },
};
