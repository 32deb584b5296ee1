import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadFindings, loadHealth } from '../../src/extension/views/data';
import { requireSharedData, sweDir } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
/** As JSON carries it, numbers to 12 significant digits: DuckDB's parallel sums differ in the last bits from run to run. */
const plain = <T>(x: T): T => JSON.parse(JSON.stringify(x), (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v)) as T;

interface CliHealth {
  scope: object;
  metrics: { name: string; value: number | null; status: string }[];
  alerts: { name: string }[];
  problems: string[];
}
interface CliDiagnosis {
  scope: object;
  rollouts: number;
  findings: { id: string; rule: string; severity: string; title: string }[];
  problems: string[];
  failureModes: { failure_mode: string; n: number; examples: number[]; suggestedLayer: string }[];
}

/**
 * The editor's Health panel and Findings view read the engine through views/data.ts
 * (loadHealth, loadFindings): for a harness with its own metric files, rule files and
 * manifest thresholds they must show what `evotrainer health`/`diagnose --json` print.
 */
describe("the editor's health and findings equal the CLI's, harness diagnostics included (real store, built CLI)", () => {
  const harness = tempDir('evotrainer-diagnose-editor-');
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: harness });
    assert.equal(r.status, 0, `evotrainer ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  before(() => {
    // The manifest lowers the catalog's turns threshold (default: warn above 50; the SWE mean is 40.7).
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\nthresholds:\n  turns: { warning: 30 }\n');
    const metrics = path.join(harness, 'diagnostics', 'metrics');
    const rules = path.join(harness, 'diagnostics', 'rules');
    mkdirSync(metrics, { recursive: true });
    mkdirSync(rules, { recursive: true });
    writeFileSync(path.join(metrics, 'long_trajectories.sql'), '-- description: share of trajectories over 30 assistant turns\n-- dimension: efficiency\n-- unit: ratio\n-- warning: > 0.2\nselect id, (assistant_turns > 30)::int as value from rollout_features\n');
    // Harness code: its value can only come from running it.
    writeFileSync(path.join(metrics, 'ran_here.py'), '# description: shows that harness code ran\nimport json, sys\nsys.stdin.read()\nprint(json.dumps({"value": 7}))\n');
    writeFileSync(path.join(rules, 'long.yaml'), "id: long\nwhen:\n  all:\n    - {metric: long_trajectories, op: '>', value: 0.2}\n    - {metric: turns, op: '>', value: 10}\nthen: {title: Trajectories run long, severity: warning, layer: environment}\n");
    writeFileSync(path.join(rules, 'broken.yaml'), "id: broken\nwhen: {metric: no_such_metric, op: '>', value: 1}\nthen: {title: never, severity: info, layer: data}\n");
    cli(['import', path.join(sweDir, 'trajs'), '--run', 'swe']);
  });

  for (const trust of [false, true]) {
    it(`health: the same metrics, statuses, alerts and problems (${trust ? 'trusted: the script metric runs' : 'untrusted: the script metric is a problem'})`, async () => {
      const fromCli = JSON.parse(cli(['health', '--json', '--run', 'swe', ...(trust ? ['--trust'] : [])])) as CliHealth;
      const panel = await loadHealth(harness, { picked: 'run:swe', trust });
      assert.equal(panel.status, 'done', panel.error ?? '');
      assert.equal(panel.scope, 'run:swe');
      const { problems, ...report } = fromCli;
      assert.deepEqual(plain(panel.report), plain(report));
      assert.deepEqual(panel.problems, problems);
      // What the equality covers: the harness's own metric, its threshold, the manifest's threshold, the broken rule file.
      const byName = new Map(report.metrics.map((m) => [m.name, m]));
      assert.equal(byName.get('turns')?.status, 'warning', "the manifest's threshold applies");
      assert.ok((byName.get('long_trajectories')?.value ?? 0) > 0.2);
      assert.equal(byName.get('long_trajectories')?.status, 'warning', "the metric file's own threshold applies");
      assert.equal(byName.get('ran_here')?.value ?? null, trust ? 7 : null);
      assert.ok(problems.some((p) => p.includes('broken.yaml') && /unknown metric "no_such_metric"/.test(p)), problems.join('\n'));
      assert.equal(problems.some((p) => /ran_here\.py: a script metric runs harness code on this machine: pass --trust/.test(p)), !trust);
    });
  }

  it('diagnose: the Health panel and the Findings view show the same findings (built-in and harness rules) and failure modes', async () => {
    const fromCli = JSON.parse(cli(['diagnose', '--json', '--run', 'swe'])) as CliDiagnosis;
    assert.ok(fromCli.findings.some((f) => f.id === 'user:long'), "the harness's rule fired");
    assert.ok(fromCli.findings.some((f) => f.rule === 'LEAK'), 'a built-in rule fired');
    const panel = await loadHealth(harness, { picked: 'run:swe' });
    assert.deepEqual(plain(panel.findings), plain(fromCli.findings));
    assert.deepEqual(panel.failureModes.map((m) => ({ failure_mode: m.mode, n: m.count, examples: m.examples, suggestedLayer: m.layer })), fromCli.failureModes);
    assert.deepEqual(panel.problems, fromCli.problems);
    // The Findings view (no version selected: the latest run, swe).
    const view = await loadFindings(harness, null);
    assert.ok(view);
    assert.deepEqual(view.scope, { version: null, run: 'swe', rollouts: fromCli.rollouts });
    const shown = [...view.children.values()].flat();
    assert.deepEqual(plain(shown.flatMap((n) => (n.kind === 'finding' ? [n.finding] : []))), plain([...fromCli.findings]).sort((a, b) => ['critical', 'warning', 'info'].indexOf(a.severity) - ['critical', 'warning', 'info'].indexOf(b.severity)));
    assert.deepEqual(
      shown.flatMap((n) => (n.kind === 'mode' ? [[n.mode, n.count]] : [])),
      fromCli.failureModes.filter((m) => m.failure_mode !== 'success').map((m) => [m.failure_mode, m.n]),
    );
  });
});
