import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { curveSeries, listCurves } from '../../src/core/diagnose/curves';
import { diagnose, failureModes } from '../../src/core/diagnose/diagnose';
import { computeHealth } from '../../src/core/diagnose/health';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { loadCurves } from '../../src/viewer/curves/backend';
import { loadFindings, loadHealth, storePrimaryMetrics } from '../../src/extension/views/data';
import { requireSharedData, sweDir } from '../helpers/data';
import { tempDir } from '../helpers/tmp';

// Reads the real SWE trajectories in ../shared/data: without them, this file fails once, naming the path.
requireSharedData();

/**
 * The editor computes on one store from several views at once (Findings, the Health
 * panel, the versions tree's primary metric, the curves chart, hovers). Scoped views,
 * temporary tables and the derived views live on the store's connection and instance:
 * computations running at the same time must neither fail nor see each other's scope.
 */
describe('concurrent diagnoses on one store (303 real SWE trajectories)', () => {
  const root = tempDir('evotrainer-store-concurrency-');
  const file = defaultStorePath(root);
  before(async () => {
    mkdirSync(path.dirname(file), { recursive: true });
    const store = await RolloutStore.open(file);
    try {
      await store.import([path.join(sweDir, 'trajs')], { run: 'swe', version: 'v1' });
    } finally {
      store.close();
    }
  });

  it('health, findings, failure modes, a version metric and curves fired together on ONE store equal the same computed alone', async () => {
    const store = await RolloutStore.open(file);
    try {
      const alone = {
        run: await diagnose(store, { scope: { run: 'swe' } }),
        version: await computeHealth(store, { version: 'v1' }),
        all: await computeHealth(store),
        modes: await failureModes(store, { run: 'swe' }),
      };
      assert.equal(alone.run.health.rollouts, 303);
      assert.equal(alone.all.rollouts, 303);
      for (let round = 0; round < 4; round++) {
        const [run, version, all, modes, , , scoped] = await Promise.all([
          diagnose(store, { scope: { run: 'swe' } }),
          computeHealth(store, { version: 'v1' }),
          computeHealth(store),
          failureModes(store, { run: 'swe' }),
          listCurves(store),
          curveSeries(store, 'entropy'),
          diagnose(store, { scope: { run: 'swe' }, parts: 'health' }),
        ]);
        assert.equal(run.health.rollouts, 303, `round ${round}: ${run.health.rollouts} rollouts in ${run.health.groups} groups`);
        assert.equal(run.health.groups, alone.run.health.groups);
        assert.equal(version.rollouts, 303);
        assert.equal(all.rollouts, 303);
        assert.equal(scoped.health.rollouts, 303);
        assert.deepEqual(modes, alone.modes);
        assert.deepEqual(run.findings.map((f) => f.id), alone.run.findings.map((f) => f.id));
        const value = (r: typeof all, n: string) => r.metrics.find((m) => m.name === n)?.value;
        for (const m of alone.all.metrics) if (typeof m.value === 'number') assert.ok(Math.abs(value(all, m.name)! - m.value) < 1e-9, `round ${round}: ${m.name}`);
      }
      // Nothing a computation made for itself is left behind on the connection.
      assert.deepEqual(await store.all(`select table_name from duckdb_tables() where temporary and table_name like 'health_%'`), []);
    } finally {
      store.close();
    }
  });

  it("the editor's loaders (Health panel, Findings, versions tree metric, curves) fired together read 303 rollouts in their groups", async () => {
    const alone = await loadHealth(root);
    assert.equal(alone.error, null);
    assert.equal(alone.report?.rollouts, 303);
    for (let round = 0; round < 3; round++) {
      const [health, findings, metrics, curves] = await Promise.all([
        loadHealth(root),
        loadFindings(root, 'v1'),
        storePrimaryMetrics(root, 'turns', ['v1']),
        loadCurves(file, null, [], []),
        loadHealth(root, { picked: 'run:swe' }),
      ]);
      assert.equal(health.report?.rollouts, 303, `round ${round}: ${health.report?.rollouts} rollouts in ${health.report?.groups} groups`);
      assert.equal(health.report?.groups, alone.report?.groups);
      assert.equal(findings?.scope.rollouts, 303);
      assert.equal(typeof metrics.get('v1'), 'number');
      assert.notEqual(curves.status, 'loading');
    }
  });
});
