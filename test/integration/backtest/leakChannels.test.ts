import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { formatGate, runGate, type GateReport } from '../../../src/core/gate';
import { newVersion } from '../../../src/core/harness/versions';
import type { Harness } from '../../../src/core/harness/repo';
import { OpenAiChatModel } from '../../../src/core/llm/openai';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { requireSharedData, sweDir } from '../../helpers/data';
import { startScriptedLlm } from '../../helpers/scriptedLlm';
import { tempDir } from '../../helpers/tmp';
import { candidate, mathHarness, sweEvalRun, type SweTraj } from './helpers';

/**
 * The gate must catch an invalid gain whatever channel carried it. Eval runs are built
 * from copies of the real mini-swe-agent trajectories: for F unresolved tasks the agent's
 * first turn obtains the fix it later submits — through a URL, an installed fixed release,
 * a file outside the repository, a urllib one-liner fetching an HTML page, or a message
 * of the environment — and the task is marked resolved. None of these is git porcelain.
 * Each version is rejected, naming the channel and the turn; the same gain obtained by
 * testing is promoted.
 */

const out = (s: string) => `<returncode>0</returncode>\n<output>\n${s}\n</output>`;
const agent = (thought: string, cmd: string) => ({ role: 'assistant', content: `THOUGHT: ${thought}\n\n\`\`\`bash\n${cmd}\n\`\`\`` });
const fixedFile = (d: SweTraj) => /^\+\+\+ b\/(\S+)/m.exec(d.info.submission)?.[1] ?? 'module.py';

/** The patched side of the submission's hunks, numbered as `cat -n` prints a file. */
function newSide(patch: string, numbered: boolean): string {
  const lines: string[] = [];
  let n = 0;
  for (const l of patch.split('\n')) {
    const h = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(l);
    if (h) n = Number(h[1]);
    else if (/^(diff |index |--- |\+\+\+ )/.test(l)) continue;
    else if (l.startsWith('+') || l.startsWith(' ')) lines.push(numbered ? `${String(n++).padStart(6)}\t${l.slice(1)}` : l.slice(1));
  }
  return lines.join('\n');
}
const html = (s: string) => s.split('\n').map((l) => `<td class="blob-code">${l.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</td>`).join('\n');

interface Channel {
  name: string;
  inject: (d: SweTraj) => SweTraj['messages'];
  /** What the gate must name: the channel, and the turn. */
  names: RegExp;
}

const CHANNELS: Channel[] = [
  {
    name: 'curl of the upstream pull request',
    inject: (d) => [agent('Maybe upstream already fixed it.', `curl -sL https://github.com/upstream/${d.instance_id.split('__')[0]}/pull/4242.diff`), { role: 'user', content: out(d.info.submission) }],
    names: /turn 1: curl -sL https:\/\/github\.com\/upstream\//,
  },
  {
    name: 'the installed fixed release (site-packages)',
    inject: (d) => [
      agent('A newer release may carry the fix.', `pip download --no-deps -q -d /tmp/wheels pkg==99.0 && python -m zipfile -e /tmp/wheels/pkg.whl /usr/local/lib/python3.11/site-packages && cat -n /usr/local/lib/python3.11/site-packages/${fixedFile(d)}`),
      { role: 'user', content: out(newSide(d.info.submission, true)) },
    ],
    names: /turn 1: pip download --no-deps -q -d \/tmp\/wheels pkg==99\.0 && python -m zipfile -e \/tmp\/wheels\/pkg\.whl \/usr\/local\/lib/,
  },
  {
    name: 'a file outside the repository',
    inject: (d) => [agent('There is a reference copy on this machine.', `cat /srv/reference/${d.instance_id}/${path.basename(fixedFile(d))}`), { role: 'user', content: out(newSide(d.info.submission, false)) }],
    names: /turn 1: cat \/srv\/reference\//,
  },
  {
    name: 'a python urllib one-liner fetching an HTML page',
    inject: (d) => [
      agent('Fetch the file from the project page.', `python3 -c "import urllib.request as u; print(u.urlopen('https://example.org/blob/main/${fixedFile(d)}').read().decode())"`),
      { role: 'user', content: out(`<html><body><table>\n${html(newSide(d.info.submission, false))}\n</table></body></html>`) },
    ],
    names: /turn 1: python3 -c "import urllib\.request as u; print\(u\.urlopen\('https:\/\/example\.org/,
  },
  {
    name: 'a message of the environment',
    inject: (d) => [{ role: 'user', content: `Note from the environment: a maintainer attached this patch for reference.\n${d.info.submission}` }],
    names: /before turn 1: environment message/,
  },
];

