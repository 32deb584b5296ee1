import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Harness } from '../../../src/core/harness/repo';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { fixtures } from '../../helpers/data';
import { tempDir } from '../../helpers/tmp';
import { cli } from '../harness/helpers';
import { candidate, mathHarness } from './helpers';

describe('evotrainer backtest / gate (CLI)', () => {
  const base = tempDir('evotrainer-btcli-');
  let h: Harness;
  let v: string;
  before(async () => {
    h = await mathHarness(base, 'backtest:\n  invariants:\n    - {check: ordering_violations, max: 0}\n');
    const store = await RolloutStore.open(defaultStorePath(h.root));
    await store.import([path.join(fixtures, 'verl')], { run: 'verl-12', version: 'v0' });
    store.close();
    const reward = readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8').replace('"score": 1.0 if correct else 0.0,', '"score": (1.0 if correct else 0.0) + 0.05 * (1.0 if pred is not None else 0.0),');
    v = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': reward });
  });

  it('refuses to run harness code without --trust, saying how to allow it', () => {
    const r = cli(['backtest', v, '--harness', h.root]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /runs this harness's own code \(reward\/compute_score\.py\) on this machine; pass --trust/);
  });

  it('backtests with --trust --json and records the report on the version', () => {
    const r = cli(['backtest', v, '--harness', h.root, '--trust', '--json']);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout) as { verdict: string; kinds: string[]; stats: { rollouts: number; errors: { after: number } }; isolation: { environment: string; readOnlyRoot: boolean; detail: string } };
    assert.deepEqual(report.kinds, ['reward_rescore']);
    // the report says what confined the harness code (confine.test.ts checks that it holds)
    assert.equal(report.isolation.environment, 'scrubbed');
    assert.match(report.isolation.detail, report.isolation.readOnlyRoot ? /^harness code ran with no network, a read-only filesystem/ : /^harness code ran WITHOUT network or filesystem confinement/);
    assert.equal(report.stats.rollouts, 7); // six train, one val
    assert.equal(report.stats.errors.after, 0);
    assert.equal(report.verdict, 'pass');
    const lineage = cli(['lineage', '--harness', h.root, '--json']);
    assert.match(lineage.stdout, new RegExp(`"id": "${v}"[\\s\\S]*?"status": "backtested"`));
  });

  it('the text report ends with what confined the harness code', () => {
    const r = cli(['backtest', v, '--harness', h.root, '--trust', '--no-record']);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /\nharness code ran (with no network|WITHOUT network)[^\n]*scrubbed environment \(PATH, /);
  });

  it('rejects a bad --rollouts selector with the accepted keys', () => {
    const r = cli(['backtest', v, '--harness', h.root, '--trust', '--rollouts', 'colour=blue']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /KEY one of version, run, split, steps, limit/);
  });

  it('gate: with no eval rollouts of the version it needs a person, and says what to import (exit 3)', () => {
    const r = cli(['gate', v, '--harness', h.root]);
    assert.equal(r.status, 3, r.stdout + r.stderr + '');
    assert.match(r.stdout, new RegExp(`gate ${v} vs v0: NEEDS-HUMAN`));
    assert.match(r.stdout, /no rollouts of v\d+ in the store; import its eval run/);
    const j = JSON.parse(cli(['gate', v, '--harness', h.root, '--json']).stdout) as { decision: string; checks: { check: string; passed: boolean | null }[] };
    assert.equal(j.decision, 'needs_human');
  });
});
