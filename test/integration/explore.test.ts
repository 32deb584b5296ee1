import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Explorer, INLINE_CHARS } from '../../src/core/explore/explorer';
import type { ExplorerQuery } from '../../src/core/explore/types';
import { RolloutStore } from '../../src/core/store/store';
import { ExplorerBackend } from '../../src/viewer/explorer/backend';
import { storeStamp } from '../../src/core/store/stamp';
import { ExplorerMethods, OpenExplorerArgsSchema, type PageResult } from '../../src/viewer/explorer/protocol';
import type { TextChunk, Trajectory } from '../../src/core/explore/types';
import type { IpcResponse } from '../../src/viewer/protocol';
import { HostTransport } from '../../src/viewer/transport';
import { requireSharedData, sweDir } from '../helpers/data';
import { HUGE_LINE_CHARS, HUGE_LINE_END, IMG_TEXT, SCRIPT_TEXT, writeHostileTrajectory } from '../helpers/hostile';
import { tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const q = (over: Partial<ExplorerQuery> = {}): ExplorerQuery => ({ filter: {}, sort: { column: 'id', descending: false }, offset: 0, limit: 50, ...over });

describe('failure explorer data API (real SWE trajectories + a hostile one)', () => {
  const dir = tempDir('evotrainer-explore-');
  let store: RolloutStore;
  let ex: Explorer;
  let hostileId: number;

  before(async () => {
    writeHostileTrajectory(path.join(dir, 'hostile'));
    store = await RolloutStore.open(path.join(dir, 'store.duckdb'));
    await store.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    await store.import([path.join(dir, 'hostile', 'trajs')], { run: 'hostile', version: 'v1' });
    ex = new Explorer(store);
    hostileId = (await store.one<{ id: number }>(`select id from rollouts where run_id = 'hostile'`))!.id;
  });
  after(() => store?.close());

  it('the histogram agrees with the failure-mode view of diagnose, and counts under the other filters', async () => {
    const bars = await ex.histogram();
    const truth = await store.all<{ mode: string; n: number }>(`select failure_mode as mode, count(*) as n from rollout_failure_modes group by 1`);
    assert.deepEqual(Object.fromEntries(bars.map((b) => [b.mode, b.count])), Object.fromEntries(truth.map((t) => [t.mode, t.n])));
    const swe = Object.fromEntries((await ex.histogram({ run: 'swe' })).map((b) => [b.mode, b.count]));
    assert.equal(swe.success, 223);
    assert.equal(swe.format_error_loop, 74);
    assert.equal(Object.values(swe).reduce((a, b) => a + b, 0), 303);
    // The failure-mode filter itself is ignored by the histogram, so every bar stays clickable.
    assert.deepEqual(await ex.histogram({ failureMode: 'leak' }), bars);
    assert.match(bars.find((b) => b.mode === 'leak')!.layer, /git history/);
  });

  it('pages through a sorted, filtered query without gaps or repeats', async () => {
    const filter = { run: 'swe' };
    const sort = { column: 'num_turns' as const, descending: true };
    const seen: number[] = [];
    let prev = Infinity;
    for (let offset = 0; ; offset += 100) {
      const page = await ex.page(q({ filter, sort, offset, limit: 100 }));
      assert.equal(page.total, 303);
      if (!page.rows.length) break;
      for (const r of page.rows) {
        assert.ok((r.num_turns ?? -1) <= prev, 'descending by turns');
        prev = r.num_turns ?? -1;
        seen.push(r.id);
      }
    }
    assert.equal(seen.length, 303);
    assert.equal(new Set(seen).size, 303);
  });

  it('filters by failure mode, correctness, step and version, and searches text case-insensitively', async () => {
    const fel = await ex.page(q({ filter: { failureMode: 'format_error_loop' }, limit: 500 }));
    assert.equal(fel.total, 74);
    assert.ok(fel.rows.every((r) => r.failure_mode === 'format_error_loop' && r.correct === false));
    assert.equal((await ex.page(q({ filter: { run: 'swe', correct: 'true' } }))).total, 224);
    assert.equal((await ex.page(q({ filter: { correct: 'unknown' } }))).total, 0);
    assert.equal((await ex.page(q({ filter: { step: 0 } }))).total, 304);
    assert.equal((await ex.page(q({ filter: { step: 7 } }))).total, 0);
    assert.deepEqual((await ex.page(q({ filter: { version: 'v1' } }))).rows.map((r) => r.id), [hostileId]);
    const byTask = await ex.page(q({ filter: { search: 'DJANGO__DJANGO-7530' } }));
    assert.deepEqual(byTask.rows.map((r) => r.prompt_id), ['django__django-7530']);
    const byText = await ex.page(q({ filter: { search: 'window.__EVOPWNED' } }));
    assert.deepEqual(byText.rows.map((r) => r.id), [hostileId]);
    // A search combined with a filter, and the histogram under that search.
    assert.equal((await ex.page(q({ filter: { search: 'django', failureMode: 'success' } }))).total, (await ex.histogram({ search: 'django' })).find((b) => b.mode === 'success')!.count);
    assert.equal((await ex.page(q({ filter: { search: "'; drop table rollout_rows; --" } }))).total, 0);
    assert.equal((await store.one<{ n: number }>('select count(*) as n from rollouts'))!.n, 304);
  });

  it('takes run names with quotes and shell metacharacters as plain values', async () => {
    const run = `it's; drop table rollouts; --$(touch pwned) \`id\``;
    const s2 = await RolloutStore.open(path.join(dir, 'odd.duckdb'));
    try {
      await s2.import([path.join(dir, 'hostile', 'trajs')], { run });
      const odd = new Explorer(s2);
      assert.deepEqual((await odd.facets()).runs, [run]);
      assert.equal((await odd.page(q({ filter: { run } }))).total, 1);
      assert.equal((await odd.page(q({ filter: { run: "it's" } }))).total, 0);
    } finally {
      s2.close();
    }
  });

  it('refuses an unknown failure mode or sort column with a message saying what to use', async () => {
    await assert.rejects(ex.page(q({ filter: { failureMode: 'bogus' } })), /unknown failure mode "bogus"; choose one of leak, /);
    await assert.rejects(ex.page(q({ sort: { column: 'prompt; drop' as 'id', descending: false } })), /cannot sort by "prompt; drop"; choose one of id, /);
  });

  it('finds where a rollout sits in the current order', async () => {
    const sort = { column: 'reward' as const, descending: true };
    const page = await ex.page(q({ sort, offset: 40, limit: 1 }));
    assert.equal(await ex.position({ filter: {}, sort }, page.rows[0]!.id), 40);
    assert.equal(await ex.position({ filter: { failureMode: 'success' }, sort }, hostileId), null);
  });

  it('opens a real trajectory: turns, commands, return codes and the submitted diff', async () => {
    const [row] = (await ex.page(q({ filter: { run: 'swe', failureMode: 'format_error_loop' }, limit: 1 }))).rows;
    const t = (await ex.trajectory(row!.id))!;
    assert.equal(t.failure_mode, 'format_error_loop');
    assert.equal(t.messages[0]!.role, 'system');
    assert.equal(t.messages[0]!.part, 'prompt');
    const commands = t.messages.filter((m) => m.command);
    assert.ok(commands.length > 5);
    assert.ok(t.messages.some((m) => m.exitCode === 0));
    assert.ok(t.messages.some((m) => m.formatError), 'the format errors that classify it are marked');
    assert.ok(t.diff && /^diff --git /m.test(t.diff.text));
    assert.equal(await ex.trajectory(10_000_000), null);
  });

  it('hands hostile text back verbatim, and a 10 MB line a page at a time', async () => {
    const t = (await ex.trajectory(hostileId))!;
    assert.ok(t.messages[1]!.content.text.includes(SCRIPT_TEXT));
    assert.ok(t.messages[1]!.content.text.includes(IMG_TEXT));
    assert.ok(t.diff!.text.includes(SCRIPT_TEXT));
    const huge = t.messages[5]!;
    assert.equal(huge.content.text.length, INLINE_CHARS);
    assert.ok(huge.content.length > HUGE_LINE_CHARS);
    let end = huge.content.end;
    let pages = 0;
    let last = '';
    while (end < huge.content.length) {
      const c = (await ex.more(hostileId, { kind: 'message', index: 5 }, end, 1_000_000))!;
      assert.equal(c.end - c.text.length, end, 'pages are contiguous');
      end = c.end;
      last = c.text;
      pages++;
    }
    assert.equal(pages, Math.ceil((huge.content.length - INLINE_CHARS) / 1_000_000));
    assert.ok(last.includes(HUGE_LINE_END));
    assert.equal(await ex.more(hostileId, { kind: 'message', index: 99 }, 0), null);
  });
});

describe('failure explorer backend (the host side of the webview protocol)', () => {
  const dir = tempDir('evotrainer-explore-backend-');
  let backend: ExplorerBackend;
  const logs: string[] = [];

  before(async () => {
    const file = path.join(dir, 'store.duckdb');
    const s = await RolloutStore.open(file);
    await s.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    s.close();
    backend = new ExplorerBackend({ open: () => RolloutStore.open(file), storeLabel: file, idleCloseMs: 200, stamp: () => storeStamp(file), log: (l, m) => logs.push(`${l} ${m}`) });
  });
  after(() => backend?.dispose());

  it('opens with the first page and histogram under the requested failure mode', async () => {
    const s = await backend.state({ failureMode: 'leak' });
    assert.equal(s.status, 'ready');
    assert.equal(s.page!.total, 2);
    assert.ok(s.page!.rows.every((r) => r.failure_mode === 'leak'));
    assert.equal(s.histogram.reduce((a, b) => a + b.count, 0), 303);
    assert.equal(s.facets!.rollouts, 303);
  });

  it('opens at a rollout, and at one of its turns (a gate\'s answer-in-context row): the arguments are checked', async () => {
    const s = await backend.state({ rolloutId: 5, turn: 3 });
    assert.equal(s.openRolloutId, 5);
    assert.equal(s.openRolloutTurn, 3);
    assert.equal(typeof s.openRolloutPosition, 'number');
    assert.equal((await backend.state({ rolloutId: 5 })).openRolloutTurn, null);
    assert.equal((await backend.state({ turn: 3 })).openRolloutTurn, null, 'a turn without a rollout opens nothing');
    assert.ok(OpenExplorerArgsSchema.safeParse({ rolloutId: 5, turn: 0 }).success);
    for (const bad of [{ rolloutId: 5, turn: -1 }, { rolloutId: 5, turn: 1.5 }, { rolloutId: 5, turn: '2' }]) assert.equal(OpenExplorerArgsSchema.safeParse(bad).success, false, JSON.stringify(bad));
  });

  it('answers each request by id through the transport, and refuses malformed ones with a reason and a log line', async () => {
    const transport = new HostTransport('explorer', (l, m) => logs.push(`${l} ${m}`)).serve(ExplorerMethods, backend.methods);
    const result = <R>(r: IpcResponse | null): R => {
      assert.ok(r && 'result' in r, JSON.stringify(r));
      return r.result as R;
    };
    const pageAnswer = await transport.receive({ id: 7, method: 'explorer/query', params: { filter: { correct: 'false' }, sort: { column: 'reward', descending: false }, offset: 0, limit: 10, withHistogram: true } });
    assert.equal(pageAnswer!.id, 7);
    const p = result<PageResult>(pageAnswer);
    assert.equal(p.page.total, 79);
    assert.ok(p.histogram!.length > 0);
    const traj = result<Trajectory>(await transport.receive({ id: 8, method: 'explorer/openTrajectory', params: { id: p.page.rows[0]!.id } }));
    assert.equal(traj.id, p.page.rows[0]!.id);
    const more = result<TextChunk>(await transport.receive({ id: 9, method: 'explorer/moreText', params: { id: traj.id, part: { kind: 'message', index: 0 }, offset: 10 } }));
    assert.equal(more.text, traj.messages[0]!.content.text.slice(10));

    const invalid = await transport.receive({ id: 1, method: 'explorer/query', params: { filter: {}, sort: { column: 'nope', descending: false }, offset: 0, limit: 10, withHistogram: false } });
    assert.ok(invalid && 'error' in invalid && invalid.code === 'invalid_params' && invalid.id === 1, JSON.stringify(invalid));
    assert.match(invalid.error, /invalid parameters for "explorer\/query"/);
    const unknown = await transport.receive({ id: 2, method: 'explorer/exec', params: {} });
    assert.ok(unknown && 'error' in unknown && unknown.code === 'unknown_method', JSON.stringify(unknown));
    const noId = await transport.receive({ method: 'explorer/query', params: { filter: {}, sort: { column: 'id', descending: false }, offset: 0, limit: 1, withHistogram: false } });
    assert.equal(noId, null, 'a request without an id cannot be answered');
    assert.equal(await transport.receive('explorer/query'), null);
    assert.equal(await transport.receive({ id: -1, method: 'explorer/query', params: {} }), null);
    assert.ok(logs.some((l) => /warn \[explorer\] invalid parameters for "explorer\/query"/.test(l)));
    assert.ok(logs.some((l) => /unknown method "explorer\/exec"/.test(l)));
    assert.ok(logs.some((l) => /"explorer\/query" is a request: it needs an id/.test(l)));

    const failed = await transport.receive({ id: 3, method: 'explorer/query', params: { filter: { failureMode: 'bogus' }, sort: { column: 'id', descending: false }, offset: 0, limit: 10, withHistogram: false } });
    assert.ok(failed && 'error' in failed && failed.code === 'failed', JSON.stringify(failed));
    assert.match(failed.error, /unknown failure mode "bogus"/);
    const gone = await transport.receive({ id: 4, method: 'explorer/openTrajectory', params: { id: 99_999_999 } });
    assert.ok(gone && 'error' in gone && /no rollout with id 99999999/.test(gone.error), JSON.stringify(gone));
    // Refresh answers with the whole state under the last filter that could be read.
    const refreshed = result<{ status: string; filter: { correct?: string }; page: { total: number } }>(await transport.receive({ id: 5, method: 'explorer/refresh' }));
    assert.equal(refreshed.status, 'ready');
    assert.deepEqual(refreshed.filter, { correct: 'false' });
    assert.equal(refreshed.page.total, 79);
  });

  it('closes the store when idle (so imports can write) and reopens it on the next request', async () => {
    await new Promise((r) => setTimeout(r, 400));
    const s = await RolloutStore.open(path.join(dir, 'store.duckdb'));
    s.close();
    const again = await backend.state({});
    assert.equal(again.page!.total, 303);
  });

  it('released (its page hidden), it reads the store again under the same filter only when another writer changed it', async () => {
    const file = path.join(dir, 'store.duckdb');
    assert.equal((await backend.state({ failureMode: 'leak' })).page!.total, 2);
    await backend.release();
    assert.equal(await backend.refreshIfChanged(), null, 'nothing wrote the store');
    // The store is free for an import meanwhile.
    writeHostileTrajectory(path.join(dir, 'hostile'));
    const s = await RolloutStore.open(file);
    await s.import([path.join(dir, 'hostile', 'trajs')], { run: 'later' });
    s.close();
    const next = await backend.refreshIfChanged();
    assert.ok(next, 'the store changed: a new state');
    assert.deepEqual(next.filter, { failureMode: 'leak' });
    assert.equal(next.facets!.rollouts, 304);
    assert.ok(next.facets!.runs.includes('later'));
    assert.equal(await backend.refreshIfChanged(), null, 'read again: what it shows is the store as it is');
  });
});
