import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { requireSharedData, sweDir } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

describe('evotrainer health / diagnose in a harness (built CLI)', () => {
  const harness = tempDir('evotrainer-health-cli-');
  const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: harness });
  before(() => {
    requireSharedData();
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\n');
    assert.equal(cli(['import', path.join(sweDir, 'trajs'), '--run', 'swe']).status, 0);
  });

  it("the manifest's thresholds override the catalog's defaults", () => {
    const turns = () => (JSON.parse(cli(['health', '--json']).stdout) as { metrics: { name: string; status: string }[] }).metrics.find((m) => m.name === 'turns')!.status;
    assert.equal(turns(), 'ok', 'the default: warn above 50 turns (the SWE mean is 40.7)');
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\nthresholds:\n  turns: { warning: 30 }\n');
    assert.equal(turns(), 'warning');
  });

  it('diagnose prints findings and failure modes, text and JSON; the gate\'s leak threshold is the LEAK rule\'s', () => {
    // The honest runs' 0.7% git-history share is below the default leak threshold (5%): no LEAK.
    assert.deepEqual((JSON.parse(cli(['diagnose', '--json']).stdout) as { findings: { rule: string }[] }).findings, []);
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\ngate:\n  leak: { max: 0 }\n');
    const text = cli(['diagnose']);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /\[CRITICAL\] LEAK/);
    assert.match(text.stdout, /format_error_loop\s+74/);
    const json = JSON.parse(cli(['diagnose', '--json']).stdout) as { findings: { rule: string }[]; failureModes: { failure_mode: string; n: number }[] };
    assert.deepEqual(json.findings.map((f) => f.rule), ['LEAK']);
    assert.equal(json.failureModes.reduce((a, m) => a + m.n, 0), 303);
  });
});
