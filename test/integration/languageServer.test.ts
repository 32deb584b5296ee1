import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { parse as parseYaml } from 'yaml';
import { RolloutStore } from '../../src/core/store/store';
import { commandMix, writeTrajectory } from '../helpers/synth';
import { repoRoot, tempDir } from '../helpers/tmp';

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface Diagnostic {
  range: Range;
  message: string;
  severity: number;
}
interface CompletionItem {
  label: string;
  textEdit?: { range: Range; newText: string };
}
interface Hover {
  contents: { kind: string; value: string };
  range?: Range;
}
interface Location {
  uri: string;
  range: Range;
}
interface CodeLens {
  range: Range;
  command: { title: string; command: string; arguments: { file: string; function: string }[] };
}

const write = (file: string, text: string) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
};

/** Where `needle` (the `nth` occurrence) starts in `text`, as an LSP position. */
function posOf(text: string, needle: string, nth = 0): Position {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(needle, at + 1);
  assert.ok(at >= 0, `"${needle}" not in the text`);
  const before = text.slice(0, at).split('\n');
  return { line: before.length - 1, character: before.at(-1)!.length };
}

/** A range over `needle` in `text`. */
function rangeOf(text: string, needle: string, nth = 0): Range {
  const start = posOf(text, needle, nth);
  return { start, end: { line: start.line, character: start.character + needle.length } };
}

/** A file name with quotes, shell metacharacters and a YAML comment sign. */
const ODD_NAME = `it's $(rm -rf x) #1: "v2".jsonl`;

const MANIFEST = `name: demo
domain: math
primary_metric: pass_rate
eval_set:
  path: data/eval.jsonl
thresholds:
  pass_rate: {warning: 0.9, op: '<'}
`;

