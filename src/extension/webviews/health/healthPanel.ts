import * as vscode from 'vscode';
import { SUGGESTED_LAYER, type FailureMode } from '../../../core/diagnose/failureModes';
import { computeHealth, computeSeries, scopeWhere } from '../../../core/diagnose/health';
import { evaluateRules } from '../../../core/diagnose/rules';
import { RolloutStore } from '../../../core/store/store';
import { findingsScope } from '../../views/data';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import type { WebviewController } from '../webviewController';
import { DidChangeHealthNotification, HealthMethods, type HealthScope, type HealthScopeOption, type HealthState } from '../../../viewer/health/protocol';

const keyOf = (s: HealthScope): string => (s.version !== undefined ? `version:${s.version}` : s.run !== undefined ? `run:${s.run}` : 'all');

/** Every scope to pick from: each run, each version, and the whole store pooled. */
async function scopesOf(store: RolloutStore): Promise<HealthScopeOption[]> {
  const runs = await store.all<{ v: string; n: number }>('select run_id as v, count(*)::int as n from rollouts group by 1 order by 1');
  const versions = await store.all<{ v: string; n: number }>('select version as v, count(*)::int as n from rollouts where version is not null group by 1 order by 1');
  const total = runs.reduce((a, r) => a + Number(r.n), 0);
  const option = (scope: HealthScope, label: string, n: number): HealthScopeOption => ({ key: keyOf(scope), label: `${label} (${n} rollouts)`, scope, rollouts: n });
  return [
    ...runs.map((r) => option({ run: r.v }, `run ${r.v}`, Number(r.n))),
    ...versions.map((r) => option({ version: r.v }, `version ${r.v}`, Number(r.n))),
    option({}, `every run and version pooled`, total),
  ];
}

/**
 * "EvoTrainer: Show Health Report": the health report, rule findings and failure modes of
 * the workspace harness's rollout store. The store is opened for each computation and
 * closed right after, so the CLI can import into it meanwhile; shown again after another
 * tab was in front, the report is computed again from the store as it is now.
 */
export const healthFeature: WebviewFeature<HealthState, string | null, HealthState> = {
  stateNotification: DidChangeHealthNotification,
  initialState: (session) => ({ status: 'loading', store: session.storePath(), scope: '', scopes: [], report: null, findings: [], failureModes: [], error: null }),
  create: (p) => new HealthPanel(p),
};

class HealthPanel implements WebviewProvider<string | null, HealthState> {
  private findingsVersion: string | null = null;
  /** The scope the user picked in the panel; until then, the one Findings shows. */
  private picked: string | null = null;
  private readonly controller: WebviewController<HealthState>;
  private readonly output: vscode.LogOutputChannel;

  constructor(private readonly p: WebviewPanelContext<HealthState>) {
    this.controller = p.controller;
    this.output = p.session.output;
    this.controller.serve(HealthMethods, {
      refresh: () => void this.recompute(),
      setScope: ({ scope }) => {
        this.picked = scope;
        void this.recompute();
      },
    });
  }

  /** `findingsVersion`: the version the Findings view shows, whose scope the report takes unless the user picked another. */
  show(findingsVersion: string | null): Promise<HealthState> {
    this.findingsVersion = findingsVersion;
    return this.recompute();
  }

  /** Shown again: the report as the store is now, the one shown until then kept meanwhile. */
  onDidShow(): void {
    void this.recompute(true);
  }

  private generation = 0;
  /** Computations run one at a time: each creates the store's derived views. */
  private queue: Promise<unknown> = Promise.resolve();

  private recompute(quiet = false): Promise<HealthState> {
    const generation = ++this.generation;
    const next = this.queue.then(() => this.computeState(generation, quiet));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async computeState(generation: number, quiet: boolean): Promise<HealthState> {
    const storePath = this.p.session.storePath();
    const base: HealthState = { status: 'loading', store: storePath, scope: this.picked ?? '', scopes: [], report: null, findings: [], failureModes: [], error: null };
    if (!quiet) this.controller.setState(base);
    let state: HealthState;
    if (!storePath) {
      state = { ...base, status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    } else {
      try {
        state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: computing the health report' }, () => this.compute(storePath, base));
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.output.error(`Health report failed: ${error}`);
        state = { ...base, status: 'failed', error };
      }
    }
    // A later computation (a newer scope, a re-show) has the last word.
    if (generation === this.generation) this.controller.setState(state);
    return state;
  }

  private async compute(storePath: string, base: HealthState): Promise<HealthState> {
    const store = await RolloutStore.open(storePath);
    try {
      const scopes = await scopesOf(store);
      const fallback = await findingsScope(store, this.findingsVersion);
      const chosen = scopes.find((o) => o.key === this.picked) ?? scopes.find((o) => fallback && o.key === keyOf(fallback)) ?? scopes[scopes.length - 1]!;
      const scope = chosen.scope;
      const report = await computeHealth(store, scope);
      const scoped = { ...base, scope: chosen.key, scopes };
      if (!report.rollouts && !report.curvePoints) return { ...scoped, status: 'empty', report, error: null };
      const findings = evaluateRules({ health: report, series: await computeSeries(store, scope) });
      await store.ensureDerivedViews();
      const { sql, params } = scopeWhere(scope);
      const modes = await store.all<{ failure_mode: FailureMode; n: number; examples: number[] }>(
        `select failure_mode, count(*) as n, list(id order by id)[1:5] as examples from rollout_failure_modes ${sql} group by 1 order by n desc`,
        params,
      );
      const failureModes = modes.map((m) => ({ mode: m.failure_mode, count: m.n, examples: m.examples.map(Number), layer: SUGGESTED_LAYER[m.failure_mode] }));
      this.output.info(`Health report of ${chosen.label}: ${report.alerts.length} alert(s), ${findings.length} finding(s)`);
      return { ...scoped, status: 'done', report, findings, failureModes };
    } finally {
      store.close();
    }
  }
}
