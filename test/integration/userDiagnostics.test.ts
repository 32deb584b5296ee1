import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { computeHealth } from '../../src/core/diagnose/health';
import { evaluateUserDiagnostics, formatProblem, parseUserMetric, parseUserRules, UNTRUSTED_SCRIPT } from '../../src/core/diagnose/userDiagnostics';
import { RolloutStore } from '../../src/core/store/store';
import { requireSharedData, sweDir } from '../helpers/data';
import { commandMix, writeTrajectory } from '../helpers/synth';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/** test/fixtures/diagnostics/user-harness: two working metrics, two broken ones, two working rules, two broken ones. */
const harness = path.join(repoRoot, 'test', 'fixtures', 'diagnostics', 'user-harness');
const rel = (f: string) => path.relative(harness, f);

describe('user metrics and rules on the real SWE set', () => {
  let store: RolloutStore;
  before(async () => {
    store = await RolloutStore.open(':memory:');
    await store.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    // Another run in the same store: scoped metrics must not see it.
    const gen = tempDir('evotrainer-user-gen-');
    for (let k = 0; k < 5; k++) writeTrajectory(gen, `gen-${k}`, { commands: commandMix(1, 1, 1), resolved: true });
    await store.import([path.join(gen, 'trajs')], { run: 'gen' });
  });
  after(() => store.close());

  it('runs script metrics (python3 over the scoped features on stdin); a failing script is reported with its line', async () => {
    const root = tempDir('evotrainer-user-py-');
    mkdirSync(path.join(root, 'diagnostics', 'metrics'), { recursive: true });
    writeFileSync(
      path.join(root, 'diagnostics', 'metrics', 'edits_per_turn.py'),
      '# description: Edits per agent turn\n# dimension: behavior\n# warning: > 0.5\nimport json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    if r["assistant_turns"]:\n        print(json.dumps({"id": r["id"], "value": r["edits"] / r["assistant_turns"]}))\n',
    );
    writeFileSync(path.join(root, 'diagnostics', 'metrics', 'crashes.py'), 'import sys\nrows = sys.stdin.read()\nraise ValueError("no such column")\n');
    // harness code: not run without the user's consent, each script reported with how to allow it
    const untrusted = await evaluateUserDiagnostics(store, root, { run: 'swe' });
    assert.deepEqual(untrusted.metrics, []);
    assert.deepEqual(untrusted.problems.map((p) => [path.basename(p.file), p.message]), [['crashes.py', UNTRUSTED_SCRIPT], ['edits_per_turn.py', UNTRUSTED_SCRIPT]]);
    const r = await evaluateUserDiagnostics(store, root, { run: 'swe' }, { trust: true });
    const expected = (await store.one<{ v: number }>(`select avg(edits::double / assistant_turns) as v from rollout_features where run_id = 'swe' and assistant_turns > 0`))!.v;
    const m = r.metrics.find((x) => x.name === 'edits_per_turn')!;
    assert.ok(Math.abs(m.value! - expected) < 1e-9, `${m.value} vs ${expected}`);
    assert.equal(m.description, 'Edits per agent turn');
    const crash = r.problems.find((p) => p.file.endsWith('crashes.py'))!;
    assert.equal(crash.line, 3);
    assert.match(crash.message, /ValueError: no such column/);
  });

  it('evaluates working metrics and rules next to the built-ins; broken files are reported with file (and line), the rest still runs', async () => {
    const files = readdirSync(path.join(sweDir, 'trajs'));
    const long = files.filter((f) => (JSON.parse(readFileSync(path.join(sweDir, 'trajs', f), 'utf8')) as { messages: { role: string }[] }).messages.filter((m) => m.role === 'assistant').length > 30).length;
    const resolved = (JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { resolved: boolean }[] }).instances.filter((i) => i.resolved).length;

    const r = await evaluateUserDiagnostics(store, harness, { run: 'swe' });
    const metric = (n: string) => r.metrics.find((m) => m.name === n);
    // Per-rollout metric: the mean of its rows, checked against a count from the trajectory files.
    assert.ok(Math.abs(metric('long_trajectory')!.value! - long / files.length) < 1e-12, `${metric('long_trajectory')!.value} vs ${long}/${files.length}`);
    assert.equal(metric('long_trajectory')!.dimension, 'efficiency');
    // Aggregate metric, scoped to the run (the 'gen' run's five resolved rollouts are not counted).
    assert.ok(Math.abs(metric('resolved_share')!.value! - resolved / files.length) < 1e-12);
    assert.equal(metric('resolved_share')!.status, 'warning', 'its header threshold "< 0.8" fires');
    assert.deepEqual(metric('resolved_share')!.threshold, { severity: 'warning', op: '<', value: 0.8 });
    const whole = await evaluateUserDiagnostics(store, harness, {});
    assert.ok(Math.abs(whole.metrics.find((m) => m.name === 'resolved_share')!.value! - (resolved + 5) / (files.length + 5)) < 1e-12, 'unscoped sees both runs');
    assert.equal((await store.one<{ n: number }>('select count(*) as n from rollouts'))!.n, files.length + 5, 'the scoped views are gone afterwards');

    // The working rule fires with its evidence; the quiet one does not.
    assert.deepEqual(r.findings.map((f) => f.rule), ['long-trajectories-fail']);
    const f = r.findings[0]!;
    assert.equal(f.severity, 'warning');
    assert.equal(f.title, 'Most trajectories are long and many fail');
    assert.deepEqual(f.evidence.map((e) => e.metric), ['long_trajectory', 'pass_rate']);
    assert.match(f.suggestion!, /Suggested layer: environment \(turn limit\)/);
    assert.deepEqual(r.loaded.rules, ['long-trajectories-fail', 'collapsed-pass-rate']);

    const problems = r.problems.map((p) => `${rel(p.file)}${p.line ? `:${p.line}` : ''}${p.column ? `:${p.column}` : ''}: ${p.message}`);
    assert.equal(problems.length, 4, problems.join('\n'));
    assert.ok(problems.some((p) => /^diagnostics\/metrics\/broken_table\.sql:4: reads "rollout_featurez", which is not one of the views rollouts, steps and rollout_features/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /^diagnostics\/metrics\/no_value\.sql: returns no "value" column/.test(p)));
    assert.ok(problems.some((p) => /^diagnostics\/rules\/broken_yaml\.yaml:6:1: YAML: /.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /^diagnostics\/rules\/unknown_metric\.yaml:3:11: rule "typo": unknown metric "pass_rat"/.test(p)));
    assert.match(formatProblem(r.problems[0]!), /broken_table\.sql:4: /);
  });

  it('reuses a health report the caller already has', async () => {
    const health = await computeHealth(store, { run: 'swe' });
    health.metrics = health.metrics.map((m) => (m.name === 'pass_rate' ? { ...m, value: 0.95 } : m));
    const r = await evaluateUserDiagnostics(store, harness, { run: 'swe' }, { health });
    assert.deepEqual(r.findings, [], 'with pass_rate 0.95 (given) the rule does not fire');
  });
});

