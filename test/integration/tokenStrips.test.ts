import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Explorer } from '../../src/core/explore/explorer';
import { RolloutStore } from '../../src/core/store/store';
import { intensity, stripColumns, summarize } from '../../src/webview/explorer/tokenHeat';
import { repoRoot, tempDir } from '../helpers/tmp';
import { vfLine, writeVfEval } from '../helpers/tokens';

const PRIME = path.join(repoRoot, 'test', 'fixtures', 'importers', 'prime-rl');
const LONG = 50_000;

describe('per-token log-probabilities: imported from the dumps that carry them, placed on their turns', () => {
  const dir = tempDir('evotrainer-tokens-');
  let store: RolloutStore;
  let ex: Explorer;
  const long = Array.from({ length: LONG }, (_, i) => (i === 31_337 ? -14.5 : i % 1000 === 7 ? null : -((i % 13) / 10)));

  before(async () => {
    const vf = path.join(dir, 'vf');
    writeVfEval(vf, [vfLine(3, [[-0.5, -0.25], [-0.1, -2.5, -7.25]]), vfLine(4, [[-0.01], long])]);
    store = await RolloutStore.open(path.join(dir, 'store.duckdb'));
    await store.import([path.join(PRIME, 'rollouts')], { run: 'prime' });
    await store.import([path.join(vf, 'results.jsonl')], { run: 'vf' });
    ex = new Explorer(store);
  });
  after(() => store?.close());

  it('prime-rl traces: the trajectory step\'s completion_logprobs on the reply it produced', async () => {
    const rows = await store.all<{ rollout_id: number; turn: number; kind: string; token_values: number[] }>(`select t.* from rollout_tokens t join rollouts r on r.id = t.rollout_id where r.run_id = 'prime'`);
    assert.ok(rows.length >= 1, 'the fixture\'s trajectory carries token log-probabilities');
    const r = rows[0]!;
    const t = (await ex.trajectory(r.rollout_id))!;
    const strip = t.tokens.find((k) => k.turn === r.turn)!;
    assert.deepEqual(strip.values, [-0.12, -0.03]);
    assert.equal(strip.kind, 'logprob');
    const placed = t.messages.find((m) => m.index === strip.messageIndex);
    assert.equal(placed?.role, 'assistant');
    assert.notEqual(placed?.part, 'prompt');
    // The token ids and the rest of the trajectory are not kept with the rollout.
    const extra = await store.one<{ extra: string | null }>(`select extra from rollouts where id = $1`, [r.rollout_id]);
    assert.doesNotMatch(extra?.extra ?? '', /completion_logprobs|trajectory/);
  });

  it('verifiers: each model call on its assistant message; a 50,000-token reply kept compact, nulls kept as gaps', async () => {
    const ids = await store.all<{ id: number; prompt_id: string }>(`select id, prompt_id from rollouts where run_id = 'vf' order by prompt_id`);
    const three = (await ex.trajectory(ids.find((r) => r.prompt_id === '3')!.id))!;
    const replies = three.messages.filter((m) => m.role === 'assistant' && m.part !== 'prompt').map((m) => m.index);
    assert.equal(replies.length, 2);
    assert.deepEqual(three.tokens.map((k) => [k.turn, k.messageIndex, k.values]), [[0, replies[0], [-0.5, -0.25]], [1, replies[1], [-0.1, -2.5, -7.25]]]);
    const four = (await ex.trajectory(ids.find((r) => r.prompt_id === '4')!.id))!;
    const big = four.tokens.find((k) => k.turn === 1)!;
    assert.equal(big.values.length, LONG);
    assert.equal(big.values[7], null);
    assert.equal(big.values[31_337], -14.5);
    assert.equal(big.values[12], -1.2);
    // FLOAT[]: four bytes a token in the store, not JSON text.
    const t = await store.one<{ type: string; n: number }>(`select typeof(token_values) as type, len(token_values)::int as n from rollout_tokens where len(token_values) = ${LONG}`);
    assert.deepEqual(t, { type: 'FLOAT[]', n: LONG });
    // Imported again, the same bytes add nothing.
    await store.import([path.join(dir, 'vf', 'results.jsonl')], { run: 'vf' });
    const n = await store.one<{ n: number }>(`select count(*)::int as n from rollout_tokens t join rollouts r on r.id = t.rollout_id where r.run_id = 'vf'`);
    assert.equal(n?.n, 4);
  });

  it('the strip of a 50,000-token reply: one column per pixel, each showing its most surprising token', () => {
    const cols = stripColumns(long, 'logprob', 600);
    assert.equal(cols.length, 600);
    assert.equal(cols[0]!.from, 0);
    assert.equal(cols[599]!.to, LONG);
    const spike = cols.find((c) => c.from <= 31_337 && c.to > 31_337)!;
    assert.equal(spike.worst, -14.5);
    assert.equal(spike.worstAt, 31_337);
    assert.equal(intensity(-14.5, 'logprob'), 1);
    assert.equal(intensity(-0.3, 'logprob') < 0.1, true);
    assert.equal(intensity(1.5, 'entropy'), 0.5);
    const s = summarize(long, 'logprob');
    assert.equal(s.worst, -14.5);
    assert.equal(s.worstAt, 31_337);
    assert.equal(s.extreme, 1);
    // Fewer tokens than pixels: one column each.
    assert.deepEqual(stripColumns([-1, null, -3], 'logprob', 600).map((c) => [c.from, c.to, c.worst]), [[0, 1, -1], [1, 2, null], [2, 3, -3]]);
  });
});
