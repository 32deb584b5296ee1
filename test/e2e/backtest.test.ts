import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { pendingGate } from '../../src/core/evolve/loop';
import { readLedger } from '../../src/core/harness/ledger';
import { initHarness } from '../../src/core/harness/init';
import type { Harness } from '../../src/core/harness/repo';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { GSM8K_MAPPING, gsm8kFile, requireSharedData, sweDir } from '../helpers/data';
import { startScriptedLlm, type RecordedRequest, type ScriptedLlm } from '../helpers/scriptedLlm';
import { repoRoot, tempDir } from '../helpers/tmp';
import { candidate, sweEvalRun, type SweTraj } from '../integration/backtest/helpers';
import { bin, edit, evaluatedVersion, REWARD } from '../integration/harness/helpers';
import { activityBarItem, atWebviewWidth, chooseMenuItem, clippedIn, findFrame, openEditor, resultsDir, runCommand, withScreenshot, type CodeServer } from './codeServer';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const STARTER = path.join(repoRoot, 'harness-templates', 'starter');
const SCORE = readFileSync(path.join(STARTER, 'reward', 'compute_score.py'), 'utf8');
const withScore = (expr: string) => SCORE.replace(/    return \{\n        "score": 1\.0 if correct else 0\.0,/, `    return {\n        "score": ${expr},`);

/** Everything a request to the stand-in server said, all messages together. */
const said = (req: RecordedRequest) => (req.body.messages ?? []).map((m) => m.content).join('\n');

/** The stand-in model's intervention: one key of env/config.json, as a unified diff. */
const PROPOSAL = JSON.stringify({
  hypothesis: 'If we raise the environment quality to 0.6, pass_rate improves because fewer tasks are unsolvable',
  target_metric: 'pass_rate',
  success: 'pass_rate > 0.5',
  layer: 'environment',
  because: 'the stand-in model read the evidence',
  factor: 'env/config.json:quality',
  patch: '--- a/env/config.json\n+++ b/env/config.json\n@@ -1,4 +1,4 @@\n {\n-  "quality": 0.5,\n+  "quality": 0.6,\n   "sleep_seconds": 0\n }\n',
});

/**
 * The starter harness with a stand-in trainer: the evolve loop's training job is a GPU run,
 * which cannot run here, so a deterministic python3 script (the evolve tests' mini trainer,
 * reading the starter's eval set) writes verl dumps whose correctness follows env/config.json.
 */
function starterWithStandInTrainer(base: string): string {
  const template = path.join(base, 'template');
  cpSync(STARTER, template, { recursive: true });
  const trainer = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'evolve', 'mini', 'train.py'), 'utf8').replaceAll('t["question"]', 't["prompt"]').replaceAll('t["answer"]', 't["ground_truth"]');
  mkdirSync(path.join(template, 'train'), { recursive: true });
  writeFileSync(path.join(template, 'train', 'stand_in_trainer.py'), trainer);
  mkdirSync(path.join(template, 'env'), { recursive: true });
  writeFileSync(path.join(template, 'env', 'config.json'), JSON.stringify({ quality: 0.5, sleep_seconds: 0 }, null, 2) + '\n');
  const manifest = path.join(template, 'evotrainer.yaml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8') + `jobs:
  train:
    command: python3 train/stand_in_trainer.py --out "$EVOTRAINER_JOB_DIR"
    timeout_minutes: 2
backtest:
  invariants:
    - {check: ordering_violations, between: [1.0, 0.0], max: 0}
    - {check: successes_truncated, max_share: 0.05}
  timeout_seconds: 5
`);
  return template;
}

/**
 * Backtests, the promotion gate and the evolve loop's human gates in a real VS Code
 * (code-server + Chromium): the starter harness with the real GSM8K groups as v0's cached
 * rollouts. Backtest a reward change from the palette and read the Backtest Diff; open a
 * flipped task's rollout in the Failure Explorer; gate an evaluated version and promote it
 * from the result, gate one with a declared bug class and reject it from the result; answer
 * the human gate the CLI left pending. Screenshots of the Backtest Diff and the gate result in dark and light.
 */
