import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { fixtures } from '../helpers/data';
import { withStore } from '../helpers/store';
import { tempDir } from '../helpers/tmp';

const tempTables = (s: RolloutStore) => s.all<{ name: string }>(`select table_name as name from duckdb_tables() where temporary order by 1`).then((rs) => rs.map((r) => r.name));

/** What the store offers its readers instead of its connection (real DuckDB, real files). */
describe('the store keeps its connection: derived views, scoped views, temporary tables', () => {
  const root = tempDir('evotrainer-store-derived-');
  const file = defaultStorePath(root);

  it('creates its derived views itself, also on a read-only store (as temporary views)', async () => {
    await withStore(file, (s) => s.import([path.join(fixtures, 'verl'), path.join(fixtures, 'swe-agent')], { run: 'r' }));
    const ro = await RolloutStore.open(file, { readOnly: true });
    try {
      await ro.ensureDerivedViews();
      const n = (await ro.one<{ n: number }>('select count(*)::int as n from rollout_failure_modes'))!.n;
      assert.equal(n, (await ro.counts()).rollouts);
      assert.ok(n > 0);
      // Every rollout with turns beside the model's is checked for the answer in its context (a temporary table here).
      const multi = (await ro.one<{ n: number }>("select count(distinct rollout_id)::int as n from steps where role <> 'assistant'"))!.n;
      assert.ok(multi > 0);
      assert.equal((await ro.one<{ n: number }>('select count(*)::int as n from temp.main.answer_context'))!.n, multi);
    } finally {
      ro.close();
    }
    await withStore(file, async (s) => {
      await s.ensureDerivedViews();
      assert.ok((await s.one<{ n: number }>('select count(*)::int as n from rollout_features'))!.n > 0);
    });
  });

  it('drops temporary tables after the computation, also when it fails, and refuses a name that is not one', async () => {
    await withStore(file, async (s) => {
      const seen = await s.withTempTables([{ name: 'scratch_a', select: 'select 1 as x' }, { name: 'scratch_b', select: 'select x + ? as y from scratch_a', params: [41] }], async () => {
        assert.deepEqual(await s.columnsOf('select * from scratch_b'), ['y']);
        return (await s.one<{ y: number }>('select y from scratch_b'))!.y;
      });
      assert.equal(seen, 42);
      assert.deepEqual(await tempTables(s), []);
      await assert.rejects(s.withTempTables([{ name: 'scratch_c', select: 'select 1 as x' }], () => Promise.reject(new Error('boom'))), /boom/);
      assert.deepEqual(await tempTables(s), [], 'dropped after a failure');
      await assert.rejects(s.withTempTables([{ name: 'scratch_d', select: 'select 1 as x' }, { name: 'bad', select: 'select * from no_such_table' }], async () => 0), /no_such_table/);
      assert.deepEqual(await tempTables(s), [], 'the tables made before a failing one are dropped');
      await assert.rejects(s.createTempTable({ name: 'x; drop table imports', select: 'select 1' }), /is not a temporary table name/);
    });
  });

  it('narrows rollouts and steps to a scope for the length of a computation', async () => {
    await withStore(file, async (s) => {
      const all = (await s.counts()).rollouts;
      const splits = (await s.all<{ split: string }>('select distinct split from rollouts order by 1')).map((r) => r.split);
      assert.deepEqual(splits, ['train', 'val'], 'the fixture has both splits');
      const inScope = await s.withScopedViews({ split: 'val' }, async () => (await s.one<{ n: number }>('select count(*)::int as n from rollouts'))!.n);
      const expected = (await s.one<{ n: number }>("select count(*)::int as n from rollouts where split = 'val'"))!.n;
      assert.equal(inScope, expected);
      assert.ok(inScope < all);
      assert.equal((await s.one<{ n: number }>('select count(*)::int as n from rollouts'))!.n, all, 'the whole store again after');
    });
  });
});
