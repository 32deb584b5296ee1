import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { evolve } from '../../../src/core/evolve/loop';
import { LlmProposer } from '../../../src/core/evolve/proposers';
import { readLedger } from '../../../src/core/harness/ledger';
import { JobRecords } from '../../../src/core/jobs';
import { OpenAiChatModel } from '../../../src/core/llm';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { startScriptedLlm } from '../../helpers/scriptedLlm';
import { tempDir } from '../../helpers/tmp';
import { bin, cli } from '../harness/helpers';
import { miniHarness, qualitySkill } from './helpers';

/**
 * The evolve loop on real git, real python3 jobs (local executor) and the real store.
 * The trainer is a stand-in (train.py: no GPU here) whose pass rate follows a config key.
 */
describe('evolve: the co-evolution loop', () => {
  it('promotes an improvement, rejects a regression as negative evidence, records a skill', async () => {
    const h = await miniHarness(tempDir('evotrainer-evolve-'), [qualitySkill('better', 0.75), qualitySkill('worse', 0.3)]);
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      const lines: string[] = [];
      const r = await evolve(h, { store, trust: true, budget: { rounds: 3 }, log: (l) => lines.push(l) });
      const text = lines.join('\n');
      const ledger = await readLedger(h);
      const byId = (id: string) => ledger.entries.get(id as never)!;
      assert.deepEqual(r.versions, ['v1', 'v2'], text);
      assert.equal(byId('v1').status, 'promoted', text);
      assert.equal(byId('v1').skill?.id, 'better');
      assert.equal(r.promoted, 'v1');
      // v2 branched from the promoted v1, regressed, and stays as negative evidence.
      assert.equal(byId('v2').parent, 'v1');
      assert.equal(byId('v2').status, 'rejected');
      assert.match(byId('v2').rejectReason!, /primary pass_rate non-regression: .*a regression beyond noise/);
      assert.match(text, /chose skill better .* because its trigger holds: pass_rate = 0\.\d+ > 0\.1/);
      assert.match(text, /v1: added evidence to skill better/);
      // The loop's own skill file is committed: the run leaves the checkout clean.
      assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: h.root, encoding: 'utf8' }), '');
      assert.equal(execFileSync('git', ['log', '-1', '--format=%s', '--', 'skills/better.md'], { cwd: h.root, encoding: 'utf8' }).trim(), 'skill better: evidence from v1');
      assert.equal(r.stopped, 'no-proposal', text);
      assert.ok(byId('v0').metrics.pass_rate! > 0.4 && byId('v0').metrics.pass_rate! < 0.6);
    } finally {
      store.close();
    }
  });

  it('when no metric explains a failure, a candidate diagnostic is replayed over the versions and joins the harness', async () => {
    const proposed = {
      'diagnostics/proposed/unsure_share.sql': '-- description: Share of answers that name no number\n-- dimension: results\n-- unit: ratio\nselect avg((response like \'%x\')::int) as value\nfrom rollouts;\n',
      'diagnostics/proposed/prompt_count.sql': '-- description: Prompts seen (does not separate anything)\n-- dimension: results\n-- unit: count\nselect count(distinct prompt_id)::double as value\nfrom rollouts;\n',
    };
    const h = await miniHarness(tempDir('evotrainer-evolve-'), [qualitySkill('worse', 0.3)], {}, 'mini diag', proposed);
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      const lines: string[] = [];
      await evolve(h, { store, trust: true, budget: { rounds: 1 }, log: (l) => lines.push(l) });
      const text = lines.join('\n');
      assert.match(text, /v1: REJECTED/);
      assert.match(text, /candidate diagnostic prompt_count replayed over 2 decided versions: promoted \[150\.000\], rejected \[150\.000\] — does not separate them/, text);
      assert.match(text, /candidate diagnostic unsure_share replayed over 2 decided versions: promoted \[0\.5\d+\], rejected \[0\.7\d+\] — separates them/, text);
      assert.match(text, /v2: diagnostic unsure_share joins the harness \(validated retrospectively/, text);
      const ledger = await readLedger(h);
      const v2 = ledger.entries.get('v2' as never)!;
      assert.equal(v2.layer, 'diagnostics');
      assert.equal(ledger.promoted!.version, 'v2');
      const bt = v2.transitions.flatMap((t) => t.evidence).find((x) => x.kind === 'backtest')!.data as { kinds: string[]; metricReplays: { metric: string; separates: boolean }[] };
      assert.deepEqual(bt.kinds, ['metric_replay']);
      assert.equal(bt.metricReplays.find((m) => m.metric === 'unsure_share')!.separates, true);
    } finally {
      store.close();
    }
  });

  it('escalates: human-gated after 2 failed versions; after 3 re-checks, switches layer, subtracts, rolls back', async () => {
    const h = await miniHarness(tempDir('evotrainer-evolve-'), [qualitySkill('w1', 0.3), qualitySkill('w2', 0.28), qualitySkill('w3', 0.25)]);
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      const lines: string[] = [];
      const asked: string[] = [];
      const r = await evolve(h, { store, trust: true, budget: { rounds: 5 }, log: (l) => lines.push(l), ask: async (g) => (asked.push(`${g.gate}:${g.version ?? ''}`), { answer: 'APPROVE' }) });
      const text = lines.join('\n');
      assert.deepEqual(r.versions, ['v1', 'v2', 'v3'], text);
      const i2 = lines.findIndex((l) => /escalation: 2 consecutive failed versions — switching to human-gated/.test(l));
      const i3 = lines.findIndex((l) => /escalation: 3 consecutive failed versions/.test(l));
      assert.ok(i2 > 0 && i3 > i2, text);
      assert.match(text, /1\. re-checking the evaluation pipeline: eval set data\/eval\.jsonl pinned sha256:/);
      assert.match(text, /2\. switching layer: setting aside environment/);
      assert.match(text, /3\. consulting the skill library: 3 skill\(s\)/);
      assert.match(text, /4\. preferring interventions that remove or disable a component/);
      assert.match(text, /5\. rolling back to the last good version: the next version branches from v0 \(promoted\), not from v3/);
      // Human gates were asked only after the switch: diagnosis, design, backtest, completion of v3.
      assert.deepEqual(asked, ['diagnosis:', 'design:', 'backtest:v3', 'completion:v3', 'diagnosis:'], text);
      assert.equal(r.stopped, 'no-proposal');
      const ledger = await readLedger(h);
      assert.deepEqual(['v1', 'v2', 'v3'].map((v) => ledger.entries.get(v as never)!.parent), ['v0', 'v0', 'v0']);
    } finally {
      store.close();
    }
  });

  it('without a person at hand a human gate waits in a file; the answer resumes the loop', async () => {
    const h = await miniHarness(tempDir('evotrainer-evolve-'), [qualitySkill('better', 0.75)]);
    const r1 = cli(['evolve', '--trust', '--rounds', '1', '--autonomy', 'human_gated', '--harness', h.root]);
    assert.equal(r1.status, 4, r1.stdout + r1.stderr);
    assert.match(r1.stderr, /waiting for a person at the diagnosis gate: .*evotrainer evolve answer APPROVE/s);
    assert.match(cli(['evolve', 'pending', '--harness', h.root]).stdout, /diagnosis gate waiting since/);
    assert.equal(cli(['evolve', 'answer', 'REVISE', '--harness', h.root]).status, 2, 'REVISE needs feedback');
    assert.equal(cli(['evolve', 'answer', 'APPROVE', '--harness', h.root]).status, 0);
    const r2 = cli(['evolve', '--trust', '--rounds', '1', '--autonomy', 'human_gated', '--harness', h.root]);
    assert.equal(r2.status, 4);
    assert.match(r2.stderr, /design gate/);
    assert.equal(cli(['evolve', 'answer', 'ABORT', '--harness', h.root]).status, 0);
    const r3 = cli(['evolve', '--trust', '--rounds', '1', '--autonomy', 'human_gated', '--harness', h.root]);
    assert.equal(r3.status, 0, r3.stderr);
    assert.match(r3.stdout, /design gate: ABORT \(answered\)/);
    assert.equal((await readLedger(h)).entries.size, 1, 'ABORT made no version');
  });

  it('killed mid-training, a rerun resumes the version without running its job twice', async () => {
    const h = await miniHarness(tempDir('evotrainer-evolve-'), [qualitySkill('better', 0.75)], { sleep_seconds: 2 });
    const first = spawn(process.execPath, [bin, 'evolve', '--trust', '--rounds', '1', '--harness', h.root], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      first.stdout.on('data', (d: Buffer) => {
        seen += d.toString();
        if (/v1: training job \S+ on local/.test(seen)) {
          first.kill('SIGKILL');
          resolve();
        }
      });
      first.on('exit', () => reject(new Error(`evolve ended before v1 trained:\n${seen}`)));
    });
    await new Promise((r) => first.on('exit', r));
    assert.equal((await readLedger(h)).entries.get('v1' as never)!.status, 'training');
    const again = cli(['evolve', '--trust', '--rounds', '1', '--harness', h.root]);
    assert.equal(again.status, 0, again.stderr + again.stdout);
    assert.match(again.stdout, /round 1: resuming v1 \(training\)/);
    assert.match(again.stdout, /v1: PROMOTED/);
    const jobs = new JobRecords(path.join(h.root, '.evotrainer', 'jobs')).list();
    assert.equal(jobs.filter((j) => j.version === 'v1').length, 1, 'one training job for v1');
    assert.equal(jobs.filter((j) => j.version === 'v0').length, 1, 'the baseline was not retrained');
  });

  it('LLM proposer (scripted stand-in server): a patch outside the boundary is refused with the reason, then the fixed one is used', async () => {
    const llm = await startScriptedLlm((req, i) => {
      if (i === 0) return { content: JSON.stringify({ hypothesis: 'If we change the trainer, pass_rate improves because it trains longer', target_metric: 'pass_rate', success: 'pass_rate > 0.6', layer: 'infra', factor: 'train.py', patch: '--- a/train.py\n+++ b/train.py\n@@ -1,3 +1,3 @@\n-"""Stand-in trainer (no GPU here): writes verl dumps whose correctness follows\n+"""Patched trainer: writes verl dumps whose correctness follows\n env/config.json\'s `quality`, deterministically per task and sample."""\n import argparse, hashlib, json, os, time\n' }) };
      assert.match(req.body.messages!.at(-1)!.content, /Refused: outside the action boundary: train\.py/);
      return { content: JSON.stringify({ hypothesis: 'If we raise quality, pass_rate improves because the stand-in follows it', target_metric: 'pass_rate', success: 'pass_rate > 0.6', layer: 'environment', factor: 'env/config.json:quality', patch: '--- a/env/config.json\n+++ b/env/config.json\n@@ -1,4 +1,4 @@\n {\n-  "quality": 0.5,\n+  "quality": 0.8,\n   "sleep_seconds": 0\n }\n' }) };
    });
    const h = await miniHarness(tempDir('evotrainer-evolve-'), []);
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      const proposer = new LlmProposer(new OpenAiChatModel({ endpoint: llm.url, model: 'scripted', apiKey: 'test' }));
      const lines: string[] = [];
      const r = await evolve(h, { store, trust: true, budget: { rounds: 1 }, proposer, log: (l) => lines.push(l) });
      assert.equal(llm.requests.length, 2);
      assert.deepEqual(proposer.refusals.map((x) => x.replace(/\[.*\]/, '[…]')), ['outside the action boundary: train.py […]']);
      assert.match(llm.requests[0]!.user, /Promoted version: v0/);
      assert.match(llm.requests[0]!.user, /Editable files of the harness at v0:\n--- env\/config\.json/);
      assert.deepEqual(r.versions, ['v1']);
      assert.equal((await readLedger(h)).entries.get('v1' as never)!.status, 'promoted', lines.join('\n'));
    } finally {
      store.close();
      await llm.close();
    }
  });
});