describe('real VS Code: backtest, gate, pending gates', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let h: Harness;
  let v1: string;
  let v2: string;
  let v3: string;
  let v4: string;
  let llm: ScriptedLlm;
  let csp: string[] = [];
  // Registered before the temp folder's removal: the extension's output channel, kept beside the screenshots.
  after(async () => {
    await browser?.close();
    await server?.stop();
    await llm?.close();
    const logs = path.join(home, 'user-data', 'logs');
    const found = existsSync(logs) ? (readdirSync(logs, { recursive: true }) as string[]).filter((f) => f.endsWith(path.join('evotrainer.evotrainer', 'EvoTrainer.log'))) : [];
    if (found[0]) copyFileSync(path.join(logs, found[0]), path.join(resultsDir, 'backtest-EvoTrainer.log'));
  });
  const home = tempDir('evotrainer-e2e-backtest-');
  const workspace = path.join(home, 'bt harness $(x) "q"');

  before(async () => {
    h = (await initHarness(workspace, starterWithStandInTrainer(home))).harness;
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      await store.import([gsm8kFile], { run: 'gsm8k', version: 'v0', format: 'jsonl', mapping: GSM8K_MAPPING });
    } finally {
      store.close();
    }
    // The loop, human-gated and with no terminal to ask at: it trains the baseline, then waits at the diagnosis gate.
    const evolve = spawnSync(process.execPath, [bin, 'evolve', '--autonomy', 'human_gated', '--trust', '--rounds', '1'], { cwd: workspace, encoding: 'utf8', timeout: 180_000 });
    assert.equal(evolve.status, 4, `evolve should stop at a pending gate (exit 4): ${evolve.stderr}${evolve.stdout}`);
    assert.equal(pendingGate(h)?.gate, 'diagnosis');
    // v1: a reward change to backtest (a continuous format term). v2: evaluated, with eval rollouts (the real SWE trajectories).
    v1 = await candidate(h, 'v0', 'reward', { [REWARD]: withScore('(1.0 if correct else 0.0) + 0.1 * (1.0 if "A:" in solution_str else 0.0)') });
    v2 = (await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.45 }, { hyp: { hypothesis: 'If we cast correctness to bool, pass_rate improves because partial scores vanish', slug: 'bool-correctness' } })).id;
    const imported = spawnSync(process.execPath, [bin, 'import', path.join(sweDir, 'trajs'), '--run', 'swe', '--version', v2], { cwd: workspace, encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    // v3: a penalty written into the advantages (a declared bug class: the gate rejects it whatever its score).
    v3 = (await evaluatedVersion(h, 'v0', (wt) => {
      mkdirSync(path.join(wt, 'filters'), { recursive: true });
      writeFileSync(path.join(wt, 'filters', 'shaping.py'), 'def shape(batch, penalty):\n    advantages = batch["advantages"]\n    advantages -= 0.1 * penalty\n    return batch\n');
    }, { pass_rate: 0.5 }, { hyp: { hypothesis: 'If we penalize long answers in the advantages, pass_rate improves because answers get shorter', slug: 'advantage-penalty', layer: 'filter' } })).id;
    // v4: a gain through a leak, on v2's eval tasks: for 30 unresolved tasks (10% of 303) the agent's first
    // turn downloads the fix it later submits (curl of the upstream pull request) and the task
    // is marked resolved. Gated once v2 is promoted, the result names the turn that showed it.
    v4 = (await evaluatedVersion(h, v2, (wt) => writeFileSync(path.join(wt, 'env', 'config.json'), JSON.stringify({ quality: 0.5, sleep_seconds: 0, network: true }, null, 2) + '\n'), { pass_rate: 0.5 }, { hyp: { hypothesis: 'If we open the network to the agent, pass_rate improves because it can read upstream docs', slug: 'open-network', layer: 'environment' } })).id;
    const labels = JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { instance_id: string; resolved: boolean }[] };
    const flip = new Set(labels.instances.filter((i) => !i.resolved).map((i) => i.instance_id).sort().slice(0, 30));
    const curl = (d: SweTraj) => [
      { role: 'assistant', content: `THOUGHT: Maybe upstream already fixed it.\n\n\`\`\`bash\ncurl -sL https://github.com/upstream/${d.instance_id.split('__')[0]}/pull/4242.diff\n\`\`\`` },
      { role: 'user', content: `<returncode>0</returncode>\n<output>\n${d.info.submission}\n</output>` },
    ];
    const leaked = spawnSync(process.execPath, [bin, 'import', sweEvalRun(sweDir, path.join(home, 'leak-eval'), { flip, inject: curl, at: 'start' }), '--run', 'eval-leak', '--version', v4], { cwd: workspace, encoding: 'utf8' });
    assert.equal(leaked.status, 0, leaked.stderr);
    // The editor's own language model (vscode.lm) for the LLM proposer: a test extension
    // (test/fixtures/lm-stand-in) registers a chat provider whose model is the scripted
    // stand-in server, a stand-in for a hosted model, which cannot run here.
    llm = await startScriptedLlm((req) => ({ content: /Promoted version: v\d+/.test(said(req)) ? PROPOSAL : JSON.stringify({ label: 'plausible', explanation: 'reads as a real attempt', cited_turns: [] }) }));
    process.env.LM_STAND_IN_URL = llm.url;
    const standIn = path.join(home, 'lm-stand-in.vsix');
    const packed = spawnSync(process.execPath, [path.join(repoRoot, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', standIn], { cwd: path.join(repoRoot, 'test/fixtures/lm-stand-in'), encoding: 'utf8' });
    assert.equal(packed.status, 0, packed.stderr);
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1500, height: 1000 }, also: [standIn] }));
  });

  const sidebar = () => page.locator('.sidebar');
  const versionRow = (id: string) => sidebar().locator(`.monaco-list-row[aria-label^="${id} "]`).first();
  const toast = (text: string | RegExp) => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  const pickRow = (text: string | RegExp) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  const shot = async (name: string) => {
    await page.mouse.move(5, 980);
    await new Promise((r) => setTimeout(r, 400));
    await page.screenshot({ path: path.join(resultsDir, name) });
  };
  /** Picks a version in the quick pick whose placeholder says what for: filter by its id, then the row labelled with it. */
  const pickVersion = async (id: string, placeholder: string) => {
    await page.locator(`.quick-input-widget input[placeholder*="${placeholder}"]`).waitFor({ timeout: 30_000 });
    await page.locator('.quick-input-widget input').fill(id);
    await page.locator(`.quick-input-list .monaco-list-row[aria-label^="${id}"]`).first().click({ timeout: 30_000 });
  };
  /**
   * Waits until the side bar's views stop loading. The Findings and Versions views open the
   * rollout store when they refresh; two DuckDB instances on one file in one process (a
   * view's and a command's) are not safe, so store-touching commands start once they settle.
   */
  const quiet = async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    const deadline = Date.now() + 60_000;
    for (let calm = 0; calm < 5 && Date.now() < deadline; ) {
      calm = (await page.locator('.sidebar .monaco-progress-container.active').count()) ? 0 : calm + 1;
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  /**
   * Runs a palette command once the last quick input has closed (a webview that takes focus
   * while it loads can close the palette as it opens: then it tries once more).
   */
  const palette = async (title: string) => {
    for (let attempt = 0; ; attempt++) {
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 }).catch(() => page.keyboard.press('Escape'));
      await new Promise((r) => setTimeout(r, 300));
      try {
        return await runCommand(page, title);
      } catch (err) {
        if (attempt >= 1) throw err;
        await page.keyboard.press('Escape');
      }
    }
  };
  const dismissToasts = async () => {
    await page.keyboard.press('Escape');
    await palette('Notifications: Clear All Notifications').catch(() => undefined);
  };
  async function contextMenu(rowId: string, item: string) {
    await page.mouse.move(5, 980);
    await page.keyboard.press('Escape');
    await versionRow(rowId).click({ button: 'right' });
    const entry = page.locator('.monaco-menu .action-item', { hasText: item }).first();
    await entry.waitFor({ timeout: 15_000 });
    await chooseMenuItem(page, entry);
  }
  /** The frame of the result webview showing `title` (several can be open). */
  const resultFrame = (text: RegExp, timeoutMs = 240_000) => findFrame(page, `[data-testid="result-title"]:text-matches("${text.source}")`, timeoutMs);
  /** "EvoTrainer: Gate Version" from the palette, on a clean editor area: the gate result, once it shows its decision. */
  const gateFromPalette = async (id: string) => {
    await palette('View: Close All Editors');
    await quiet();
    await palette('EvoTrainer: Gate Version');
    await pickVersion(id, 'Version to judge');
    const gate = await resultFrame(new RegExp(`^Gate ${id}`), 120_000);
    await gate.locator('[data-testid="gate-decision"]').waitFor({ timeout: 30_000 });
    return gate;
  };

  /** The empty secondary side bar takes a third of the window: close it. */
  const closeSecondarySideBar = async () => {
    const aux = page.locator('.part.auxiliarybar');
    if (await aux.isVisible().catch(() => false)) {
      await aux.locator('.codicon-close, .codicon-layout-sidebar-right').first().click({ timeout: 5_000 }).catch(() => page.keyboard.press('Control+Alt+KeyB'));
    }
  };
  /** The walkthrough's steps that show as done, by step id. */
  const stepsDone = async () => {
    const steps = page.locator('.getting-started-step[data-step-id^="evotrainer.evotrainer#evotrainer.start#"]');
    await steps.first().waitFor({ timeout: 30_000 });
    const done: string[] = [];
    for (const el of await steps.all()) if ((await el.getAttribute('aria-checked')) === 'true') done.push((await el.getAttribute('data-step-id'))!.split('#').pop()!);
    return done;
  };
  const waitForSteps = async (want: string[]) => {
    const deadline = Date.now() + 30_000;
    let got = await stepsDone();
    while (JSON.stringify(got) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      got = await stepsDone();
    }
    assert.deepEqual(got, want);
  };

  it('the walkthrough, first paint: a harness is open, so its first step is done and the other five wait', () => withScreenshot(page, 'walkthrough-first', async () => {
    await closeSecondarySideBar();
    await palette('EvoTrainer: Get Started');
    await page.locator('.gettingStartedContainer', { hasText: 'Get started with EvoTrainer' }).waitFor({ timeout: 30_000 });
    await waitForSteps(['harness']);
    assert.deepEqual(await page.locator('.getting-started-step .step-title').allInnerTexts(), ['Open or create a harness', 'Import rollouts', 'Read the health report', 'Make a version', 'Backtest it', 'Gate it']);
    // The step's media (media/walkthrough/harness.md) renders beside the steps.
    await findFrame(page, 'h2:text-is("A harness")', 30_000);
    await new Promise((r) => setTimeout(r, 1000)); // the open step's own layout settles
    await shot('walkthrough-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the walkthrough');
    await palette('View: Close All Editors');
  }));

  let diff: Frame;
  it('backtests a version from the palette: progress, then the Backtest Diff with every section', () => withScreenshot(page, 'backtest-diff', async () => {
    await closeSecondarySideBar();
    await palette('EvoTrainer: Backtest Version…');
    await pickVersion(v1, 'Version to backtest');
    await pickRow('(parent)').click({ timeout: 30_000 });
    // The progress notification, with its cancel button, while the harness's python re-scores the rollouts.
    await page.locator('.notifications-toasts', { hasText: `backtesting ${v1}` }).first().waitFor({ timeout: 30_000 });
    diff = await findFrame(page, '[data-testid="result-verdict"]', 300_000);
    const verdict = await diff.locator('[data-testid="result-verdict"]').innerText();
    assert.match(verdict, /^PASS/);
    assert.match(verdict, /rollouts in \d+ groups over \d+ tasks/);
    assert.match(verdict, /✓\s*ordering violations \(between correctness 1 and 0\) ≤ 0/);
    const intervals = await diff.locator('[data-testid="result-intervals"]').innerText();
    assert.match(intervals, /score \(mean per task\)/);
    assert.match(intervals, /within noise|up|down/);
    assert.equal(await diff.locator('[data-testid="result-histogram"] rect').count(), 20, 'ten bins before, ten after');
    assert.match(await diff.locator('[data-testid="result-dead"]').innerText(), /\d+ → \d+\s+of \d+[\s\S]*revived\s+[1-9]\d*/);
    assert.match(await diff.locator('[data-testid="result-ordering"]').innerText(), /0 new/);
    assert.match(await diff.locator('[data-testid="result-successes"]').innerText(), /newly penalized\s+0/);
    assert.match(await diff.locator('[data-testid="result-modes"]').innerText(), /failure mode/);
    assert.ok((await diff.locator('[data-testid="result-flips"] a.rollout').count()) > 0, 'flipped tasks link their rollouts');
    await toast(new RegExp(`backtest of ${v1} vs v0: PASS`)).waitFor({ timeout: 30_000 });
    const e = (await readLedger(h)).entries.get(v1 as never)!;
    assert.equal(e.status, 'backtested', 'the report is recorded and the version advanced');
    await dismissToasts();
    await shot('backtest-diff-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation on first paint');
    // A narrow editor column: badges, intervals and metric names wrap or scroll, nothing is cut off.
    await atWebviewWidth(page, diff, 'backtest-diff', async () => assert.deepEqual(await clippedIn(diff, 'evo-backtest-app'), [], 'nothing cut off at 600 px'));
  }));

  it("a flipped task's rollout opens in the Failure Explorer at that rollout", () => withScreenshot(page, 'backtest-flip', async () => {
    const link = diff.locator('[data-testid="result-flips"] a.rollout').first();
    const id = (await link.innerText()).trim();
    assert.match(id, /^\d+$/);
    await link.click();
    const explorer = await findFrame(page, `[data-testid="trajectory"][data-rollout="${id}"]`, 120_000);
    const traj = explorer.locator(`[data-testid="trajectory"][data-rollout="${id}"]`);
    await traj.locator('[data-testid="msg-0"]').waitFor({ timeout: 30_000 });
    await shot('backtest-flip-explorer-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the Failure Explorer');
    await atWebviewWidth(page, explorer, 'backtest-flip-explorer', async () => {
      const { scrollWidth, clientWidth } = await traj.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
      assert.ok(scrollWidth <= clientWidth + 1, `the trajectory fits 600 px: ${scrollWidth} > ${clientWidth}`);
    });
    // The Failure Explorer keeps the rollout store open while it is shown. A second DuckDB
    // instance on the same file in the same process (a gate's, a view's) is not safe, so it
    // is closed before the commands below touch the store.
    await palette('View: Close All Editors');
    await quiet();
  }));

  it("the version's evidence panel shows the recorded verdict and figures, and reopens the Backtest Diff", () => withScreenshot(page, 'backtest-evidence', async () => {
    await activityBarItem(page, 'EvoTrainer').click();
    await versionRow(v1).waitFor({ timeout: 60_000 });
    await quiet();
    await contextMenu(v1, 'Show Version Evidence');
    const ev = await findFrame(page, `[data-testid="version-title"]:text("${v1}")`, 60_000);
    await ev.locator('[data-testid="version-backtest-verdict"]').waitFor({ timeout: 30_000 });
    const text = await ev.locator('[data-testid="version-backtest"]').innerText();
    assert.match(text, /PASS\s+vs v0 · reward_rescore/);
    assert.match(text, /dead groups\s+\d+ → \d+ of \d+ \(revived [1-9]\d*\)/);
    assert.match(text, /new ordering violations\s+0/);
    await shot('backtest-evidence-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the evidence panel');
    await atWebviewWidth(page, ev, 'backtest-evidence', async () => assert.deepEqual(await clippedIn(ev, 'evo-version-app'), [], 'nothing cut off at 600 px'));
    await ev.locator('[data-testid="version-open-backtest"]').click();
    await page.locator('.tab', { hasText: `Backtest: ${v1} vs v0` }).first().waitFor({ timeout: 30_000 });
    await (await resultFrame(new RegExp(`^Backtest ${v1}`), 30_000)).locator('[data-testid="result-verdict"]').waitFor({ timeout: 30_000 });
    await palette('View: Close All Editors');
  }));

  it('gates an evaluated version from the Versions view: PROMOTE with every reason, then promotes it from the result', () => withScreenshot(page, 'gate-promote', async () => {
    // Selecting v2 loads its findings (from the store); the gate runs once they are shown.
    await versionRow(v2).click();
    await sidebar().getByText(`Rollouts of version ${v2}`).waitFor({ timeout: 90_000 });
    await quiet();
    await contextMenu(v2, 'Gate Version');
    const gate = await resultFrame(new RegExp(`^Gate ${v2}`), 120_000);
    await gate.locator('[data-testid="gate-decision"]').waitFor({ timeout: 30_000 });
    assert.match(await gate.locator('[data-testid="gate-decision"]').innerText(), /^PROMOTE · all \d+ checks pass/);
    const checks = await gate.locator('[data-testid="gate-checks"]').innerText();
    for (const c of [/✓\s*frozen paths untouched/, /✓\s*leak \(git_history_share\)/, /✓\s*success criterion: pass_rate = [\d.]+ \(95% CI over \d+ tasks/, /✓\s*side effects/]) assert.match(checks, c);
    await toast(new RegExp(`gate of ${v2} vs v0: PROMOTE`)).waitFor({ timeout: 30_000 });
    await shot('gate-result-promote-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the gate result');
    await atWebviewWidth(page, gate, 'gate-result', async () => assert.deepEqual(await clippedIn(gate, 'evo-backtest-app'), [], 'nothing cut off at 600 px'));
    await gate.locator('[data-testid="gate-promote"]').click();
    await toast(`${v2} promoted`).waitFor({ timeout: 30_000 });
    assert.equal((await readLedger(h)).promoted?.version, v2);
    await gate.waitForFunction(() => /is now promoted/.test(document.querySelector('evo-backtest-app')?.shadowRoot?.querySelector('[data-testid="gate-decision"]')?.textContent ?? ''), null, { timeout: 15_000 });
    assert.equal(await gate.locator('[data-testid="gate-promote"]').count(), 0, 'a decided version offers no decision');
    await page.waitForFunction((id) => /promoted ★/.test(document.querySelector(`.sidebar .monaco-list-row[aria-label^="${id} "]`)?.getAttribute('aria-label') ?? ''), v2, { timeout: 30_000 });
    await dismissToasts();
    // The refresh after the decision reloads the Findings of v2 from the store: let it finish.
    await sidebar().getByText(`Rollouts of version ${v2}`).waitFor({ timeout: 90_000 });
    await quiet();
  }));

  it('gates a version with a declared bug class from the palette: REJECT, then rejects it from the result with the failing reasons', () => withScreenshot(page, 'gate-reject', async () => {
    const gate = await gateFromPalette(v3);
    assert.match(await gate.locator('[data-testid="gate-decision"]').innerText(), /^REJECT · 1 check\(s\) fail/);
    const checks = await gate.locator('[data-testid="gate-checks"]').innerText();
    assert.match(checks, /✗\s*declared bug classes: filters\/shaping\.py: "advantages -= 0\.1 \* penalty" — a penalty or bonus written into the advantages/);
    assert.match(checks, /\?\s*evaluation rollouts: no rollouts of v\d+ in the store/);
    await toast(new RegExp(`gate of ${v3} vs v\\d+: REJECT`)).waitFor({ timeout: 30_000 });
    await shot('gate-result-reject-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the gate result');
    await gate.locator('[data-testid="gate-reject"]').click();
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: `Reject ${v3}` }).waitFor({ timeout: 15_000 });
    assert.match(await input.inputValue(), /^gate: declared bug classes: filters\/shaping\.py/);
    await input.press('Enter');
    await toast(`${v3} rejected`).waitFor({ timeout: 30_000 });
    const e = (await readLedger(h)).entries.get(v3 as never)!;
    assert.equal(e.status, 'rejected');
    assert.match(e.rejectReason ?? '', /^gate: declared bug classes/);
    await gate.waitForFunction(() => /is now rejected/.test(document.querySelector('evo-backtest-app')?.shadowRoot?.querySelector('[data-testid="gate-decision"]')?.textContent ?? ''), null, { timeout: 15_000 });
    await dismissToasts();
  }));

  it("a leak's gate result opens a flip in the Failure Explorer at the turn that showed it the answer", () => withScreenshot(page, 'gate-leak-turn', async () => {
    const gate = await gateFromPalette(v4);
    assert.match(await gate.locator('[data-testid="gate-decision"]').innerText(), /^REJECT/);
    assert.match(await gate.locator('[data-testid="gate-checks"]').innerText(), /✗\s*leak \(answer_in_context_share\): .*turn 1: curl -sL https:\/\/github\.com\/upstream\//);
    const link = gate.locator('[data-testid="gate-answer-in-context"] a[data-testid^="turn-"]').first();
    await link.waitFor({ timeout: 30_000 });
    assert.equal((await link.innerText()).trim(), '1');
    const id = (await link.getAttribute('data-testid'))!.slice('turn-'.length);
    assert.match(id, /^\d+$/);
    await shot('gate-leak-result-dark.png');
    await link.click();
    const explorer = await findFrame(page, `[data-testid="trajectory"][data-rollout="${id}"] .msg.cited`, 120_000);
    const traj = explorer.locator(`[data-testid="trajectory"][data-rollout="${id}"]`);
    assert.equal(await traj.locator('[data-testid="turn-note"]').innerText(), 'Showing turn 1: the output that held the answer is marked.');
    // The one output of turn 1 (the curl's), holding the fix the agent later submits; not the command, not the task.
    const cited = traj.locator('.msg.cited');
    assert.equal(await cited.count(), 1);
    const text = await cited.innerText();
    assert.match(text, /turn 1/);
    assert.match(text, /<output>\s*diff --git a\//);
    // Scrolled to: the marked output's head is inside the trajectory pane.
    const inView = await cited.evaluate((el) => {
      const pane = el.closest('.traj')!.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return box.top >= pane.top - 1 && box.top < pane.bottom - 10;
    });
    assert.ok(inView, 'the output that held the answer is scrolled into view');
    await shot('gate-leak-turn-explorer-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the gate result or the Failure Explorer');
    await palette('View: Close All Editors');
    await quiet();
    // Decided, as the gate said (an undecided evaluated version would wait for a person in the evolution round below).
    const rejected = spawnSync(process.execPath, [bin, 'reject', v4, '--reason', 'gate: leak (answer_in_context_share)'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(rejected.status, 0, rejected.stderr);
  }));

  it('the walkthrough marks backtest and gate done once the user has done them; it reads at a narrow width', () => withScreenshot(page, 'walkthrough-done', async () => {
    await palette('View: Close All Editors');
    await palette('EvoTrainer: Get Started');
    await waitForSteps(['harness', 'backtest', 'gate']);
    await page.locator('.getting-started-step[data-step-id$="#gate"]').click();
    await page.locator('.getting-started-step.expanded[data-step-id$="#gate"]').waitFor({ timeout: 15_000 });
    await findFrame(page, 'h2:text-is("The gate decides")', 30_000);
    await shot('walkthrough-done-dark.png');
    await page.setViewportSize({ width: 720, height: 1000 });
    try {
      await new Promise((r) => setTimeout(r, 800));
      await page.screenshot({ path: path.join(resultsDir, 'walkthrough-narrow-dark.png') });
      const box = await page.locator('.getting-started-step.expanded').boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 720, `the open step fits the narrow window: ${JSON.stringify(box)}`);
    } finally {
      await page.setViewportSize({ width: 1500, height: 1000 });
    }
    await palette('View: Close All Editors');
  }));

  it('answers the gate the CLI left pending: its evidence beside, REVISE with feedback', () => withScreenshot(page, 'pending-gate', async () => {
    const asked = pendingGate(h)!;
    await palette('EvoTrainer: Answer Pending Gate');
    await pickRow('REVISE…').waitFor({ timeout: 30_000 });
    const ev = await resultFrame(/^diagnosis gate/, 30_000);
    assert.match(await ev.locator('[data-testid="human-summary"]').innerText(), /WAITING FOR AN ANSWER/);
    await page.screenshot({ path: path.join(resultsDir, 'pending-gate-first-paint-dark.png') });
    const input = page.locator('.quick-input-widget input');
    const revisePrompt = page.locator('.quick-input-widget', { hasText: 'REVISE the diagnosis gate' });
    // The evidence opening beside re-lays the window out; a click that lands while the list
    // moves misses its row, and the pick stays open: pick again until the feedback prompt shows.
    for (let attempt = 1; ; attempt++) {
      if (await pickRow('REVISE…').isVisible()) await pickRow('REVISE…').click();
      try { await revisePrompt.waitFor({ timeout: 5_000 }); break; } catch (e) { if (attempt === 3) throw e; }
    }
    await input.fill('target the dead groups first; keep the format reward');
    await input.press('Enter');
    await toast('answered the diagnosis gate: REVISE').waitFor({ timeout: 30_000 });
    assert.equal(pendingGate(h), null);
    const answers = path.join(workspace, '.evotrainer', 'evolve', 'answers');
    const stored = JSON.parse(readFileSync(path.join(answers, readdirSync(answers).find((f) => f.startsWith(asked.id))!), 'utf8')) as { answer: string; feedback: string };
    assert.deepEqual([stored.answer, stored.feedback], ['REVISE', 'target the dead groups first; keep the format reward']);
    await ev.waitForFunction(() => /ANSWERED: REVISE/.test(document.querySelector('evo-backtest-app')?.shadowRoot?.querySelector('[data-testid="human-summary"]')?.textContent ?? ''), null, { timeout: 15_000 });
    await shot('pending-gate-answered-dark.png');
    assert.deepEqual(csp, [], 'no CSP violation in the gate\'s evidence');
    await atWebviewWidth(page, ev, 'pending-gate', async () => assert.deepEqual(await clippedIn(ev, 'evo-backtest-app'), [], 'nothing cut off at 600 px'));
    await dismissToasts();
  }));

  it('the Backtest Diff and the gate result in the light theme', () => withScreenshot(page, 'light', async () => {
    await palette('View: Close All Editors');
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'workbench.colorTheme': 'Default Light Modern' }));
    await page.waitForFunction(() => document.querySelector('.monaco-workbench')?.classList.contains('vs'), null, { timeout: 30_000 });
    // The version panel reopens the recorded report; then the gate of the backtested version, which has no eval rollouts yet.
    await contextMenu(v1, 'Show Version Evidence');
    const ev = await findFrame(page, `[data-testid="version-title"]:text("${v1}")`, 60_000);
    await ev.locator('[data-testid="version-open-backtest"]').click();
    const light = await resultFrame(new RegExp(`^Backtest ${v1}`), 60_000);
    await light.locator('[data-testid="result-verdict"]').waitFor({ timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 1000));
    const bg = await light.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const lum = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    assert.ok(lum(bg) > 200, `the Backtest Diff follows the light theme (background ${bg})`);
    await shot('backtest-diff-light.png');
    const g = await gateFromPalette(v1);
    assert.match(await g.locator('[data-testid="gate-decision"]').innerText(), /^NEEDS A PERSON · \d+ check\(s\) a person must judge/);
    assert.match(await g.locator('[data-testid="gate-checks"]').innerText(), /\?\s*evaluation rollouts: no rollouts of v\d+ in the store/);
    assert.match(await g.locator('[data-testid="gate-checks"]').innerText(), /✓\s*backtest: v\d+ vs v0 \[reward_rescore\]: PASS/);
    await toast(new RegExp(`gate of ${v1} vs v\\d+: NEEDS A PERSON`)).waitFor({ timeout: 30_000 });
    await shot('gate-result-light.png');
    assert.deepEqual(csp, [], 'no CSP violation in the light theme');
  }));

  it("Run Evolution Round asks the editor's own model (vscode.lm) for the intervention, and shows it at the design gate", () => withScreenshot(page, 'evolve-vscode-lm', async () => {
    await palette('View: Close All Editors');
    await dismissToasts();
    const settings = path.join(workspace, '.vscode', 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), 'evotrainer.evolve.proposer': 'llm', 'evotrainer.llm.provider': 'vscode.lm', 'evotrainer.llm.model': 'scripted-stand-in' }));
    // v1 waits for its training run: set it aside, so that the round proposes a new version.
    const setAside = spawnSync(process.execPath, [bin, 'reject', v1, '--reason', 'set aside: the round proposes anew'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(setAside.status, 0, setAside.stderr);
    await new Promise((r) => setTimeout(r, 1500));
    await quiet();
    await palette('EvoTrainer: Run Evolution Round');
    // A person is at the editor: an earlier gate may ask (APPROVE), the editor may ask once
    // whether EvoTrainer may use the stand-in's model (Allow), then the design gate shows the proposal.
    const design = toast(/design gate/);
    const deadline = Date.now() + 180_000;
    while (!(await design.isVisible().catch(() => false))) {
      assert.ok(Date.now() < deadline, 'the design gate never asked');
      const allow = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Allow/ }).first();
      if (await allow.isVisible().catch(() => false)) await allow.click();
      const earlier = toast(/EvoTrainer: (diagnosis|backtest|completion) gate/);
      if (await earlier.isVisible().catch(() => false)) await earlier.locator('.monaco-button', { hasText: /^APPROVE$/ }).click();
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.match(await design.innerText(), /If we raise the environment quality to 0\.6, pass_rate improves/);
    const asked = llm.requests.filter((r) => /Promoted version: v\d+/.test(said(r)));
    assert.equal(asked.length, 1, 'one proposal request reached the stand-in server through vscode.lm');
    // vscode.lm has no system role: the proposer's instructions arrive as the first user message.
    assert.match(asked[0]!.body.messages![0]!.content, /single-factor, falsifiable intervention/);
    assert.match(said(asked[0]!), /Answer with ONE JSON object/);
    assert.match(said(asked[0]!), /--- env\/config\.json/, 'the editable files went with the evidence');
    await shot('evolve-vscode-lm-design-gate-light.png');
    await design.locator('.monaco-button', { hasText: /^ABORT$/ }).click();
    await toast(/evolution round done \(aborted\)/).waitFor({ timeout: 60_000 });
  }));

  it("Judge Rollouts… judges a sample with the editor's own model (vscode.lm), chosen in settings", () => withScreenshot(page, 'judge-vscode-lm', async () => {
    await dismissToasts();
    mkdirSync(path.join(workspace, 'diagnostics', 'judges'), { recursive: true });
    writeFileSync(path.join(workspace, 'diagnostics', 'judges', 'plausibility.md'), '---\nlabels: [plausible, implausible]\n---\n# Is this a plausible attempt at the task?\n');
    const settings = path.join(workspace, '.vscode', 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), 'evotrainer.llm.sample': 3 }));
    await new Promise((r) => setTimeout(r, 1500));
    const before = llm.requests.length;
    await quiet();
    await palette('EvoTrainer: Judge Rollouts…');
    await pickRow('plausibility').waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    await toast('judged 3 rollouts with plausibility: plausible 3').waitFor({ timeout: 90_000 });
    const judged = llm.requests.slice(before);
    assert.equal(judged.length, 3, 'each verdict came from the stand-in server through vscode.lm');
    assert.ok(judged.every((r) => /plausible attempt at the task/.test(said(r))));
    assert.deepEqual(csp, [], 'no CSP violation in any webview');
  }));
});
