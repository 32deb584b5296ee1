import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { initHarness } from '../../src/core/harness/init';
import { rejectVersion } from '../../src/core/harness/versions';
import type { CurvesState } from '../../src/viewer/curves/protocol';
import { INITIAL_STATE_ID } from '../../src/viewer/protocol';
import { writeVerlLog } from '../helpers/curves';
import { repoRoot, tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, REWARD } from './harness/helpers';

const cli = path.join(repoRoot, 'bin', 'evotrainer.js');
const STEPS = 30;

/** A run's curves: entropy from `e0` decaying by `decay` per step. */
const run = (e0: number, decay: number) =>
  Array.from({ length: STEPS }, (_, i) => ({ 'actor/entropy': Number((e0 * Math.exp(-decay * i)).toFixed(4)), 'actor/grad_norm': Number((0.3 + i / 100).toFixed(4)), 'critic/score/mean': 0.5 }));

const initialState = (page: string) => JSON.parse(new RegExp(`<script type="application/json" id="${INITIAL_STATE_ID}" nonce="[^"]+">(.*?)</script>`, 's').exec(page)![1]!) as CurvesState;

/**
 * `evotrainer view --curves` over real HTTP: the training curves page beside the failure
 * explorer, on the harness's store and ledger, its commands answered with the new state.
 */
describe('evotrainer view --curves (the training curves in a browser, over HTTP)', () => {
  const home = tempDir('evotrainer-view-curves-');
  const workspace = path.join(home, 'harness');
  let child: ChildProcess;
  let curvesUrl: URL;
  let explorerUrl: URL;
  let stderr = '';
  const versions: Record<string, string> = {};

  before(async () => {
    const h = (await initHarness(workspace, 'starter')).harness;
    versions.promoted = (await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.5 }, { promote: true })).id;
    versions.rejected = (await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.5 if pred is not None else 0.0'), { pass_rate: 0.4 })).id;
    await rejectVersion(h, versions.rejected, 'entropy collapsed while the score rose');
    for (const [v, e0, decay] of [['v0', 1.2, 0.004], [versions.promoted, 1.25, 0.01], [versions.rejected, 1.3, 0.08]] as const) {
      const dir = path.join(home, 'runs', v);
      writeVerlLog(path.join(dir, 'train.log'), run(e0, decay));
      const r = spawnSync(process.execPath, [cli, 'import', dir, '--run', `train-${v}`, '--version', v], { cwd: workspace, encoding: 'utf8' });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    }
    child = spawn(process.execPath, [cli, 'view', '--curves', '--metric', 'grad_norm'], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    [curvesUrl, explorerUrl] = await new Promise<[URL, URL]>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /Training curves for .*:\n {2}(http:\/\/127\.0\.0\.1:\d+\/\S+)\nFailure explorer: (http:\/\/\S+)\n/.exec(out);
        if (m) resolve([new URL(m[1]!), new URL(m[2]!)]);
      });
      child.once('exit', (code) => reject(new Error(`view exited ${code}: ${out}\n${stderr}`)));
    });
  });
  after(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it('prints the curves URL first, beside the explorer, under one token', () => {
    assert.match(curvesUrl.pathname, /^\/[A-Za-z0-9_-]{32}\/curves\/$/);
    assert.equal(curvesUrl.searchParams.get('metric'), 'grad_norm');
    assert.equal(explorerUrl.pathname, curvesUrl.pathname.replace(/curves\/$/, ''));
  });

  it('serves the curves page with a nonce CSP, on the metric asked for, each version marked from the ledger', async () => {
    const r = await fetch(curvesUrl);
    assert.equal(r.status, 200);
    const page = await r.text();
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(page)![1]!;
    assert.match(csp, /script-src 'nonce-[^']+'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(page, /assets\/curves\.js/);
    const state = initialState(page);
    assert.equal(state.status, 'ready');
    assert.equal(state.metric, 'grad_norm');
    assert.deepEqual(state.series.map((s) => `${s.run}@${s.version}`).sort(), ['train-v0@v0', `train-${versions.promoted}@${versions.promoted}`, `train-${versions.rejected}@${versions.rejected}`].sort());
    assert.ok(state.series.every((s) => s.points.length === STEPS));
    const marks = Object.fromEntries(state.versions.map((v) => [v.version, `${v.status}${v.tip ? ' tip' : ''}`]));
    assert.deepEqual([marks.v0, marks[versions.promoted!], marks[versions.rejected!]], ['promoted', 'promoted tip', 'rejected']);
    // Its path without the closing slash leads to it; the explorer page is still where it was.
    const bare = await fetch(new URL(curvesUrl.pathname.slice(0, -1), curvesUrl), { redirect: 'manual' });
    assert.equal(bare.status, 302);
    assert.equal(bare.headers.get('location'), curvesUrl.pathname);
    const explorer = await fetch(explorerUrl);
    assert.equal(explorer.status, 200);
    assert.match(await explorer.text(), /assets\/explorer\.js/);
    assert.equal((await fetch(new URL('../assets/curves.js', curvesUrl))).status, 200);
  });

  it('answers a new metric and a refresh with the state the page then shows; validates what arrives', async () => {
    const api = new URL('api', curvesUrl);
    const post = (body: unknown) => fetch(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const picked = await post({ method: 'curves/setMetric', params: { metric: 'entropy' } });
    assert.equal(picked.status, 200);
    const [note] = (await picked.json()) as { method: string; params: CurvesState }[];
    assert.equal(note!.method, 'curves/state');
    assert.equal(note!.params.metric, 'entropy');
    const rejected = note!.params.series.find((s) => s.version === versions.rejected)!;
    assert.equal(rejected.points.at(-1)!.value, Number((1.3 * Math.exp(-0.08 * (STEPS - 1))).toFixed(4)));
    // A refresh keeps the metric picked last.
    const again = ((await (await post({ method: 'curves/refresh' })).json()) as { params: CurvesState }[])[0]!;
    assert.equal(again.params.metric, 'entropy');
    assert.equal(again.params.series.length, 3);
    // In a browser the page opens the explorer itself: the host has nothing to say.
    assert.equal((await post({ method: 'curves/openStep', params: { run: 'train-v0', version: 'v0', step: 3 } })).status, 204);
    // A command with bad parameters is refused with the reason (nothing runs); one sent as a request is refused too.
    const badCommand = await post({ method: 'curves/setMetric', params: { metric: '' } });
    assert.equal(badCommand.status, 400);
    assert.match(await badCommand.text(), /invalid parameters for "curves\/setMetric"/);
    assert.equal((await post({ id: 1, method: 'curves/setMetric', params: { metric: 'entropy' } })).status, 400);
    assert.equal((await post({ id: 1, method: 'explorer/query', params: {} })).status, 400, "the explorer's methods are not the curves page's");
    assert.equal((await fetch(new URL('../api', curvesUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: 'curves/refresh' }) })).status, 400, "nor the curves' the explorer's");
    assert.equal((await fetch(`http://127.0.0.1:${curvesUrl.port}/wrong/curves/`)).status, 403);
    for (const p of ['../constructor/', '../toString/api', '../assets/', '../nothing/']) assert.equal((await fetch(new URL(p, curvesUrl))).status, 404, p);
  });

  it('says what is wrong with --metric without --curves, and stops on SIGINT', async () => {
    const r = spawnSync(process.execPath, [cli, 'view', '--metric', 'entropy'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--metric picks the curves page's metric: pass it with --curves/);
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGINT');
    });
    assert.equal(code, 0, stderr);
  });
});
