import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadRubric, runJudge } from '../../src/core/diagnose/judges';
import { loadLabels, parseLabels, scoreClassifier, scoreLabels, type ClassifierScore } from '../../src/core/diagnose/labels';
import { OpenAiChatModel } from '../../src/core/llm/openai';
import { RolloutStore } from '../../src/core/store/store';
import { requireSharedData, sweDir } from '../helpers/data';
import { startScriptedLlm, trajectoryBlock, type ScriptedLlm } from '../helpers/scriptedLlm';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/**
 * Hand-made labels (test/fixtures/diagnostics/labels-harness/labels/*.jsonl) of eight real
 * SWE rollouts, two of them deliberately disagreeing with the built-in classifier, scored
 * against it and against a judge (answered by a scripted OpenAI-compatible stand-in LLM).
 */
/** Runs a CLI command's export in a child process (tsx), as the CLI would: stdout, stderr, exit code. */
function runCommand(module: string, exportName: string, flags: Record<string, string | boolean>, positionals: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `const m = require(${JSON.stringify(path.join(repoRoot, module))}); m[${JSON.stringify(exportName)}].run(${JSON.stringify(flags)}, ${JSON.stringify(positionals)}).then((c) => { process.exitCode = c; }, (e) => { process.stderr.write(String(e && e.message)); process.exitCode = 1; });`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: repoRoot, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const fixture = path.join(repoRoot, 'test', 'fixtures', 'diagnostics', 'labels-harness');
const harness = tempDir('evotrainer-labels-');
cpSync(fixture, harness, { recursive: true });

const trajOf = (id: string) => JSON.parse(readFileSync(path.join(sweDir, 'trajs', `${id}.traj.json`), 'utf8')) as { messages: { role: string; content: string }[] };
const resolved = new Map((JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { instance_id: string; resolved: boolean }[] }).instances.map((i) => [i.instance_id, i.resolved]));
const cls = (c: ClassifierScore, label: string) => c.classes.find((k) => k.label === label)!;
const near = (a: number | null, b: number | null, what: string) => assert.ok(a === b || (a !== null && b !== null && Math.abs(a - b) < 1e-9), `${what}: ${a} vs ${b}`);