describe('user rules: parsing and trends', () => {
  const known = new Set(['pass_rate', 'turns', 'my_metric']);

  it('reports schema errors at their line and column', () => {
    const text = ['- id: a', '  when: {metric: turns, trend: sideways}', '  then: {title: t, severity: warning, layer: x}', '- id: b', '  when:', '    all: []', '  then: {title: t, severity: loud, layer: x}', '- id: c', '  when: {metric: turns, trend: rising over 4}', '  then: {title: ok, severity: info, layer: behavior}'].join('\n');
    const r = parseUserRules('/h/r.yaml', text, known);
    assert.deepEqual(r.rules.map((x) => x.id), ['c']);
    assert.deepEqual(r.rules[0]!.when, { kind: 'trend', metric: 'turns', direction: 'rising', over: 4, line: 9 });
    const p = r.problems.map((x) => `${x.line}:${x.column} ${x.message}`);
    assert.ok(p.some((x) => /^2:32 rule "a": trend is "rising" or "falling"/.test(x)), p.join('\n'));
    assert.ok(p.some((x) => /^6:10 rule "b": "all" takes a non-empty list/.test(x)), p.join('\n'));
    assert.ok(p.some((x) => /^7:30 rule "b": then.severity is one of info, warning, critical/.test(x)), p.join('\n'));
  });

  it('user metric headers and statement checks', () => {
    const ok = parseUserMetric('/h/m.sql', '-- unit: turns\n-- warning: >= 3\nselect 1 as value;\n');
    assert.equal(ok.metric!.unit, 'turns');
    assert.deepEqual(ok.metric!.thresholds, [{ severity: 'warning', op: '>=', value: 3 }]);
    assert.equal(ok.metric!.sql.trim().endsWith(';'), false);
    const two = parseUserMetric('/h/m.sql', 'select 1 as value;\ndelete from rollouts;\n');
    assert.match(two.problems[0]!.message, /more than one statement/);
    assert.equal(parseUserMetric('/h/m.sql', "select ';' as value").problems.length, 0, 'a ; inside a string is fine');
    assert.match(parseUserMetric('/h/m.sql', 'drop table rollouts').problems[0]!.message, /must be one SELECT/);
    assert.equal(parseUserMetric('/h/m.sql', '-- unit: furlongs\nselect 1 as value').problems[0]!.line, 1);
    assert.match(parseUserMetric('/h/pass_rate.sql', 'select 1 as value').problems[0]!.message, /is a built-in metric/);
  });

  it('a trend rule over a user metric fires when it rises across versions, and not when it falls', async () => {
    const build = async (turnsByVersion: number[]) => {
      const store = await RolloutStore.open(':memory:');
      const root = tempDir('evotrainer-user-trend-');
      for (const [i, n] of turnsByVersion.entries()) {
        const dir = path.join(root, `v${i + 1}`);
        for (let k = 0; k < 4; k++) writeTrajectory(dir, `t-${i}-${k}`, { commands: commandMix(n, 2, 2), resolved: k % 2 === 0 });
        await store.import([path.join(dir, 'trajs')], { run: 'r', version: `v${i + 1}` });
      }
      const h = path.join(root, 'harness');
      mkdirSync(path.join(h, 'diagnostics', 'metrics'), { recursive: true });
      mkdirSync(path.join(h, 'diagnostics', 'rules'), { recursive: true });
      writeFileSync(path.join(h, 'diagnostics', 'metrics', 'search_calls.sql'), '-- unit: count\nselect id, searches as value from rollout_features\n');
      writeFileSync(
        path.join(h, 'diagnostics', 'rules', 'searching.yaml'),
        'id: search-spiral\nwhen:\n  all:\n    - {metric: search_calls, trend: rising, over: 3}\n    - not: {metric: pass_rate, op: ">", value: 0.9}\nthen: {title: Searching more and more, severity: warning, layer: behavior}\n',
      );
      const r = await evaluateUserDiagnostics(store, h, { run: 'r' });
      store.close();
      return r;
    };
    const rising = await build([2, 5, 9]);
    assert.deepEqual(rising.findings.map((f) => f.rule), ['search-spiral']);
    assert.match(rising.findings[0]!.suggestion!, /search_calls rising over 3: 2 → 5 → 9/);
    assert.equal(rising.metrics.find((m) => m.name === 'search_calls')!.value, (2 + 5 + 9) / 3);
    const falling = await build([9, 5, 2]);
    assert.deepEqual(falling.findings, []);
    const short = await build([2, 5]);
    assert.deepEqual(short.findings, []);
    assert.match(short.notes[0]!, /search-spiral .* undecided: search_calls has 2 evaluation\(s\), the trend needs 3/);
  });
});

