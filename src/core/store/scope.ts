/**
 * The rollouts a report or a query looks at: a run, a version, a split, a step range.
 */
import type { DuckDBValue } from '@duckdb/node-api';

export interface Scope {
  run?: string;
  version?: string;
  split?: 'train' | 'val';
  /** Inclusive step range. */
  steps?: [number, number];
}

export function scopeWhere(scope: Scope): { sql: string; params: DuckDBValue[] } {
  const where: string[] = [];
  const params: DuckDBValue[] = [];
  if (scope.run !== undefined) {
    where.push('run_id = ?');
    params.push(scope.run);
  }
  if (scope.version !== undefined) {
    where.push('version = ?');
    params.push(scope.version);
  }
  if (scope.split !== undefined) {
    where.push('split = ?');
    params.push(scope.split);
  }
  if (scope.steps) {
    where.push('step between ? and ?');
    params.push(scope.steps[0], scope.steps[1]);
  }
  return { sql: where.length ? `where ${where.join(' and ')}` : '', params };
}
