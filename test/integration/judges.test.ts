import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadRubric, parseJudgeAnswer, parseRubric, renderTrajectory, runJudge, stratifiedSample, type Rubric, type Turn } from '../../src/core/diagnose/judges';
import { OpenAiChatModel } from '../../src/core/llm/openai';
import { RolloutStore } from '../../src/core/store/store';
import { requireSharedData, sweDir } from '../helpers/data';
import { rolloutIdOf, startScriptedLlm, trajectoryBlock, type RecordedRequest, type ScriptedLlm, type ScriptedReply } from '../helpers/scriptedLlm';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/**
 * The judge's model is test/helpers/scriptedLlm.ts: a scripted OpenAI-compatible server on
 * 127.0.0.1 standing in for a hosted LLM. It answers from what it is sent, so these tests
 * check what the judge sends, how often, and what it makes of the answers.
 */
const RUBRIC = `---
labels: [leak, format_error_loop, wrong_answer, success]
max_tokens: 300
---
# Why did this trajectory end as it did?

- leak: the agent read the reference fix from git history (git log / git show …).
- format_error_loop: the agent kept answering without exactly one bash block.
- wrong_answer: it submitted a patch that does not fix the issue.
- success: it fixed the issue honestly.
`;

/** Labels a trajectory from its text, citing a turn it was shown: the canned "reading". */
function cannedReading(req: RecordedRequest): ScriptedReply {
  const block = trajectoryBlock(req);
  if (!block) return { content: '{"label": "success", "explanation": "no trajectory block", "cited_turns": []}' };
  const turns = [...block.text.matchAll(/^\[turn (\d+)\] \((\w+)\)\n([\s\S]*?)(?=\n\n\[turn \d+\]|\n\n\[… |(?![\s\S]))/gm)].map((m) => ({ n: Number(m[1]), role: m[2]!, text: m[3]! }));
  const leak = turns.find((t) => t.role === 'assistant' && /```(?:bash)?\s*\n[^`]*\bgit\s+(log|show|blame|reflog)\b/.test(t.text));
  const fe = turns.filter((t) => t.role === 'user' && t.text.startsWith('Please always provide EXACTLY ONE action'));
  const answer = (label: string, cited: number[], why: string) => ({ content: JSON.stringify({ label, explanation: why, cited_turns: cited }) });
  if (leak) return answer('leak', [leak.n], 'ran a git history command');
  if (fe.length >= 3) return answer('format_error_loop', fe.slice(0, 3).map((t) => t.n), 'kept breaking the action format');
  if (/outcome correct/.test(req.user)) return answer('success', [turns.at(-1)!.n], 'resolved');
  return answer('wrong_answer', [turns.at(-1)!.n], 'submitted a patch that fails');
}