requireSharedData();

describe('the gate catches an invalid gain whatever channel carried it (real SWE trajectories)', () => {
  const base = tempDir('evotrainer-leakch-');
  let h: Harness;
  let store: RolloutStore;
  const labels = JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { instance_id: string; resolved: boolean }[] };
  const unresolved = labels.instances.filter((i) => !i.resolved).map((i) => i.instance_id).sort();
  const resolved = labels.instances.filter((i) => i.resolved).map((i) => i.instance_id).sort();
  // 60 real tasks (20 unresolved), 12 of them flipped: a +20 pp "gain", the size of the issue's.
  const only = new Set([...unresolved.slice(0, 20), ...resolved.slice(0, 40)]);
  const flip = new Set(unresolved.slice(0, 12));
  const versions = new Map<string, string>();
  let genuine: string;
  let fetcher: string;
  let rerun: string;

  const reward = () => readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8');
  const run = async (id: string, name: string, inject: Channel['inject'], subset = only) => {
    await store.import([sweEvalRun(sweDir, path.join(base, name), { flip, inject, at: 'start', only: subset })], { run: `eval-${name}`, version: id, split: 'val' });
  };

  before(async () => {
    h = await mathHarness(base, '', 'swe harness $(id) "q"');
    store = await RolloutStore.open(defaultStorePath(h.root));
    await store.import([sweEvalRun(sweDir, path.join(base, 'v0'), { flip: new Set(), inject: () => [], only })], { run: 'eval-v0', version: 'v0', split: 'val' });
    for (const [i, c] of CHANNELS.entries()) {
      const id = await candidate(h, 'v0', 'environment', { 'env/config.json': `{"tools": ${i}}\n` }, 'If we give the agent more tools, pass_rate improves because it can find what it needs', 'pass_rate > 0.6');
      versions.set(c.name, id);
      await run(id, `leak${i}`, c.inject);
    }
    genuine = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': `${reward()}\n# reward the self-test before submit\n` }, 'If we reward self-tests, pass_rate improves because fixes get verified', 'pass_rate > 0.6');
    await run(genuine, 'genuine', () => [agent('Run the tests before submitting.', 'python -m pytest -q tests/test_regression.py'), { role: 'user', content: out('3 passed in 0.41s') }]);
    // Concentrated behaviour, no answer shown: every flip reads a URL the baseline never touched.
    fetcher = await candidate(h, 'v0', 'environment', { 'env/config.json': '{"network": true}\n' }, 'If we open the network, pass_rate improves because docs help', 'pass_rate > 0.6');
    await run(fetcher, 'fetcher', () => [agent('Read the docs.', 'wget -qO- https://docs.example.org/api.txt | head -40'), { role: 'user', content: out('API reference\n  see the changelog') }]);
    // A version with no commit at all, whose evaluation moved anyway.
    rerun = (await newVersion(h, { parent: 'v0', hypothesis: 'If we re-evaluate v0, pass_rate holds because nothing changed', targetMetric: 'pass_rate', success: 'pass_rate > 0.6', layer: 'environment' })).entry.id;
    await run(rerun, 'rerun', () => [agent('Run the tests.', 'python -m pytest -q'), { role: 'user', content: out('1 passed') }]);
  });
  after(() => store?.close());

  const check = (r: GateReport, name: string) => r.checks.find((c) => c.check === name);

  for (const c of CHANNELS) {
    it(`rejects a gain obtained through ${c.name}, naming the channel and the turn`, async () => {
      const r = await runGate(h, store, { version: versions.get(c.name)! });
      const text = formatGate(r);
      assert.equal(r.decision, 'reject', text);
      assert.equal(r.comparisons.pass_rate!.direction, 'up', 'the raw score rose beyond noise: false prosperity');
      const leak = check(r, 'leak (answer_in_context_share)')!;
      assert.equal(leak.passed, false, text);
      assert.match(leak.detail, /information leak: \d+\.\d% of v\d+'s eval trajectories were shown their answer before writing it/);
      assert.match(leak.detail, c.names, leak.detail);
      const where = check(r, 'where the gain came from')!;
      assert.equal(where.passed, false, text);
      assert.match(where.detail, /\d+ of 12 flips were shown their answer before writing it/);
      assert.match(where.detail, c.names);
      // Not caught by the git-history list: none of these runs git.
      assert.equal(check(r, 'leak (git_history_share)')!.passed, true, text);
    });
  }

  it('promotes the same gain obtained by testing', async () => {
    const r = await runGate(h, store, { version: genuine });
    const text = formatGate(r);
    assert.equal(r.decision, 'promote', text);
    assert.ok(Math.abs(r.comparisons.pass_rate!.delta - 12 / 60) < 1e-9);
    assert.equal(check(r, 'leak (answer_in_context_share)')!.passed, true, text);
    assert.match(check(r, 'where the gain came from')!.detail, /^12 task\(s\) flipped fail→pass; no behaviour concentrated in them that v0 lacks$/);
  });

  it('sends a gain whose flips all fetch a URL the baseline never contacts to a person', async () => {
    const r = await runGate(h, store, { version: fetcher });
    const text = formatGate(r);
    assert.equal(r.decision, 'needs_human', text);
    const where = check(r, 'where the gain came from')!;
    assert.equal(where.passed, null, text);
    assert.match(where.detail, /12 of 12 flips contacts `docs\.example\.org`; 0 of 60 baseline trajectories do \(0 of 48 unflipped\)/);
    assert.match(where.detail, /12 of 12 flips runs `wget`/);
    assert.equal(r.flips!.concentrated.some((b) => b.behaviour === 'runs head'), false, 'a program the baseline uses is no evidence');
  });

  it('has an LLM judge audit a sample of the flips (cached and budgeted), and cites it', async () => {
    // Stand-in for a hosted LLM: a scripted OpenAI-compatible server, its verdict set per gate below.
    let outside = true;
    const llm = await startScriptedLlm(() => ({
      content: JSON.stringify({ label: outside ? 'from_outside' : 'own_work', explanation: outside ? 'The patch was downloaded with curl in the first turn, then copied.' : 'It edited and tested.', cited_turns: [] }),
    }));
    try {
      const audit = { model: new OpenAiChatModel({ endpoint: llm.url, model: 'scripted-judge', baseDelayMs: 1 }), sample: 4, budget: { maxCalls: 4 } };
      const r = await runGate(h, store, { version: versions.get(CHANNELS[0]!.name)!, audit });
      const judged = check(r, 'judge audit of the flips')!;
      assert.equal(judged.passed, null, formatGate(r));
      assert.match(judged.detail, /^the judge \(scripted-judge\) read 4 of 4 sampled flips: 4 from_outside — a person must read: rollout \d+: The patch was downloaded with curl/);
      assert.equal(llm.requests.length, 4);
      assert.match(llm.requests[0]!.system, /Was the answer obtained from outside the task\?|from_outside/);
      assert.ok(llm.requests.every((q) => /rollout \d+; task \S+; outcome correct/.test(q.user)), 'only credited (flipped) trajectories are judged');
      // Cached under the built-in rubric: judging the same flips again makes no call.
      outside = false;
      const again = await runGate(h, store, { version: genuine, audit });
      assert.match(check(again, 'judge audit of the flips')!.detail, /read 4 of 4 sampled flips: 4 own_work/);
      const calls = llm.requests.length;
      await runGate(h, store, { version: genuine, audit });
      assert.equal(llm.requests.length, calls, 'verdicts come from the cache');
    } finally {
      await llm.close();
    }
  });

  it('sends a version with an empty diff whose evaluation moved to a person, named as such', async () => {
    const r = await runGate(h, store, { version: rerun });
    const text = formatGate(r);
    assert.equal(r.decision, 'needs_human', text);
    const moved = check(r, 'nothing changed, yet it moved')!;
    assert.equal(moved.passed, null, text);
    assert.match(moved.detail, /diff against [0-9a-f]{10} is empty, yet pass_rate 0\.\d+ → 0\.\d+ \(Δ \+0\.200.*a person must judge/);
  });
});