describe('language server (dist/server.js over stdio)', () => {
  // A harness built here: a manifest, data, reward and filter code, its own metrics, and a
  // real rollout store (RolloutStore over generated trajectories: 3 of 5 resolved).
  const root = tempDir('evotrainer-lsp-');
  const bare = tempDir('evotrainer-lsp-bare-');
  const storeFile = path.join(root, '.evotrainer', 'store.duckdb');
  const uri = (rel: string, base = root) => pathToFileURL(path.join(base, rel)).href;

  const proc = spawn(process.execPath, [path.join(repoRoot, 'dist', 'server.js'), '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const published = new Map<string, (d: Diagnostic[]) => void>();
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => published.get(p.uri)?.(p.diagnostics));
  conn.listen();
  after(() => {
    conn.dispose();
    proc.kill();
  });

  let version = 1;
  const open = (docUri: string, text: string, languageId = 'yaml') =>
    new Promise<Diagnostic[]>((resolve) => {
      published.set(docUri, resolve);
      void conn.sendNotification('textDocument/didOpen', { textDocument: { uri: docUri, languageId, version: version++, text } });
    });
  /** Closes a document; its problems are withdrawn. */
  const close = (docUri: string) =>
    new Promise<Diagnostic[]>((resolve) => {
      published.set(docUri, resolve);
      void conn.sendNotification('textDocument/didClose', { textDocument: { uri: docUri } });
    });
  /** Opens a document and waits for the publication that `ready` accepts. */
  const openUntil = (docUri: string, text: string, languageId: string, ready: (d: Diagnostic[]) => boolean) =>
    new Promise<Diagnostic[]>((resolve) => {
      published.set(docUri, (d) => {
        if (ready(d)) resolve(d);
      });
      void conn.sendNotification('textDocument/didOpen', { textDocument: { uri: docUri, languageId, version: version++, text } });
    });
  /** Opens a document that publishes nothing (python), then waits for the server to have it. */
  const openQuiet = async (docUri: string, text: string, languageId: string) => {
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri: docUri, languageId, version: version++, text } });
  };
  const complete = async (docUri: string, position: Position) => {
    const r = (await conn.sendRequest('textDocument/completion', { textDocument: { uri: docUri }, position })) as CompletionItem[] | { items: CompletionItem[] } | null;
    return Array.isArray(r) ? r : (r?.items ?? []);
  };
  const labels = async (docUri: string, position: Position) => (await complete(docUri, position)).map((c) => c.label);
  const hover = async (docUri: string, position: Position) => (await conn.sendRequest('textDocument/hover', { textDocument: { uri: docUri }, position })) as Hover | null;

  before(async () => {
    write(path.join(root, 'evotrainer.yaml'), MANIFEST);
    write(path.join(root, 'data', 'eval.jsonl'), '{"q": 1}\n');
    write(path.join(root, 'data', ODD_NAME), '{"q": 2}\n');
    write(path.join(root, 'reward', 'README.md'), 'reward code\n');
    write(
      path.join(root, 'diagnostics', 'metrics', 'many_edits.sql'),
      '-- description: Share of trajectories editing more than once\n-- dimension: behavior\n-- unit: ratio\nselect id, (edits > 1)::int as value\nfrom rollout_features\n',
    );
    write(path.join(root, 'diagnostics', 'metrics', 'odd_text.sql'), '-- description: <img src=x onerror=alert(1)> [run](command:workbench.action.terminal.new) `x`\nselect 1 as value -- ```\n');
    write(path.join(root, 'diagnostics', 'metrics', 'scripted.py'), '# description: a script metric\nimport sys\nprint(\'{"value": 1}\')\n');
    const gen = tempDir('evotrainer-lsp-gen-');
    // Three resolved with two edits each, two unresolved with one edit.
    for (let k = 0; k < 5; k++) writeTrajectory(gen, `t-${k}`, { commands: commandMix(1, k < 3 ? 2 : 1, 1), resolved: k < 3 });
    const store = await RolloutStore.open(storeFile);
    await store.import([path.join(gen, 'trajs')], { run: 'run-1' });
    store.close();
    write(path.join(bare, 'evotrainer.yaml'), 'name: bare\ndomain: math\n');
  });

  it('initializes with the features it serves', async () => {
    const init = (await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} })) as { capabilities: Record<string, unknown> };
    assert.equal(init.capabilities.textDocumentSync, 2);
    assert.equal(init.capabilities.hoverProvider, true);
    assert.equal(init.capabilities.definitionProvider, true);
    assert.ok(init.capabilities.completionProvider);
    assert.ok(init.capabilities.codeLensProvider);
    await conn.sendNotification('initialized', {});
  });

  it('reports manifest problems with their position (untitled documents too)', async () => {
    const dup = await open('untitled:Untitled-1', 'name: a\ndomain: math\nname: b\n', 'evotrainer-manifest');
    assert.equal(dup.length, 1);
    assert.equal(dup[0]!.range.start.line, 2);
    assert.equal(dup[0]!.severity, 1);

    const missing = await open('file:///h2/evotrainer.yaml', 'name: a\n');
    assert.deepEqual(missing.map((d) => d.message), ['Missing required key "domain".']);

    const fine = await open(uri('evotrainer.yaml'), MANIFEST);
    assert.deepEqual(fine, []);
    await close(uri('evotrainer.yaml'));
  });

  it('underlines each broken manifest value and key exactly', async () => {
    const text = `name: demo
domain: math
autonomy: sometimes
jobs:
  train:
    command: bash train/run.sh
    timeout_minutes: -2
eval_set:
  path: data/eval.jsonl
  hash: sha256:xyz
primary_metrc: pass_rate
`;
    const ds = await open('file:///broken/evotrainer.yaml', text);
    const by = (re: RegExp) => ds.find((d) => re.test(d.message));
    assert.equal(ds.length, 4, JSON.stringify(ds));
    assert.deepEqual(by(/^autonomy/)!.range, rangeOf(text, 'sometimes'));
    assert.deepEqual(by(/^jobs\.train\.timeout_minutes/)!.range, rangeOf(text, '-2'));
    assert.deepEqual(by(/^eval_set\.hash/)!.range, rangeOf(text, 'sha256:xyz'));
    const unknown = by(/Unknown key "primary_metrc"/)!;
    assert.deepEqual(unknown.range, rangeOf(text, 'primary_metrc'));
    assert.equal(unknown.severity, 2, 'an unknown key is a warning');
    assert.equal(by(/^autonomy/)!.severity, 1);
  });

  it("warns on a manifest metric the harness does not have (primary_metric, thresholds keys)", async () => {
    const text = 'name: demo\ndomain: math\nprimary_metric: pass_rat\nthresholds:\n  many_edits: {warning: 0.5}\n  dead_groups: {warning: 0.3}\n';
    const ds = await open(uri('evotrainer.yaml'), text);
    assert.deepEqual(
      ds.map((d) => [d.severity, d.range, d.message]),
      [
        [2, rangeOf(text, 'pass_rat'), 'primary_metric: no metric "pass_rat" in the catalog nor in diagnostics/metrics'],
        [2, rangeOf(text, 'dead_groups'), 'thresholds.dead_groups: no metric of that name in the catalog nor in diagnostics/metrics; the threshold is never used'],
      ],
    );
    await close(uri('evotrainer.yaml'));
  });

  it('reports a broken rule at the metric or value at fault; harness metrics count as known', async () => {
    const text = `id: slow
when:
  all:
    - {metric: many_edits, op: '>', value: 0.5}
    - {metric: no_such_metric, op: '>', value: 1}
then: {title: Slow, severity: urgent, layer: behavior}
`;
    const ds = await open(uri('diagnostics/rules/slow.yaml'), text);
    assert.equal(ds.length, 2, JSON.stringify(ds));
    const unknown = ds.find((d) => /unknown metric "no_such_metric"/.test(d.message))!;
    assert.deepEqual(unknown.range, rangeOf(text, 'no_such_metric'));
    const sev = ds.find((d) => /then\.severity/.test(d.message))!;
    assert.deepEqual(sev.range, rangeOf(text, 'urgent'));
    assert.ok(ds.every((d) => d.severity === 1));

    // A duplicate key is a YAML error, at the second key.
    const dupText = 'id: x\nwhen: {metric: pass_rate, op: "<", value: 1}\nthen: {title: t, severity: info, layer: reward}\nid: y\n';
    const yamlError = await open(uri('diagnostics/rules/broken.yml'), dupText);
    assert.deepEqual(yamlError.map((d) => [d.message, d.range.start]), [['YAML: Map keys must be unique', posOf(dupText, 'id: y')]]);
    // `op: >` starts a YAML block scalar (an empty string): the value at fault is underlined.
    const blockText = 'when:\n  metric: pass_rate\n  op: >\n  value: 1\nthen: {title: t, severity: info, layer: reward}\n';
    const block = await open(uri('diagnostics/rules/block.yaml'), blockText);
    assert.equal(block.length, 1);
    assert.match(block[0]!.message, /"op" is one of > >= < <= == !=, got ""/);
    assert.deepEqual(block[0]!.range.start, posOf(blockText, '>'));

    const fine = await open(uri('diagnostics/rules/fine.yaml'), 'when: {metric: pass_rate, op: "<", value: 0.2}\nthen: {title: Low, severity: warning, layer: reward}\n');
    assert.deepEqual(fine, []);
  });

  it('reports a broken skill front matter at each key at fault', async () => {
    const text = `---
id: Bad Id
title: Filter dead groups
category: reward_hacking
trigger: dead_group_ratio > 0.5
domains: [math]
intervention:
  layer: filter
  factor: group_filter
  hypothesis: drop zero-variance groups
  target_metric: pass_rate
  success: pass_rate up
  source: {harness: h, domain: math, version: v3, branch: evo/v3, commit: abc}
validation: []
---

# Filter dead groups
`;
    const ds = await open(uri('skills/dead-groups.md'), text, 'markdown');
    const msgs = ds.map((d) => d.message);
    assert.equal(ds.length, 3, msgs.join('\n'));
    assert.deepEqual(ds.find((d) => /^front matter id:/.test(d.message))!.range, rangeOf(text, 'Bad Id'));
    assert.deepEqual(ds.find((d) => /^front matter category:/.test(d.message))!.range, rangeOf(text, 'reward_hacking'));
    const missing = ds.find((d) => /missing required key "expected_outcome"/.test(d.message))!;
    assert.equal(missing.range.start.line, 1, 'a missing key points at the front matter');

    const none = await open(uri('skills/plain.md'), '# no front matter\n', 'markdown');
    assert.match(none[0]!.message, /YAML front matter/);
  });

  it('reports metric file problems on their line', async () => {
    const text = '-- description: x\n-- unit: furlongs\nselect avg(reward) as value from rollouts\n';
    const ds = await open(uri('diagnostics/metrics/odd_unit.sql'), text, 'sql');
    assert.equal(ds.length, 1);
    assert.match(ds[0]!.message, /unknown unit "furlongs"/);
    assert.deepEqual(ds[0]!.range, rangeOf(text, '-- unit: furlongs'));
    assert.equal(ds[0]!.severity, 2, 'the metric still loads: a warning');

    const two = '-- description: two statements\nselect 1 as value;\nselect 2 as value\n';
    const d2 = await open(uri('diagnostics/metrics/two.sql'), two, 'sql');
    assert.match(d2[0]!.message, /more than one statement/);
    assert.equal(d2[0]!.range.start.line, 1);
    assert.equal(d2[0]!.severity, 1);

    const builtin = await open(uri('diagnostics/metrics/pass_rate.py'), 'print(1)\n', 'python');
    assert.match(builtin[0]!.message, /built-in metric; rename the file/);

    // On open (and save) a SQL metric is checked and run over the harness's store: what it may not read, and DuckDB's own errors, at their line.
    const typo = '-- description: a misspelt view\nselect id,\n       edits as value\n  from rollout_featurez\n';
    const sql = await openUntil(uri('diagnostics/metrics/typo.sql'), typo, 'sql', (d) => d.length > 0);
    assert.equal(sql.length, 1);
    assert.match(sql[0]!.message, /^reads "rollout_featurez", which is not one of the views .*; did you mean rollout_features\?/);
    assert.deepEqual(sql[0]!.range, rangeOf(typo, 'from rollout_featurez'));
  });

  it('completes metric names, operators and keys in rules', async () => {
    const text = 'id: r\nwhen:\n  all:\n    - {metric: , op: }\n    - metric: pass_rate\n      \nthen:\n  severity: \n';
    const docUri = uri('diagnostics/rules/typing.yaml');
    await open(docUri, text);
    const metrics = await labels(docUri, { ...posOf(text, ', op'), character: posOf(text, ', op').character });
    for (const m of ['pass_rate', 'dead_group_ratio', 'git_history_share', 'many_edits', 'scripted']) assert.ok(metrics.includes(m), `${m} in ${metrics.join(',')}`);
    const ops = await labels(docUri, { line: 3, character: posOf(text, 'op: }').character + 4 });
    assert.deepEqual(ops, ['>', '>=', '<', '<=', '==', '!=']);
    const keys = await labels(docUri, { line: 5, character: 6 });
    assert.deepEqual(keys, ['metric', 'op', 'value', 'trend', 'over', 'all', 'any', 'not']);
    assert.deepEqual(await labels(docUri, { line: 7, character: 12 }), ['info', 'warning', 'critical']);
  });

  it('completes manifest keys, threshold keys and operators, metric names and paths', async () => {
    const text = `name: demo
domain: math
primary_metric: 
thresholds:
  dead_group_ratio:
    op: 
  
eval_set:
  path: da
action_boundary:
  editable:
    - re
autonomy: 
`;
    const docUri = uri('evotrainer.yaml');
    await open(docUri, text, 'evotrainer-manifest');
    const top = await labels(docUri, { line: 1, character: 0 });
    for (const k of ['name', 'domain', 'primary_metric', 'eval_set', 'action_boundary', 'thresholds', 'cluster', 'autonomy']) assert.ok(top.includes(k), k);
    assert.ok((await labels(docUri, { line: 2, character: 16 })).includes('dead_group_ratio'));
    assert.deepEqual(await labels(docUri, { line: 5, character: 8 }), ['>', '>=', '<', '<=']);
    const thresholdKeys = await labels(docUri, { line: 5, character: 4 });
    assert.deepEqual(thresholdKeys.sort(), ['critical', 'op', 'warning']);
    const metricKeys = await complete(docUri, { line: 6, character: 2 });
    assert.ok(metricKeys.some((c) => c.label === 'reward_spread' && c.textEdit?.newText === 'reward_spread:'));
    assert.ok(metricKeys.some((c) => c.label === 'many_edits'));
    const evalPath = await complete(docUri, { line: 8, character: 10 });
    const data = evalPath.find((c) => c.label === 'data/')!;
    assert.ok(data, evalPath.map((c) => c.label).join(','));
    assert.deepEqual(data.textEdit!.range, { start: { line: 8, character: 8 }, end: { line: 8, character: 10 } });
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: docUri, version: version++ }, contentChanges: [{ text: text.replace('path: da', 'path: data/') }] });
    const inData = await complete(docUri, { line: 8, character: 13 });
    assert.deepEqual(inData.map((c) => c.label).sort(), ['data/eval.jsonl', `data/${ODD_NAME}`]);
    assert.equal(inData.find((c) => c.label === 'data/eval.jsonl')!.textEdit!.newText, 'data/eval.jsonl');
    // The odd name is inserted as a YAML string that reads back as exactly that path.
    const odd = inData.find((c) => c.label.startsWith('data/it'))!.textEdit!.newText;
    assert.equal((parseYaml(`path: ${odd}\n`) as { path: string }).path, `data/${ODD_NAME}`);
    const editable = await labels(docUri, { line: 11, character: 8 });
    assert.ok(editable.includes('reward/') && editable.includes('diagnostics/') && !editable.includes('.git'), editable.join(','));
    assert.deepEqual(await labels(docUri, { line: 12, character: 10 }), ['manual', 'human_gated', 'autonomous']);
  });

  it('completes a metric file header', async () => {
    const text = '-- description: x\n-- dimension: \n-- \nselect 1 as value\n';
    const docUri = uri('diagnostics/metrics/header.sql');
    await open(docUri, text, 'sql');
    assert.ok((await labels(docUri, { line: 1, character: 14 })).includes('efficiency'));
    assert.ok((await labels(docUri, { line: 2, character: 3 })).includes('unit'));
    assert.deepEqual(await labels(docUri, { line: 3, character: 5 }), []);
  });

  it("hovers a metric with its definition and its latest value from the harness's store", async () => {
    const text = 'when:\n  any:\n    - {metric: pass_rate, op: "<", value: 0.5}\n    - metric: many_edits\n      op: ">"\n      value: 0.1\n    - {metric: scripted, op: ">", value: 0}\nthen: {title: T, severity: info, layer: reward}\n';
    const docUri = uri('diagnostics/rules/hover.yaml');
    await open(docUri, text);
    const pass = (await hover(docUri, posOf(text, 'pass_rate')))!;
    assert.deepEqual(pass.range, rangeOf(text, 'pass_rate'));
    const md = pass.contents.value;
    assert.match(md, /\*\*pass\\_rate\*\* · built-in metric · results · ratio/);
    assert.match(md, /Avg@k/);
    assert.match(md, /avg\(correct::int\)/, 'the definition (SQL)');
    // 3 of 5 resolved; the manifest's threshold (warning when < 0.9) fires.
    assert.match(md, /Latest value: \*\*0\.6\*\* \(warning\) — run run-1, 5 rollouts/);
    assert.match(md, /Thresholds: warning < 0\.9 \(evotrainer\.yaml\)/);

    const user = (await hover(docUri, posOf(text, 'many_edits')))!.contents.value;
    assert.match(user, /harness metric \(many\\_edits\.sql\)/);
    assert.match(user, /Latest value: \*\*0\.6\*\*/, 'three of five trajectories edit twice');
    assert.match(user, /\(edits > 1\)::int as value/);

    // Harness-written text is shown, never interpreted: no HTML, no link, the fence holds.
    const oddUri = uri('diagnostics/rules/odd.yaml');
    const oddText = 'when: {metric: odd_text, op: ">", value: 0}\nthen: {title: T, severity: info, layer: reward}\n';
    await open(oddUri, oddText);
    const odd = (await hover(oddUri, posOf(oddText, 'odd_text')))!.contents.value;
    assert.ok(odd.includes('\\<img src=x onerror=alert(1)\\> \\[run\\](command:workbench.action.terminal.new) \\`x\\`'), odd);
    assert.ok(odd.includes('\n````sql\n') && odd.endsWith('select 1 as value -- ```\n````'), odd);

    const script = (await hover(docUri, posOf(text, 'scripted')))!.contents.value;
    assert.match(script, /does not run harness code/);

    // The store is closed between reads: a writer (this process) opens it and imports a new run.
    const gen = tempDir('evotrainer-lsp-gen2-');
    for (let k = 0; k < 4; k++) writeTrajectory(gen, `u-${k}`, { commands: commandMix(1, 1, 1), resolved: true });
    const store = await RolloutStore.open(storeFile);
    await store.import([path.join(gen, 'trajs')], { run: 'run-2' });
    store.close();
    const again = (await hover(docUri, posOf(text, 'pass_rate')))!.contents.value;
    assert.match(again, /Latest value: \*\*1\*\* — run run-2, 4 rollouts/);

    // While a writer holds the store the hover says so (and keeps nothing stale); after, values return.
    const writer = await RolloutStore.open(storeFile);
    try {
      const busy = (await hover(docUri, posOf(text, 'many_edits')))!.contents.value;
      assert.match(busy, /Latest value: no value now: .*open in another process/);
    } finally {
      writer.close();
    }
    assert.match((await hover(docUri, posOf(text, 'many_edits')))!.contents.value, /Latest value: \*\*0\*\* — run run-2/);

    // A harness without a store.
    const bareUri = uri('diagnostics/rules/r.yaml', bare);
    const bareText = 'when: {metric: dead_group_ratio, op: ">", value: 0.5}\nthen: {title: T, severity: info, layer: reward}\n';
    await open(bareUri, bareText);
    const none = (await hover(bareUri, posOf(bareText, 'dead_group')))!.contents.value;
    assert.match(none, /Latest value: no value yet \(no rollout store/);
    assert.match(none, /Thresholds: critical > 0\.5, warning > 0\.3/);

    // Not a metric reference: nothing.
    assert.equal(await hover(docUri, posOf(text, 'severity')), null);
  });

  it('hovers manifest keys and metric references in the manifest', async () => {
    const docUri = uri('evotrainer.yaml');
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: docUri, version: version++ }, contentChanges: [{ text: MANIFEST }] });
    const key = (await hover(docUri, posOf(MANIFEST, 'eval_set')))!.contents.value;
    assert.match(key, /eval-set pin/);
    assert.match((await hover(docUri, { ...posOf(MANIFEST, 'pass_rate'), character: 17 }))!.contents.value, /Avg@k/);
    assert.match((await hover(docUri, posOf(MANIFEST, 'pass_rate', 1)))!.contents.value, /Avg@k/, 'a thresholds key');
  });

  it('goes from a metric reference to its definition: the metric file, or the built-in catalog document', async () => {
    const text = 'when:\n  all:\n    - {metric: many_edits, op: ">", value: 0.5}\n    - {metric: dead_group_ratio, op: ">", value: 0.5}\nthen: {title: T, severity: info, layer: reward}\n';
    const docUri = uri('diagnostics/rules/defs.yaml');
    await open(docUri, text);
    const def = async (p: Position) => (await conn.sendRequest('textDocument/definition', { textDocument: { uri: docUri }, position: p })) as Location | null;
    const user = (await def(posOf(text, 'many_edits')))!;
    assert.equal(user.uri, uri('diagnostics/metrics/many_edits.sql'));
    assert.deepEqual(user.range.start, { line: 0, character: 0 });
    const builtin = (await def(posOf(text, 'dead_group_ratio')))!;
    assert.equal(builtin.uri, 'evotrainer-catalog:/builtin-metrics.yaml');
    const { text: catalog } = (await conn.sendRequest('evotrainer/builtinMetrics')) as { text: string };
    const lines = catalog.split('\n');
    assert.equal(lines[builtin.range.start.line], 'dead_group_ratio:');
    assert.match(lines.slice(builtin.range.start.line, builtin.range.start.line + 8).join('\n'), /sql: avg\(\(v = 0\)::int\) filter \(where n >= 2\)/);
    assert.equal(await def(posOf(text, 'severity')), null);
  });

  it('puts "Backtest this change" on reward and filter functions only', async () => {
    const reward = `import re

def _extract(s):
    return s

def compute_score(data_source, solution_str, ground_truth,
                  extra_info=None):
    return {"score": 1.0}

def format_reward(completions, **kwargs):
    return [1.0 for _ in completions]

class Helper:
    def compute_score(self):
        pass
`;
    const lenses = async (docUri: string) => (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: docUri } })) as CodeLens[];
    const rewardUri = uri('reward/math_reward.py');
    await openQuiet(rewardUri, reward, 'python');
    const r = await lenses(rewardUri);
    assert.deepEqual(
      r.map((l) => [l.range.start.line, l.command.title, l.command.command, l.command.arguments[0]]),
      [
        [5, 'Backtest this change', 'evotrainer.backtestVersion', { file: path.join(root, 'reward', 'math_reward.py'), function: 'compute_score' }],
        [9, 'Backtest this change', 'evotrainer.backtestVersion', { file: path.join(root, 'reward', 'math_reward.py'), function: 'format_reward' }],
      ],
    );
    const filterUri = uri('filters/groups.py');
    await openQuiet(filterUri, 'def keep_group(group):\n    return True\n\ndef keep_trajectory(t):\n    return True\n\ndef other(x):\n    return x\n', 'python');
    assert.deepEqual((await lenses(filterUri)).map((l) => l.command.arguments[0]!.function), ['keep_group', 'keep_trajectory']);
    const elsewhere = uri('train/launch.py');
    await openQuiet(elsewhere, 'def compute_score(a, b, c):\n    pass\n', 'python');
    assert.deepEqual(await lenses(elsewhere), []);
  });
});