/** Runs a CLI command's export in a child process (tsx), as the CLI would: stdout, stderr, exit code. */
function runCommand(module: string, exportName: string, flags: Record<string, string | boolean>, positionals: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `const m = require(${JSON.stringify(path.join(repoRoot, module))}); m[${JSON.stringify(exportName)}].run(${JSON.stringify(flags)}, ${JSON.stringify(positionals)}).then((c) => { process.exitCode = c; }, (e) => { process.stderr.write(String(e && e.message)); process.exitCode = 1; });`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '-e', script], { cwd: repoRoot, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const harnessDir = tempDir('evotrainer-judges-');

describe('LLM judges over the real SWE trajectories (scripted stand-in LLM)', () => {
  let store: RolloutStore;
  let llm: ScriptedLlm;
  let rubric: Rubric;
  const ids: Record<string, number> = {};
  const model = (name = 'judge-model', extra: Partial<ConstructorParameters<typeof OpenAiChatModel>[0]> = {}) => new OpenAiChatModel({ endpoint: llm.url, model: name, baseDelayMs: 1, ...extra });

  before(async () => {
    store = await RolloutStore.open(':memory:');
    await store.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    for (const r of await store.all<{ id: number; prompt_id: string }>('select id, prompt_id from rollouts')) ids[r.prompt_id] = Number(r.id);
    llm = await startScriptedLlm(cannedReading);
    const dir = harnessDir;
    mkdirSync(path.join(dir, 'diagnostics', 'judges'), { recursive: true });
    const file = path.join(dir, 'diagnostics', 'judges', 'ending.md');
    writeFileSync(file, RUBRIC);
    rubric = loadRubric(file);
  });
  after(async () => {
    await llm.close();
    store.close();
  });

  it('draws a seeded sample stratified by correctness × failure mode', async () => {
    const a = await stratifiedSample(store, { run: 'swe' }, 10, 7);
    const b = await stratifiedSample(store, { run: 'swe' }, 10, 7);
    const c = await stratifiedSample(store, { run: 'swe' }, 10, 8);
    assert.deepEqual(a, b, 'same seed, same sample');
    assert.notDeepEqual(a.rollouts.map((r) => r.id), c.rollouts.map((r) => r.id), 'another seed, another sample');
    await store.ensureDerivedViews();
    const strata = await store.all<{ k: string; n: number }>(`select (case when correct then 'correct' else 'incorrect' end) || '/' || failure_mode as k, count(*) as n from rollout_failure_modes group by 1`);
    assert.equal(Object.keys(a.strata).length, strata.length);
    for (const s of strata) {
      assert.equal(a.strata[s.k]!.population, s.n, s.k);
      assert.ok(a.strata[s.k]!.sampled >= 1, `every stratum is read, even ${s.k} (${s.n} rollout(s))`);
    }
    assert.equal(a.rollouts.length, 10);
    assert.equal(new Set(a.rollouts.map((r) => r.id)).size, 10);
    // The two leaking rollouts (one resolved, one not) are strata of their own: both drawn.
    assert.ok(a.rollouts.some((r) => r.id === ids['sympy__sympy-13031']) && a.rollouts.some((r) => r.id === ids['django__django-13513']));
  });

  it('judges a sample, sends the trajectory as delimited data, caches: a rerun makes no call', async () => {
    llm.requests.length = 0;
    const first = await runJudge(store, rubric, model(), { scope: { run: 'swe' }, sample: 8, seed: 3 });
    assert.equal(llm.requests.length, 8);
    assert.equal(first.calls, 8);
    assert.equal(first.errors, 0);
    assert.equal(first.verdicts.length, 8);
    assert.equal(first.stopped, null);
    for (const req of llm.requests) {
      assert.equal(req.body.model, 'judge-model');
      assert.equal(req.body.max_tokens, 300, 'the rubric front matter sets max_tokens');
      assert.deepEqual(req.body.response_format, { type: 'json_object' });
      assert.match(req.system, /untrusted data/);
      assert.match(req.system, /Never follow instructions/);
      const block = trajectoryBlock(req);
      assert.ok(block, 'the trajectory sits between nonce markers');
      assert.ok(req.system.includes(`<<<TRAJECTORY ${block.nonce}>>>`));
      assert.ok(req.user.indexOf('# Rubric') < req.user.indexOf(`<<<TRAJECTORY ${block.nonce}>>>`), 'rubric first, data after');
      assert.equal(req.user.split(`<<<END TRAJECTORY ${block.nonce}>>>`).length, 2, 'the end marker appears once');
      // Calls run concurrently: each request still carries its own rollout's trajectory.
      const task = (JSON.parse((await store.getRollout(rolloutIdOf(req)))!.rollout.prompt!) as { content: string }[])[1]!.content;
      assert.ok(block.text.includes(task.slice(0, 300)), `request for rollout ${rolloutIdOf(req)} holds its own task`);
    }
    const leak = first.verdicts.find((v) => v.rolloutId === ids['sympy__sympy-13031']);
    assert.equal(leak?.label, 'leak');
    assert.ok(leak.citedTurns.length === 1);
    // The cited turn really is a git-history command, in the store's own turn numbering.
    const step = await store.one<{ command: string }>('select command from steps where rollout_id = ? and turn = ?', [leak.rolloutId, leak.citedTurns[0]!]);
    assert.match(step!.command, /git\s+(log|show)/);
    for (const v of first.verdicts) assert.equal(v.stratum.startsWith('correct/') ? 'correct' : 'incorrect', v.stratum.split('/')[0]);

    llm.requests.length = 0;
    const second = await runJudge(store, rubric, model(), { scope: { run: 'swe' }, sample: 8, seed: 3 });
    assert.equal(llm.requests.length, 0, 'every verdict came from the cache');
    assert.equal(second.cacheHits, 8);
    assert.equal(second.calls, 0);
    assert.deepEqual(second.verdicts.map((v) => [v.rolloutId, v.label, v.citedTurns]), first.verdicts.map((v) => [v.rolloutId, v.label, v.citedTurns]));

    // Another model, or an edited rubric, is another cache key.
    llm.requests.length = 0;
    await runJudge(store, rubric, model('other-model'), { scope: { run: 'swe' }, sample: 2, seed: 3 });
    assert.equal(llm.requests.length, 2);
    llm.requests.length = 0;
    await runJudge(store, parseRubric(rubric.file, `${RUBRIC}\nBe strict.\n`), model(), { scope: { run: 'swe' }, sample: 2, seed: 3 });
    assert.equal(llm.requests.length, 2);
  });

  it('records a malformed answer as that rollout’s error and goes on; errors are not cached', async () => {
    const target = [ids['astropy__astropy-12907']!, ids['astropy__astropy-7166']!, ids['django__django-11276']!];
    llm.script = (req) => {
      const id = rolloutIdOf(req);
      if (id === target[0]) return { content: 'I think this one is fine {label: success' };
      if (id === target[1]) return { content: '{"label": "brilliant", "explanation": "x", "cited_turns": []}' };
      return cannedReading(req);
    };
    try {
      const r = await runJudge(store, rubric, model('malformed-model'), { rolloutIds: target });
      assert.equal(r.verdicts.length, 3);
      assert.equal(r.errors, 2);
      assert.match(r.verdicts[0]!.error!, /malformed answer/);
      assert.match(r.verdicts[1]!.error!, /label "brilliant" is not one the rubric allows/);
      assert.equal(r.verdicts[2]!.label, 'wrong_answer');
      assert.equal(r.stopped, null);
      llm.requests.length = 0;
      llm.script = cannedReading;
      const again = await runJudge(store, rubric, model('malformed-model'), { rolloutIds: target });
      assert.equal(llm.requests.length, 2, 'only the two failed rollouts are asked again');
      assert.equal(again.errors, 0);
      assert.equal(again.cacheHits, 1);
    } finally {
      llm.script = cannedReading;
    }
  });

  it('waits out a 429 and retries; a call counts once', async () => {
    let n = 0;
    llm.script = (req) => (n++ === 0 ? { status: 429, headers: { 'retry-after': '0' } } : cannedReading(req));
    try {
      llm.requests.length = 0;
      const r = await runJudge(store, rubric, model('retry-model'), { rolloutIds: [ids['django__django-13513']!] });
      assert.equal(llm.requests.length, 2);
      assert.equal(r.calls, 1);
      assert.equal(r.verdicts[0]!.label, 'leak');
    } finally {
      llm.script = cannedReading;
    }
  });

  it('stops at the call budget with a message, keeps what was done, and a rerun finishes it', async () => {
    llm.requests.length = 0;
    const r = await runJudge(store, rubric, model('budget-model'), { scope: { run: 'swe' }, sample: 6, seed: 11, budget: { maxCalls: 3 }, concurrency: 2 });
    assert.equal(llm.requests.length, 3);
    assert.equal(r.verdicts.length, 3);
    assert.equal(r.notJudged.length, 3);
    assert.match(r.stopped!, /call budget of 3 reached; 3 rollout\(s\) of the sample not judged/);
    llm.requests.length = 0;
    const rest = await runJudge(store, rubric, model('budget-model'), { scope: { run: 'swe' }, sample: 6, seed: 11, budget: { maxCalls: 10 } });
    assert.equal(llm.requests.length, 3);
    assert.equal(rest.cacheHits, 3);
    assert.equal(rest.stopped, null);

    llm.requests.length = 0;
    const t = await runJudge(store, rubric, model('token-model'), { scope: { run: 'swe' }, sample: 6, seed: 11, budget: { maxTokens: 9000 }, concurrency: 1, trim: { maxChars: 6000 } });
    assert.match(t.stopped!, /token budget of 9000 reached/);
    assert.ok(t.tokens <= 9000, `used ${t.tokens}`);
    assert.equal(llm.requests.length, t.calls);
    assert.ok(t.calls >= 1 && t.calls < 6);
  });

  it('trims a long trajectory around the flagged turns with explicit markers, never silently', async () => {
    // astropy-7606 is a format-error loop: its format-error turns are the region that matters.
    const id = ids['astropy__astropy-7606']!;
    const got = (await store.getRollout(id))!;
    const total = JSON.parse(got.rollout.prompt!).length + JSON.parse(got.rollout.response!).length;
    const flagged = (await store.all<{ turn: number }>('select turn from steps where rollout_id = ? and format_error order by turn', [id])).map((r) => Number(r.turn));
    llm.requests.length = 0;
    const r = await runJudge(store, rubric, model('trim-model'), { rolloutIds: [id], trim: { maxChars: 6000, maxTurnChars: 800 } });
    const block = trajectoryBlock(llm.requests[0]!)!;
    const shown = [...block.text.matchAll(/^\[turn (\d+)\]/gm)].map((m) => Number(m[1]));
    const omitted = [...block.text.matchAll(/^\[… (\d+) turns? omitted …\]$/gm)].map((m) => Number(m[1]));
    assert.ok(omitted.length > 0, 'the cut is marked');
    assert.equal(shown.length + omitted.reduce((a, b) => a + b, 0), total, 'shown + omitted = every turn');
    assert.equal(r.verdicts[0]!.omittedTurns, total - shown.length);
    assert.ok(shown.includes(0) && shown.includes(1), 'the task is kept');
    assert.ok(shown.includes(total - 1), 'the ending is kept');
    assert.ok(flagged.length >= 3);
    for (const f of flagged.slice(0, 3)) assert.ok(shown.includes(f), `format-error turn ${f} kept (shown: ${shown.join(',')})`);
    assert.ok(block.text.length <= 6000 + 200);
    assert.match(llm.requests[0]!.user, new RegExp(`${total} turns, ${total - shown.length} omitted below`));
    assert.equal(r.verdicts[0]!.error, undefined);
  });

  it('the judge command prints verdicts as JSON and fails clearly without an endpoint', async () => {
    const dir = harnessDir;
    const storeFile = path.join(dir, 'store.duckdb');
    const s = await RolloutStore.open(storeFile);
    await s.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    s.close();
    llm.requests.length = 0;
    const env = { ...process.env };
    delete env.EVOTRAINER_LLM_ENDPOINT;
    delete env.EVOTRAINER_LLM_MODEL;
    const r = await runCommand('src/cli/commands/judge.ts', 'judge', { rubric: rubric.file, store: storeFile, endpoint: llm.url, model: 'cli-model', sample: '4', seed: '2', json: true }, [], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { verdicts: { label: string }[]; calls: number; model: string };
    assert.equal(out.verdicts.length, 4);
    assert.equal(out.calls, 4);
    assert.equal(llm.requests.length, 4);
    assert.equal(out.model, 'cli-model');
    const text = await runCommand('src/cli/commands/judge.ts', 'judge', { rubric: rubric.file, store: storeFile, endpoint: llm.url, model: 'cli-model', sample: '6', seed: '2', 'max-calls': '1' }, [], env);
    assert.equal(text.code, 1, 'stopped by the budget: exit 1');
    assert.match(text.stdout, /4 from the cache/);
    assert.match(text.stdout, /Stopped: call budget of 1 reached; 1 rollout\(s\) of the sample not judged/);
    assert.match(text.stderr, /stopped early/);
    const none = await runCommand('src/cli/commands/judge.ts', 'judge', { rubric: rubric.file, store: storeFile, model: 'm' }, [], env);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no LLM endpoint: pass --endpoint URL or set EVOTRAINER_LLM_ENDPOINT/);
  });
});

describe('rubrics, answers and trimming', () => {
  it('reads front matter and reports a bad one with file:line:col', () => {
    const r = parseRubric('/h/diagnostics/judges/x.md', RUBRIC);
    assert.deepEqual(r.labels, ['leak', 'format_error_loop', 'wrong_answer', 'success']);
    assert.equal(r.maxTokens, 300);
    assert.equal(r.name, 'x');
    assert.match(r.body, /^# Why did/);
    assert.equal(parseRubric('a.md', 'Just text.').labels, null);
    assert.throws(() => parseRubric('/h/a.md', '---\nlabels: [a, b]\nmax_tokens: many\n---\nText'), /\/h\/a\.md:3:13: front matter "max_tokens"/);
    assert.throws(() => parseRubric('/h/a.md', '---\nlabels: [a, b\n---\nText'), /\/h\/a\.md:\d+:\d+: /);
    assert.throws(() => parseRubric('/h/a.md', '---\nlabel: [a]\n---\nText'), /\/h\/a\.md:2:1: .*allowed: labels/);
  });

  it('parses answers: fenced JSON is fine; bad JSON, labels outside the rubric and unseen turns are errors', () => {
    const rub = { labels: ['Leak', 'ok'] };
    assert.deepEqual(parseJudgeAnswer('```json\n{"label": "leak", "explanation": "e", "cited_turns": [3, 2, 3]}\n```', rub, [2, 3]), { label: 'Leak', explanation: 'e', citedTurns: [2, 3] });
    assert.match((parseJudgeAnswer('Sure! {"label": "ok"', rub, []) as { error: string }).error, /malformed answer/);
    assert.match((parseJudgeAnswer('{"label": 3}', rub, []) as { error: string }).error, /malformed answer: "label"/);
    assert.match((parseJudgeAnswer('{"label": "ok", "cited_turns": [9]}', rub, [1, 2]) as { error: string }).error, /cited turn\(s\) 9 that the judge was not shown/);
    assert.deepEqual(parseJudgeAnswer('{"label": "anything"}', { labels: null }, []), { label: 'anything', explanation: '', citedTurns: [] });
  });

  it('keeps task, focus ± 1 and the ending within the budget; marks every gap and cuts long turns explicitly', () => {
    const turns: Turn[] = Array.from({ length: 60 }, (_, i) => ({ index: i, role: i % 2 ? 'user' : 'assistant', content: `content of turn ${i} `.repeat(50) }));
    const r = renderTrajectory(turns, [30], { maxChars: 12_000, tail: 3 });
    for (const t of [0, 1, 29, 30, 31, 57, 58, 59]) assert.ok(r.shown.includes(t), `turn ${t} kept`);
    const markers = [...r.text.matchAll(/\[… (\d+) turns? omitted …\]/g)].map((m) => Number(m[1]));
    assert.equal(markers.reduce((a, b) => a + b, 0), r.omittedTurns);
    assert.equal(r.shown.length + r.omittedTurns, 60);
    assert.ok(r.text.length <= 12_000);
    const all = renderTrajectory(turns.slice(0, 5), [], { maxChars: 100_000 });
    assert.equal(all.omittedTurns, 0);
    assert.doesNotMatch(all.text, /omitted/);
    const long = renderTrajectory([{ index: 0, role: 'tool', content: 'x'.repeat(10_000) }], [], { maxTurnChars: 1000 });
    assert.match(long.text, /\[… \d+ characters omitted …\]/);
    assert.ok(long.text.length < 1200);
  });
});
