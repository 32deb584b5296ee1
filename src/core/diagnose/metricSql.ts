/**
 * What a harness's SQL metric may read. A metric file comes with the harness (a cloned
 * repository, a cherry-picked skill) and runs without the user's consent to run harness
 * code, in the editor as soon as it is opened, on the store's own DuckDB connection. DuckDB
 * SQL can read any file the user can (`read_text('~/.ssh/id_ed25519')`, `from 'x.csv'`,
 * `glob`), list settings and secrets, and load extensions that reach the network; a metric
 * needs none of that. So before it runs, its query is parsed by DuckDB itself
 * (`json_serialize_sql`, the parser the query then runs through) and every table it reads
 * must be one of the documented views or a CTE of its own: no table function, no file,
 * no other schema or database, and no function that reads the session's state.
 */

/** The views a metric reads (narrowed to the scope before it runs). */
export const METRIC_VIEWS = ['rollouts', 'steps', 'rollout_features'] as const;

/** Table references that read nothing but their children or the query's own values. */
const SAFE_REFS = new Set(['BASE_TABLE', 'SUBQUERY', 'JOIN', 'EMPTY', 'EXPRESSION_LIST']);
/** Query nodes: a SELECT, a UNION / EXCEPT / INTERSECT, a (recursive) WITH. */
const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);
/** Scalar functions that read the session rather than the rows. */
const SESSION_FUNCTIONS = new Set(['current_setting', 'getvariable', 'current_query', 'current_query_id', 'getenv', 'in_search_path', 'current_schemas', 'current_database', 'current_catalog']);

/** Why a metric's query may not run, and where (a character offset into `sql`). */
export interface MetricSqlRefusal {
  message: string;
  offset: number | null;
}

/** Runs one query and returns its single value (the store's or any DuckDB connection). */
export type ScalarQuery = (sql: string, params: string[]) => Promise<unknown>;

const VIEWS_TEXT = `${METRIC_VIEWS.slice(0, -1).join(', ')} and ${METRIC_VIEWS[METRIC_VIEWS.length - 1]}`;

/**
 * Null when `sql` (one SELECT) reads only the metric views and its own CTEs; otherwise what
 * it reads that it may not. A query DuckDB cannot describe is refused too: what is not
 * checked does not run.
 */
export async function refuseMetricSql(sql: string, query: ScalarQuery): Promise<MetricSqlRefusal | null> {
  let tree: unknown;
  try {
    tree = JSON.parse(String(await query('select json_serialize_sql(?::varchar)', [sql])));
  } catch (err) {
    return { message: `could not be checked before running (${(err as Error).message.split('\n')[0]}); a metric is one SELECT over ${VIEWS_TEXT}`, offset: null };
  }
  const t = tree as { error?: boolean; error_message?: string; statements?: unknown[] };
  if (t.error) {
    // A syntax error: DuckDB's own message (with its position) says it best.
    return { message: `SQL error: ${String(t.error_message ?? 'the query does not parse').split('\n')[0]}`, offset: null };
  }
  if (!Array.isArray(t.statements) || t.statements.length !== 1) return { message: `must be one SELECT over ${VIEWS_TEXT}`, offset: null };
  const ctes = new Set<string>();
  collectCtes(t.statements, ctes);
  const allowed = new Set<string>([...METRIC_VIEWS, ...ctes]);
  return walk(t.statements, allowed);
}

function collectCtes(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const n of node) collectCtes(n, out);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  const map = (o.cte_map as { map?: { key?: unknown }[] } | undefined)?.map;
  if (Array.isArray(map)) for (const e of map) if (typeof e.key === 'string') out.add(e.key.toLowerCase());
  for (const v of Object.values(o)) collectCtes(v, out);
}

function at(o: Record<string, unknown>): number | null {
  const q = o.query_location;
  // DuckDB writes an unknown position as the largest 64-bit value.
  return typeof q === 'number' && q < 1e15 ? q : null;
}

function walk(node: unknown, allowed: Set<string>): MetricSqlRefusal | null {
  if (Array.isArray(node)) {
    for (const n of node) {
      const r = walk(n, allowed);
      if (r) return r;
    }
    return null;
  }
  if (!node || typeof node !== 'object') return null;
  const o = node as Record<string, unknown>;
  const isQueryNode = typeof o.type === 'string' && !('class' in o) && o.type.endsWith('_NODE');
  if (isQueryNode && !QUERY_NODES.has(o.type as string)) return { message: `holds a ${String(o.type).toLowerCase().replace(/_/g, ' ')}; a metric is one SELECT over ${VIEWS_TEXT}`, offset: at(o) };
  const isTableRef = typeof o.type === 'string' && !('class' in o) && !isQueryNode && 'sample' in o;
  if (isTableRef) {
    if (o.type === 'TABLE_FUNCTION') {
      const fn = (o.function as { function_name?: unknown } | undefined)?.function_name;
      return { message: `calls the table function ${String(fn)}(); a metric reads only ${VIEWS_TEXT} (no files, no table functions)`, offset: at(o) };
    }
    if (!SAFE_REFS.has(o.type as string)) return { message: `reads a ${String(o.type).toLowerCase().replace(/_/g, ' ')}; a metric reads only ${VIEWS_TEXT}`, offset: at(o) };
    if (o.type === 'BASE_TABLE') {
      const name = String(o.table_name ?? '');
      const qualified = [o.catalog_name, o.schema_name].filter((x) => typeof x === 'string' && x !== '');
      if (qualified.length || !allowed.has(name.toLowerCase())) {
        const shown = [...qualified, name].join('.');
        const near = qualified.length ? undefined : METRIC_VIEWS.find((v) => editDistance(v, name.toLowerCase()) <= 2);
        return { message: `reads "${shown}", which is not one of the views ${VIEWS_TEXT} (nor a WITH query of the metric's own)${near ? `; did you mean ${near}?` : ''}`, offset: at(o) };
      }
    }
  }
  if (o.class === 'FUNCTION' && typeof o.function_name === 'string' && SESSION_FUNCTIONS.has(o.function_name.toLowerCase())) {
    return { message: `calls ${o.function_name}(), which reads the session, not the rollouts`, offset: at(o) };
  }
  for (const v of Object.values(o)) {
    const r = walk(v, allowed);
    if (r) return r;
  }
  return null;
}

/** Levenshtein distance, for a misspelt view's suggestion. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
