/**
 * What the store derives from its rollouts, and the scratch space its readers use: the
 * answer-in-context table, the `rollout_features` and `rollout_failure_modes` views, views
 * narrowed to a scope, temporary tables. All of it runs on the store's own connection.
 */
import type { DuckDBValue } from '@duckdb/node-api';
import { ANSWER_CONTEXT_DDL, ANSWER_CONTEXT_TABLE, answerInContextOf } from '../diagnose/answerContext';
import { FEATURES_VIEW } from '../diagnose/features';
import { FAILURE_MODE_VIEW } from '../diagnose/failureModes';
import type { StoreDb } from './instances';
import type { Scope } from './scope';

/** A temporary table made from a query, for the length of a computation. */
export interface TempTable {
  name: string;
  select: string;
  params?: DuckDBValue[];
}

/** A read-only store cannot hold a new view: a temporary one (this connection's) serves. */
const asTemp = (db: StoreDb, ddl: string) => (db.readOnly ? ddl.replace('create or replace view', 'create or replace temp view') : ddl);

/**
 * Creates (or refreshes) the derived views every report reads: the answer-in-context
 * findings of rollouts not yet checked, then `rollout_features` and `rollout_failure_modes`.
 */
export async function ensureDerivedViews(db: StoreDb): Promise<void> {
  await ensureAnswerContext(db);
  await db.conn.run(asTemp(db, FEATURES_VIEW));
  await db.conn.run(asTemp(db, FAILURE_MODE_VIEW));
}

/**
 * Computes the answer-in-context finding of every multi-turn rollout not yet checked and
 * keeps it beside the rollouts (a temporary table on a read-only store), so the features
 * view can join it. Rows are keyed by id and source reference: an id that a swept import
 * freed and a later import reused is checked again. The rollouts to check are found once,
 * then read in batches of ids: memory stays bounded.
 */
async function ensureAnswerContext(db: StoreDb): Promise<void> {
  await db.conn.run(ANSWER_CONTEXT_DDL(db.readOnly));
  // The rollouts to check, found once: a query per batch joined every step again each time
  // (100,000 trajectories with 1.7M steps: 200 such joins).
  const todo = (
    await db.all<{ id: number }>(
      `select r.id from rollouts r
       where r.id in (select rollout_id from steps where role <> 'assistant')
         and not exists (select 1 from ${ANSWER_CONTEXT_TABLE} a where a.rollout_id = r.id and a.raw_ref = r.raw_ref)
       order by r.id`,
    )
  ).map((r) => Number(r.id));
  const batch = 500;
  // Appended (a multi-row insert with thousands of parameters took longer to bind than the check).
  const a = await db.conn.createAppender(ANSWER_CONTEXT_TABLE, db.readOnly ? 'main' : null, db.readOnly ? 'temp' : null);
  const int = (v: number | null | undefined) => (v === null || v === undefined ? a.appendNull() : a.appendInteger(v));
  const text = (v: string | null | undefined) => (v === null || v === undefined ? a.appendNull() : a.appendVarchar(v));
  try {
    for (let k = 0; k < todo.length; k += batch) {
      const ids = todo.slice(k, k + batch);
      // The id range lets DuckDB skip the row groups outside it.
      const rows = await db.all<{ id: number; raw_ref: string; response: string | null; response_format: string | null; extracted_answer: string | null; ground_truth: string | null }>(
        `select r.id, r.raw_ref, r.response, r.response_format, r.extracted_answer, r.ground_truth from rollouts r
         where r.id between ${ids[0]} and ${ids[ids.length - 1]} and r.id in (${ids.join(', ')})`,
      );
      for (const r of rows) {
        const hit = answerInContextOf(r);
        a.appendBigInt(BigInt(r.id));
        a.appendVarchar(r.raw_ref);
        a.appendBoolean(hit !== null);
        int(hit?.turn);
        text(hit?.channel);
        int(hit?.seen);
        int(hit?.distinctive);
        a.endRow();
      }
      a.flushSync();
    }
  } finally {
    a.closeSync();
  }
}

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Runs `fn` with the `rollouts` and `steps` views narrowed to a scope (temporary views
 * that shadow the store's own for this connection; `rollout_features` follows them).
 */
export async function withScopedViews<T>(db: StoreDb, scope: Scope, fn: () => Promise<T>): Promise<T> {
  const where: string[] = [];
  if (scope.run !== undefined) where.push(`run_id = ${lit(scope.run)}`);
  if (scope.version !== undefined) where.push(`version = ${lit(scope.version)}`);
  if (scope.split !== undefined) where.push(`split = ${lit(scope.split)}`);
  if (scope.steps) where.push(`step between ${Math.trunc(scope.steps[0])} and ${Math.trunc(scope.steps[1])}`);
  if (!where.length) return fn();
  const name = (await db.one<{ d: string }>('select current_database() as d'))!.d;
  await db.conn.run(`create or replace temp view rollouts as select * from ${ident(name)}.main.rollouts where ${where.join(' and ')}`);
  await db.conn.run(`create or replace temp view steps as select s.* from ${ident(name)}.main.steps s where s.rollout_id in (select id from temp.main.rollouts)`);
  try {
    return await fn();
  } finally {
    await db.conn.run('drop view if exists temp.main.steps');
    await db.conn.run('drop view if exists temp.main.rollouts');
  }
}

const TEMP_NAME = /^[a-z_][a-z0-9_]*$/;

function checkedName(name: string): string {
  if (!TEMP_NAME.test(name)) throw new Error(`"${name}" is not a temporary table name (lower case letters, digits, _)`);
  return name;
}

/** Creates (or replaces) a temporary table from a query; it lives as long as the store is open. */
export async function createTempTable(db: StoreDb, t: TempTable): Promise<void> {
  await db.conn.run(`create or replace temp table ${checkedName(t.name)} as ${t.select}`, t.params ?? []);
}

/**
 * Runs `fn` with temporary tables made from queries, created in order and dropped after,
 * whatever `fn` does. A table's query fails like any query: its SQL error is thrown.
 */
export async function withTempTables<T>(db: StoreDb, tables: TempTable[], fn: () => Promise<T>): Promise<T> {
  const made: string[] = [];
  try {
    for (const t of tables) {
      await createTempTable(db, t);
      made.push(t.name);
    }
    return await fn();
  } finally {
    for (const name of made.reverse()) await db.conn.run(`drop table if exists ${name}`);
  }
}

/** The column names (lower case) a query returns, without running it over any row. */
export async function columnsOf(db: StoreDb, select: string): Promise<string[]> {
  return (await db.conn.runAndReadAll(`select * from (${select}) limit 0`)).columnNames().map((c) => c.toLowerCase());
}