describe('SQL metrics read only the rollout views (a harness is not trusted to read files)', () => {
  let store: RolloutStore;
  let secretDir: string;
  const SECRET = 'TOKEN-5f1e0c-do-not-leak';
  before(async () => {
    store = await RolloutStore.open(':memory:');
    const gen = tempDir('evotrainer-user-sql-');
    for (let k = 0; k < 3; k++) writeTrajectory(gen, `gen-${k}`, { commands: commandMix(1, 1, 1), resolved: k > 0 });
    await store.import([path.join(gen, 'trajs')], { run: 'gen' });
    secretDir = tempDir('evotrainer-secret-');
    writeFileSync(path.join(secretDir, 'id_key'), `${SECRET}\n`);
    writeFileSync(path.join(secretDir, 'creds.csv'), `value\n${SECRET}\n`);
    writeFileSync(path.join(secretDir, 'creds.json'), `{"value": "${SECRET}"}\n`);
  });
  after(() => store.close());

  it('refuses every route to a file, a table function or the session, at its line; nothing of the file reaches the report', async () => {
    const f = (name: string) => path.join(secretDir, name).replace(/'/g, "''");
    // One file per route: each must be refused on its own (a check that stops at the first would pass the rest).
    const hostile: Record<string, string> = {
      read_text: `select length(content) as value from read_text('${f('id_key')}')`,
      replacement_scan: `select count(*) as value from '${f('creds.csv')}'`,
      json_scan: `select count(*) as value\nfrom rollouts, '${f('creds.json')}'`,
      in_subquery: `select id, 1 as value from rollouts\nwhere exists (select 1 from read_csv('${f('creds.csv')}') where value like 'TOKEN%')`,
      scalar_subquery: `select (select max(length(content)) from read_blob('${f('id_key')}')) as value`,
      cte: `with s as (select * from read_json('${f('creds.json')}'))\nselect count(*) as value from s`,
      glob: `select count(*) as value from glob('${f('*')}')`,
      query_fn: `select count(*) as value from query('select 1')`,
      settings: `select count(*) as value from duckdb_settings()`,
      secrets: `select count(*) as value from duckdb_secrets()`,
      qualified: `select count(*) as value from main.rollout_rows`,
      other_table: `select count(*) as value from imports`,
      session: `select length(current_setting('temp_directory')) as value`,
      union_arm: `select 1 as value from rollouts union all select 1 from read_text('${f('id_key')}')`,
      lateral: `select count(*) as value from rollouts r, lateral (select * from read_text('${f('id_key')}'))`,
    };
    const root = tempDir('evotrainer-user-hostile-');
    const dir = path.join(root, 'diagnostics', 'metrics');
    mkdirSync(dir, { recursive: true });
    for (const [name, sql] of Object.entries(hostile)) writeFileSync(path.join(dir, `${name}.sql`), `-- description: ${name}\n${sql}\n`);
    writeFileSync(path.join(dir, 'fine.sql'), 'with t as (select id, assistant_turns from rollout_features)\nselect r.id, (t.assistant_turns > 1)::int as value from rollouts r join t using (id)\nwhere r.id in (select id from steps)\n');
    const r = await evaluateUserDiagnostics(store, root, { run: 'gen' });
    assert.deepEqual(r.metrics.map((m) => m.name), ['fine'], JSON.stringify(r.problems.find((p) => p.file.endsWith('fine.sql'))));
    assert.equal(r.metrics[0]!.value !== null, true);
    const byFile = new Map(r.problems.map((p) => [path.basename(p.file, '.sql'), p]));
    for (const name of Object.keys(hostile)) {
      const p = byFile.get(name);
      assert.ok(p, `${name}: not refused`);
      assert.match(p.message, /reads only rollouts, steps and rollout_features|not one of the views|reads the session/, `${name}: ${p.message}`);
    }
    // The refusal points at the line that reads the file (line 1 is the header).
    assert.equal(byFile.get('json_scan')!.line, 3);
    assert.equal(byFile.get('in_subquery')!.line, 3);
    assert.match(byFile.get('read_text')!.message, /table function read_text\(\)/);
    assert.match(byFile.get('qualified')!.message, /"main\.rollout_rows"/);
    assert.doesNotMatch(JSON.stringify(r), new RegExp(SECRET));
  });

  it('a syntax error is still reported by DuckDB at its line', async () => {
    const root = tempDir('evotrainer-user-syntax-');
    mkdirSync(path.join(root, 'diagnostics', 'metrics'), { recursive: true });
    writeFileSync(path.join(root, 'diagnostics', 'metrics', 'typo.sql'), 'select id, 1 as value\nfrom rollouts\nwher id > 1\n');
    const r = await evaluateUserDiagnostics(store, root, { run: 'gen' });
    assert.equal(r.metrics.length, 0);
    assert.match(r.problems[0]!.message, /SQL error: .*syntax error/i);
  });
});