describe('labels: precision and recall against hand labels of real SWE rollouts', () => {
  let store: RolloutStore;
  let llm: ScriptedLlm;
  before(async () => {
    store = await RolloutStore.open(':memory:');
    await store.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    // The stand-in judge: leak when it sees a git-history command, else success / wrong_answer by outcome.
    llm = await startScriptedLlm((req) => {
      const turns = (trajectoryBlock(req)?.text ?? '').split(/\n\n(?=\[turn \d+\] )/);
      const leak = turns.some((t) => t.startsWith('[turn') && / \(assistant\)\n/.test(t.split('\n')[0]! + '\n') && /```(?:bash)?\s*\n[^`]*\bgit\s+(log|show|blame|reflog)\b/.test(t));
      const label = leak ? 'leak' : /outcome correct/.test(req.user) ? 'success' : 'wrong_answer';
      return { content: JSON.stringify({ label, explanation: 'scripted', cited_turns: [] }) };
    });
  });
  after(async () => {
    await llm.close();
    store.close();
  });

  it('the labelled rollouts are what the test assumes (checked from the trajectory files)', () => {
    const gitHistory = (id: string) => trajOf(id).messages.some((m) => m.role === 'assistant' && /```(?:bash)?\s*\n[^`]*\bgit\s+(log|show|blame|reflog|rev-list|whatchanged|cat-file)\b/.test(m.content));
    const badFormat = (id: string) => trajOf(id).messages.filter((m, i) => i >= 2 && m.role === 'assistant' && (m.content.match(/```(?:bash|sh|shell)?[ \t]*\r?\n[\s\S]*?```/g) ?? []).length !== 1).length;
    assert.ok(gitHistory('sympy__sympy-13031') && resolved.get('sympy__sympy-13031') === true);
    assert.ok(gitHistory('django__django-13513') && resolved.get('django__django-13513') === false);
    for (const id of ['astropy__astropy-7606', 'astropy__astropy-8872']) assert.ok(!gitHistory(id) && resolved.get(id) === false && badFormat(id) >= 3, `${id} is a format-error loop`);
    for (const id of ['django__django-11276', 'django__django-13512']) assert.ok(!gitHistory(id) && resolved.get(id) === false && badFormat(id) < 3, `${id} fails without a format loop`);
    for (const id of ['astropy__astropy-12907', 'astropy__astropy-7166']) assert.ok(!gitHistory(id) && resolved.get(id) === true);
  });

  it('loads labels, reporting bad lines with file:line while the rest load', () => {
    const l = loadLabels(harness);
    assert.equal(l.files.length, 2);
    assert.equal(l.labels.length, 9);
    const probs = l.problems.map((p) => `${path.basename(p.file)}:${p.line}: ${p.message}`);
    assert.equal(probs.length, 3, probs.join('\n'));
    assert.match(probs[0]!, /^ana\.jsonl:3: not valid JSON/);
    assert.match(probs[1]!, /^ben\.jsonl:5: names no rollout/);
    assert.match(probs[2]!, /^ben\.jsonl:6: "failure_mode"/);
    assert.equal(l.labels.find((x) => x.promptId === 'django__django-13512')!.failureMode, 'test_never_run', 'labels are normalized');
    assert.equal(parseLabels('f.jsonl', '\n\n').labels.length, 0);
  });

  it('scores the built-in failure-mode classifier and a judge against the labels', async () => {
    const rubric = loadRubric(path.join(harness, 'diagnostics', 'judges', 'ending.md'));
    const ids = (await store.all<{ id: number }>(
      `select id from rollouts where prompt_id in ('sympy__sympy-13031', 'django__django-13513', 'django__django-11276', 'django__django-13512', 'astropy__astropy-7606', 'astropy__astropy-8872', 'astropy__astropy-12907', 'astropy__astropy-7166') order by id`,
    )).map((r) => Number(r.id));
    const run = await runJudge(store, rubric, new OpenAiChatModel({ endpoint: llm.url, model: 'stand-in' }), { rolloutIds: ids });
    assert.equal(run.errors, 0);

    const report = await scoreLabels(store, harness);
    assert.equal(report.labels, 9);
    assert.equal(report.labelledRollouts, 8);
    assert.ok(report.problems.some((p) => path.basename(p.file) === 'ana.jsonl' && p.line === 6 && /task nonexistent__task-1 matches no rollout/.test(p.message)));

    const fm = report.classifiers.find((c) => c.classifier === 'failure_modes')!;
    assert.equal(fm.n, 8);
    near(fm.accuracy, 6 / 8, 'accuracy');
    // leak: 2 of 2 right; success: 2 of 2.
    for (const k of ['leak', 'success']) {
      near(cls(fm, k).precision, 1, `${k} precision`);
      near(cls(fm, k).recall, 1, `${k} recall`);
    }
    // format_error_loop predicted for 7606 and 8872; the human says 8872 is a wrong answer.
    near(cls(fm, 'format_error_loop').precision, 1 / 2, 'format_error_loop precision');
    near(cls(fm, 'format_error_loop').recall, 1, 'format_error_loop recall');
    near(cls(fm, 'format_error_loop').f1, 2 / 3, 'format_error_loop F1');
    // wrong_answer predicted for 11276 and 13512; human wrong answers are 11276 and 8872.
    near(cls(fm, 'wrong_answer').precision, 1 / 2, 'wrong_answer precision');
    near(cls(fm, 'wrong_answer').recall, 1 / 2, 'wrong_answer recall');
    // test_never_run: the human saw it, the classifier never says it here.
    near(cls(fm, 'test_never_run').precision, null, 'test_never_run precision undefined');
    near(cls(fm, 'test_never_run').recall, 0, 'test_never_run recall');
    assert.deepEqual([cls(fm, 'test_never_run').support, cls(fm, 'test_never_run').predicted], [1, 0]);
    near(fm.macroF1, (1 + 1 + 2 / 3 + 1 / 2 + 0) / 5, 'macro F1');

    const j = report.classifiers.find((c) => c.classifier === 'judge:ending')!;
    assert.equal(j.model, 'stand-in');
    assert.equal(j.n, 8);
    near(j.accuracy, 6 / 8, 'judge accuracy');
    near(cls(j, 'wrong_answer').precision, 2 / 4, `judge wrong_answer precision ${JSON.stringify(run.verdicts.map((v) => [v.rolloutId, v.label]))} ${JSON.stringify(j.classes)}`);
    near(cls(j, 'wrong_answer').recall, 1, 'judge wrong_answer recall');
    near(cls(j, 'format_error_loop').recall, 0, 'judge never says format_error_loop');
    near(cls(j, 'leak').f1, 1, 'judge leak F1');

    // An edited rubric is another judge: the old verdicts no longer count for it.
    const file = path.join(harness, 'diagnostics', 'judges', 'ending.md');
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, `${before}\nAlso: be strict.\n`);
    try {
      const edited = await scoreLabels(store, harness);
      assert.equal(edited.classifiers.filter((c) => c.classifier.startsWith('judge:')).length, 0);
    } finally {
      writeFileSync(file, before);
    }

    // Scoped: labels outside the scope match nothing there.
    const scoped = await scoreLabels(store, harness, { run: 'other' });
    assert.equal(scoped.labelledRollouts, 0);
  });

  it('scoreClassifier: one-vs-rest counts', () => {
    const s = scoreClassifier('x', new Map([[1, 'a'], [2, 'a'], [3, 'b'], [9, 'a']]), new Map([[1, 'a'], [2, 'b'], [3, 'b'], [4, 'a']]));
    assert.equal(s.n, 3);
    assert.deepEqual(cls(s, 'a'), { label: 'a', support: 1, predicted: 2, tp: 1, fp: 1, fn: 0, precision: 0.5, recall: 1, f1: 2 / 3 });
    assert.deepEqual({ ...cls(s, 'b'), f1: null }, { label: 'b', support: 2, predicted: 1, tp: 1, fp: 0, fn: 1, precision: 1, recall: 0.5, f1: null });
  });

  it('`labels score --json` prints the same report from a store file', async () => {
    const storeFile = path.join(harness, '.evotrainer', 'store.duckdb');
    const s = await RolloutStore.open(storeFile);
    await s.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    s.close();
    const env = { ...process.env };
    delete env.EVOTRAINER_STORE;
    const j = await runCommand('src/cli/commands/labels.ts', 'labels', { harness, json: true }, ['score'], env);
    assert.equal(j.code, 0, j.stderr);
    const r = JSON.parse(j.stdout) as { labelledRollouts: number; classifiers: ClassifierScore[] };
    assert.equal(r.labelledRollouts, 8);
    near(r.classifiers[0]!.accuracy, 0.75, 'cli accuracy');
    const t = await runCommand('src/cli/commands/labels.ts', 'labels', { harness }, ['score'], env);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /format_error_loop\s+50\.0%\s+100\.0%\s+66\.7%/);
    assert.match(t.stdout, /ana\.jsonl:3: not valid JSON/);
  });
});
