import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RolloutStore } from '../../src/core/store/store';
import { INITIAL_STATE_ID } from '../../src/viewer/protocol';
import type { ExplorerState, PageResult } from '../../src/viewer/explorer/protocol';
import { requireSharedData, sweDir } from '../helpers/data';
import { SCRIPT_TEXT, writeHostileTrajectory } from '../helpers/hostile';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const cli = path.join(repoRoot, 'bin', 'evotrainer.js');

/** A raw HTTP request (fetch would not let the test set its own Host header). */
function http(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('evotrainer view (the failure explorer in a browser, over HTTP)', () => {
  const dir = tempDir('evotrainer-view-');
  const storeFile = path.join(dir, 'store.duckdb');
  let child: ChildProcess;
  let url: URL;
  let stderr = '';

  before(async () => {
    writeHostileTrajectory(path.join(dir, 'hostile'));
    for (const [p, run] of [[path.join(sweDir, 'trajs'), 'swe'], [path.join(dir, 'hostile', 'trajs'), 'hostile']]) {
      const r = spawnSync(process.execPath, [cli, 'import', p!, '--run', run!, '--store', storeFile], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }
    child = spawn(process.execPath, [cli, 'view', '--store', storeFile, '--failure-mode', 'format_error_loop'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    url = await new Promise<URL>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/\S*)/.exec(out);
        if (m) resolve(new URL(m[1]!));
      });
      child.once('exit', (code) => reject(new Error(`view exited ${code}: ${out}\n${stderr}`)));
    });
  });
  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints a tokened URL on 127.0.0.1 with the filter it was given', () => {
    assert.equal(url.hostname, '127.0.0.1');
    assert.match(url.pathname, /^\/[A-Za-z0-9_-]{32}\/$/);
    assert.equal(url.searchParams.get('failureMode'), 'format_error_loop');
  });

  it('serves the page with a nonce CSP, the initial state inert, filtered as asked', async () => {
    const r = await http(url.href);
    assert.equal(r.status, 200);
    assert.equal(r.headers['cache-control'], 'no-store');
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(r.body)![1]!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-[^']+'/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const json = new RegExp(`<script type="application/json" id="${INITIAL_STATE_ID}" nonce="[^"]+">(.*?)</script>`, 's').exec(r.body)![1]!;
    const state = JSON.parse(json) as ExplorerState;
    assert.equal(state.filter.failureMode, 'format_error_loop');
    assert.equal(state.page!.total, 74);
    // Rollout text in the state can never close the script tag.
    const hostile = await http(new URL(`?run=hostile`, url).href);
    assert.ok(!hostile.body.includes('<script>window'), 'no raw markup from rollouts in the page');
    assert.ok(JSON.parse(new RegExp(`id="${INITIAL_STATE_ID}" nonce="[^"]+">(.*?)</script>`, 's').exec(hostile.body)![1]!).page.rows[0].preview.includes(SCRIPT_TEXT.slice(0, 20)));
  });

  it('answers the webview protocol over POST, validating what arrives', async () => {
    const api = new URL('api', url).href;
    const post = (body: unknown, type = 'application/json') => http(api, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify(body) });
    const ok = await post({ id: 3, method: 'explorer/query', params: { filter: { search: 'sympy' }, sort: { column: 'reward', descending: true }, offset: 0, limit: 5, withHistogram: true } });
    assert.equal(ok.status, 200);
    const answer = JSON.parse(ok.body) as { id: number; result: PageResult };
    assert.equal(answer.id, 3);
    assert.ok(answer.result.page.total > 0);
    assert.ok(answer.result.page.rows.every((r) => /sympy/.test(r.prompt_id)));
    const bad = await post({ id: 4, method: 'explorer/query', params: { filter: {}, sort: { column: 'id;', descending: true }, offset: 0, limit: 5, withHistogram: true } });
    assert.equal(bad.status, 400);
    assert.deepEqual({ ...(JSON.parse(bad.body) as object), error: undefined }, { id: 4, code: 'invalid_params', error: undefined });
    assert.match(bad.body, /invalid parameters/);
    // The handler's own failure is an answer (with its reason), not a refused message.
    const failed = await post({ id: 5, method: 'explorer/openTrajectory', params: { id: 99_999_999 } });
    assert.equal(failed.status, 200);
    assert.deepEqual(JSON.parse(failed.body), { id: 5, error: 'no rollout with id 99999999', code: 'failed' });
    assert.equal((await post({ id: 6, method: 'explorer/nope', params: {} })).status, 400);
    assert.equal((await post({ method: 'explorer/query', params: {} })).status, 400, 'a request needs an id');
    assert.equal((await post({ method: 'explorer/refresh' }, 'text/plain')).status, 415, 'a cross-site form post (not JSON) is refused');
    assert.equal((await http(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' })).status, 400);
  });

  it('refuses requests without the token, with another Host, and paths outside its assets', async () => {
    const base = `http://127.0.0.1:${url.port}`;
    assert.equal((await http(`${base}/`)).status, 403);
    assert.equal((await http(`${base}/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/`)).status, 403);
    assert.match((await http(`${base}/wrong/api`, { method: 'POST' })).body, /needs the URL with its token/);
    assert.equal((await http(url.href, { headers: { host: `evil.example:${url.port}` } })).status, 403, 'DNS rebinding');
    assert.equal((await http(new URL('assets/explorer.js', url).href)).status, 200);
    assert.equal((await http(new URL('assets/theme.css', url).href)).status, 200);
    for (const p of ['assets/..%2F..%2Fpackage.json', 'assets/%2E%2E%2Fcli.js', 'assets/nothing.js', 'etc/passwd']) assert.equal((await http(new URL(p, url).href)).status, 404, p);
  });

  it('lets go of the store when an import in another process asks for it, then shows the new rows', async () => {
    // The viewer holds the store between requests (it would close it only after a minute idle).
    const before = await http(new URL('?run=swe', url).href);
    assert.equal(before.status, 200);
    const more = tempDir('evotrainer-view-more-');
    writeHostileTrajectory(more);
    const t0 = performance.now();
    const imported = spawnSync(process.execPath, [cli, 'import', path.join(more, 'trajs'), '--run', 'later', '--store', storeFile], { encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    assert.ok(performance.now() - t0 < 30_000);
    for (let i = 0; i < 50 && !/another process asked for the store/.test(stderr); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(stderr, /another process asked for the store/);
    const after = await http(new URL('?run=later', url).href);
    const state = JSON.parse(new RegExp(`id="${INITIAL_STATE_ID}" nonce="[^"]+">(.*?)</script>`, 's').exec(after.body)![1]!) as ExplorerState;
    assert.equal(state.page!.total, 1, 'the viewer opened the store again and reads the new run');
  });

  it('an import blocked by a process that does not let go says so after the wait, naming the store', async () => {
    const holder = tempDir('evotrainer-view-held-');
    const held = path.join(holder, 'store.duckdb');
    (await RolloutStore.open(held)).close();
    // A plain DuckDB process holding the file: it never reads release requests.
    const hold = spawn(process.execPath, ['-e', `const {DuckDBInstance}=require('@duckdb/node-api');DuckDBInstance.create(${JSON.stringify(held)}).then(()=>{process.stdout.write('held\\n');setInterval(()=>{},1000)})`], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => hold.stdout!.once('data', () => resolve()));
      const r = spawnSync(process.execPath, [cli, 'import', path.join(sweDir, 'trajs'), '--run', 'x', '--store', held], { encoding: 'utf8', env: { ...process.env, EVOTRAINER_STORE_WAIT_MS: '800' } });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /store\.duckdb: the rollout store is open in another process .*did not let go of it within 1 s/);
      assert.equal(existsSync(`${held}.release`), false, 'the request is taken back');
    } finally {
      hold.kill('SIGKILL');
    }
  });

  it('stops on SIGINT and releases the store', async () => {
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGINT');
    });
    assert.equal(code, 0, stderr);
    const s = await RolloutStore.open(storeFile);
    s.close();
  });

  it('says what is wrong with bad flags or a missing store', () => {
    const mode = spawnSync(process.execPath, [cli, 'view', '--store', storeFile, '--failure-mode', 'bogus'], { encoding: 'utf8' });
    assert.equal(mode.status, 2);
    assert.match(mode.stderr, /--failure-mode must be one of leak, .*; got "bogus"/);
    const missing = spawnSync(process.execPath, [cli, 'view', '--store', path.join(dir, 'none.duckdb')], { encoding: 'utf8' });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /no rollout store here; import rollouts first/);
  });
});
