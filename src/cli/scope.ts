import { scopeWhere, type Scope } from '../core/diagnose/health';
import type { RolloutStore } from '../core/store/store';
import { UsageError } from './args';
import { flagString } from './command';

/** The rollouts a command looks at: run, version, split, step range. */
export const SCOPE_FLAGS = {
  run: { type: 'string', description: 'only this run' },
  version: { type: 'string', description: 'only this version' },
  split: { type: 'string', description: 'train or val' },
  steps: { type: 'string', description: 'step range A:B (inclusive)' },
} as const;

export function scopeFromFlags(flags: Record<string, string | boolean>): Scope {
  const scope: Scope = {};
  const run = flagString(flags, 'run');
  const version = flagString(flags, 'version');
  const split = flagString(flags, 'split');
  const steps = flagString(flags, 'steps');
  if (run) scope.run = run;
  if (version) scope.version = version;
  if (split) {
    if (split !== 'train' && split !== 'val') throw new UsageError('--split must be train or val');
    scope.split = split;
  }
  if (steps) {
    const m = /^(\d+):(\d+)$/.exec(steps);
    if (!m) throw new UsageError(`--steps must be A:B, got "${steps}"`);
    scope.steps = [Number(m[1]), Number(m[2])];
  }
  return scope;
}

/**
 * A run, version, split or step range that selects no rollout (and no training-curve point)
 * is an error naming what the store holds, never an empty report that exits 0.
 */
export async function requireRolloutsInScope(store: RolloutStore, scope: Scope, opts: { curves?: boolean } = {}): Promise<void> {
  if (scope.run === undefined && scope.version === undefined && scope.split === undefined && !scope.steps) return;
  const { sql, params } = scopeWhere(scope);
  const hit = await store.all(`select 1 from rollouts ${sql} limit 1`, params);
  if (hit.length) return;
  // For the health report, training curves (no split) are evidence too: a run with only its log has a model state.
  if (opts.curves && scope.split === undefined && (await store.all(`select 1 from metrics ${sql} limit 1`, params)).length) return;
  const runs = await store.all<{ run_id: string; n: number }>('select run_id, count(*)::integer as n from rollouts group by 1 order by 1 limit 20');
  const versions = await store.all<{ version: string }>('select distinct version from rollouts where version is not null order by 1 limit 20');
  const asked = [scope.run !== undefined && `run "${scope.run}"`, scope.version !== undefined && `version "${scope.version}"`, scope.split, scope.steps && `steps ${scope.steps[0]}:${scope.steps[1]}`].filter(Boolean).join(', ');
  throw new Error(
    `no rollouts in ${asked}. ` +
      (runs.length
        ? `The store has run(s) ${runs.map((r) => `${r.run_id} (${r.n})`).join(', ')}${versions.length ? ` and version(s) ${versions.map((v) => v.version).join(', ')}` : ''}: pick one with --run/--version, or import that run with \`evotrainer import PATH --run NAME\`.`
        : 'The store is empty: import rollouts with `evotrainer import PATH --run NAME`.'),
  );
}
