import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCachedRollouts } from '../../../src/core/backtest/backtest';
import { rewardItem, scoreFromStore } from '../../../src/core/backtest/inputs';
import { WorkerPool, type FunctionSpec } from '../../../src/core/backtest/pool';
import { RolloutStore } from '../../../src/core/store/store';
import { tempDir } from '../../helpers/tmp';

/**
 * A reward's inputs streamed from the store to real python3 workers: the same calls as the
 * items built from the loaded rollouts, whether the reward reads extra_info or not, across
 * chunk and batch boundaries, with the texts JSON must escape.
 */
const REWARDS = `
import functools, os

def fragile(data_source, solution_str, ground_truth, extra_info=None):
    if data_source == "unknown" and solution_str == "line\\nbreak\\ttab answer 3" and ground_truth == "":
        os._exit(7)  # one rollout of the 5,000 (index 4147)
    return float(solution_str.endswith(ground_truth))

def narrow(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(solution_str.endswith(ground_truth)), "ds": data_source, "sol": solution_str, "gt": ground_truth}

def wide(data_source, solution_str, ground_truth, extra_info):
    return {"score": 1.0, "sol": solution_str, "gt": ground_truth, "extra": extra_info}

def by_locals(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": 0.0, "extra": locals()["extra_info"]}

def nested(data_source, solution_str, ground_truth, extra_info=None):
    get = lambda: extra_info
    return {"score": 0.0, "extra": get()}

@functools.lru_cache(maxsize=None)
def cached(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0

def trl(prompts, completions, **columns):
    return [float(c.endswith(a or "")) + len(p) / 1000 for p, c, a in zip(prompts, completions, columns["answer"])]
`;

const N = 5000;

describe('reward inputs streamed from the store', () => {
  const dir = tempDir('evotrainer-inputs-');
  let store: RolloutStore;
  let pool: WorkerPool;
  const fn = (name: string, kind: FunctionSpec['kind'] = 'verl'): FunctionSpec => ({ name, path: 'reward/r.py', function: name, kind });
  const functions = [fn('narrow'), fn('wide'), fn('by_locals'), fn('nested'), fn('trl', 'trl'), fn('fragile')];

  before(async () => {
    mkdirSync(path.join(dir, 'reward'));
    writeFileSync(path.join(dir, 'reward', 'r.py'), REWARDS);
    writeFileSync(path.join(dir, 'reward', 'cached.py'), REWARDS);
    const dump = path.join(dir, 'run', 'rollout_data');
    mkdirSync(dump, { recursive: true });
    const lines: string[] = [];
    for (let i = 0; i < N; i++) {
      const tricky = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'ünïcödé ✓ 𝔸', '\u0001 control'][i % 5]!;
      lines.push(JSON.stringify({ input: `Problem ${i % 97}`, output: `${tricky} answer ${i % 7}`, gts: i % 11 === 0 ? null : String(i % 7), score: i % 2, step: 1 + (i % 3), data_source: i % 13 === 0 ? null : 'math', note: `n${i}` }));
    }
    writeFileSync(path.join(dump, '1.jsonl'), lines.join('\n') + '\n');
    store = await RolloutStore.open(path.join(dir, 'store.duckdb'));
    await store.import([path.join(dir, 'run')], { run: 'r1' });
    pool = await WorkerPool.start({ root: dir, workers: 2, timeoutSeconds: 10, batchSize: 300, functions });
  });
  after(async () => {
    await pool?.close();
    store?.close();
  });

  it('finds which verl rewards never read extra_info', async () => {
    assert.equal(pool.readsExtraInfo('narrow'), false);
    for (const name of ['wide', 'by_locals', 'nested', 'trl']) assert.equal(pool.readsExtraInfo(name), true, name);
    const wrapped = await WorkerPool.start({ root: dir, workers: 1, functions: [{ name: 'c', path: 'reward/cached.py', function: 'cached', kind: 'verl' }] });
    try {
      assert.equal(wrapped.readsExtraInfo('c'), true, 'a wrapped function passes its arguments on');
    } finally {
      await wrapped.close();
    }
  });

  for (const name of ['narrow', 'wide', 'trl']) {
    it(`${name}: the streamed calls give what the loaded rollouts' items give`, async () => {
      const rollouts = await loadCachedRollouts(store, {});
      assert.equal(rollouts.length, N);
      const spec = functions.find((f) => f.name === name)!;
      const expected = await pool.map(name, rollouts.map((r) => rewardItem(spec.kind, r)));
      const byId = await scoreFromStore(store, {}, Promise.resolve(pool), spec);
      assert.equal(byId.size, N);
      rollouts.forEach((r, i) => assert.deepEqual(byId.get(r.id), expected[i], `rollout ${r.id}`));
      assert.ok(expected.every((x) => x.error === null));
    });
  }

  it('a rollout that crashes its worker is that rollout\'s error; the rest of its batch is scored', async () => {
    assert.equal(pool.readsExtraInfo('fragile'), false);
    const rollouts = await loadCachedRollouts(store, {});
    const byId = await scoreFromStore(store, {}, Promise.resolve(pool), fn('fragile'));
    assert.equal(byId.size, N);
    const failed = rollouts.filter((r) => byId.get(r.id)!.error !== null);
    assert.deepEqual(failed.map((r) => [r.response, r.ground_truth, r.data_source]), [['line\nbreak\ttab answer 3', null, null]]);
    assert.match(byId.get(failed[0]!.id)!.error!, /worker crashed \(exit code 7\)/);
    for (const r of rollouts) if (r !== failed[0]) assert.equal(byId.get(r.id)!.value, (r.response ?? '').endsWith(r.ground_truth ?? '') ? 1 : 0, `rollout ${r.id}`);
  });

  it('reads the same rollouts as the selector loads (scope and limit)', async () => {
    const selector = { steps: [2, 3] as [number, number], limit: 777 };
    const rollouts = await loadCachedRollouts(store, selector, { texts: false });
    assert.equal(rollouts.length, 777);
    assert.ok(rollouts.every((r) => r.response === null && r.prompt === null), 'without the texts');
    const byId = await scoreFromStore(store, selector, Promise.resolve(pool), fn('narrow'));
    assert.deepEqual([...byId.keys()].sort((a, b) => a - b), rollouts.map((r) => r.id));
  });

  it('a pool that fails to start is the error, and the read stops', async () => {
    const failing = WorkerPool.start({ root: dir, workers: 1, python: 'no-such-python3', functions: [fn('narrow')] });
    await assert.rejects(scoreFromStore(store, {}, failing, fn('narrow')), /could not start no-such-python3/);
    assert.equal((await store.one<{ n: number }>('select count(*)::int as n from rollouts'))!.n, N, 'the store still answers');
  });
});
