import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { DoctorReport } from '../../src/core/doctor';
import { requireSharedData, sweDir } from '../helpers/data';
import { writeHostileTrajectory } from '../helpers/hostile';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scriptedLlm';
import { repoRoot, tempDir } from '../helpers/tmp';
import { activityBarItem, assertBarsProportional, atWebviewWidth, findFrame, openEditor, quickOpen, resultsDir, runCommand, withScreenshot, type CodeServer } from './codeServer';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

describe('real VS Code (code-server in Chromium)', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let llm: ScriptedLlm;
  let csp: string[] = [];
  // Created here, not inside the hook: the helper's cleanup must run after the whole suite.
  const home = tempDir('evotrainer-e2e-');

  before(async () => {
    const workspace = path.join(home, 'harness');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'evotrainer.yaml'), 'name: e2e-harness\ndomain: swe\n');
    // Two runs, imported with the CLI into the harness's own store: a one-rollout run, then
    // the real SWE trajectories (the latest run, which Findings and the health report show).
    writeHostileTrajectory(path.join(home, 'hostile'));
    for (const [dir, run] of [[path.join(home, 'hostile', 'trajs'), 'hostile'], [path.join(sweDir, 'trajs'), 'swe']] as const) {
      const imported = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'import', dir, '--run', run], { cwd: workspace, encoding: 'utf8' });
      assert.equal(imported.status, 0, imported.stderr);
    }
    // The judge's model: a scripted OpenAI-compatible server on 127.0.0.1, a stand-in for a hosted LLM.
    llm = await startScriptedLlm(() => ({ content: JSON.stringify({ label: 'plausible', explanation: 'reads as a real attempt', cited_turns: [] }) }));
    mkdirSync(path.join(workspace, '.vscode'));
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'evotrainer.llm.endpoint': llm.url, 'evotrainer.llm.model': 'scripted-judge', 'evotrainer.llm.sample': 4 }));
    mkdirSync(path.join(workspace, 'diagnostics', 'judges'), { recursive: true });
    writeFileSync(path.join(workspace, 'diagnostics', 'judges', 'plausibility.md'), '---\nlabels: [plausible, implausible]\n---\n# Is this a plausible attempt at the task?\n');
    // The harness's own metric, with its own threshold: the Health panel shows it as `evotrainer health` does.
    mkdirSync(path.join(workspace, 'diagnostics', 'metrics'), { recursive: true });
    writeFileSync(path.join(workspace, 'diagnostics', 'metrics', 'long_trajectories.sql'), '-- description: share of trajectories over 30 assistant turns\n-- dimension: efficiency\n-- unit: ratio\n-- warning: > 0.2\nselect id, (assistant_turns > 30)::int as value from rollout_features\n');
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1400, height: 900 } }));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await llm?.close();
  });

  it('"EvoTrainer: Check Environment" renders the doctor report in a webview, agreeing with the CLI', () => withScreenshot(page, 'doctor', async () => {
    await runCommand(page, 'EvoTrainer: Check Environment');
    const frame = await findFrame(page, '[data-testid="doctor-verdict"]', 60_000);
    const cli = JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'doctor', '--json'], { encoding: 'utf8' })) as DoctorReport;
    for (const check of cli.checks) {
      const row = frame.locator(`[data-testid="check-${check.id}"]`);
      assert.equal(await row.getAttribute('data-status'), check.status, `${check.id} in the webview vs the CLI`);
    }
    assert.equal(await frame.locator('[data-testid="check-git"]').getAttribute('data-status'), 'ok');
    assert.equal(await frame.locator('[data-testid="check-store"]').getAttribute('data-status'), 'ok', 'DuckDB loaded inside the extension host');
    assert.match(await frame.locator('[data-testid="check-store"]').innerText(), /DuckDB v\d/);
    assert.match(await frame.locator('[data-testid="doctor-verdict"]').innerText(), /Ready/);
    // The verdict is the CLI's: with an optional piece failing, it names it rather than a bare "Ready".
    assert.equal(await frame.locator('[data-testid="doctor-verdict"]').getAttribute('data-level'), cli.level);
    assert.ok((await frame.locator('[data-testid="doctor-verdict"]').innerText()).includes(cli.verdict), cli.verdict);
    // The dark theme reached the webview: its text is light on a dark background.
    const colors = await frame.locator('evo-doctor-app').evaluate((el) => {
      const cs = getComputedStyle(el);
      return { fg: cs.color, bg: getComputedStyle(document.body).backgroundColor };
    });
    const lum = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    assert.ok(lum(colors.fg) > 150 && lum(colors.bg) < 60, `foreground ${colors.fg} on background ${colors.bg}`);
    await page.screenshot({ path: path.join(resultsDir, 'doctor-webview.png') });

    // "Check again" round-trips through the host and comes back with a fresh report.
    const before = await frame.locator('.meta').last().innerText();
    await new Promise((r) => setTimeout(r, 1100));
    await frame.locator('[data-testid="doctor-rerun"]').click();
    await frame.waitForFunction((prev) => {
      const app = document.querySelector('evo-doctor-app');
      const metas = app?.shadowRoot?.querySelectorAll('.meta');
      const last = metas?.[metas.length - 1]?.textContent ?? '';
      return last !== '' && last !== prev;
    }, before, { timeout: 30_000 });
  }));

  it('the EvoTrainer activity-bar container shows its four views with their empty states', () => withScreenshot(page, 'views', async () => {
    await activityBarItem(page, 'EvoTrainer').click();
    const sidebar = page.locator('.sidebar');
    for (const name of ['Versions', 'Runs', 'Findings', 'Skills']) {
      await sidebar.locator('.pane-header', { hasText: name }).first().waitFor({ timeout: 15_000 });
    }
    await sidebar.getByText('No harness versions yet.').waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(resultsDir, 'activity-bar-views.png') });
  }));

  it('"EvoTrainer: Show Health Report" renders the health of the real SWE rollouts, leak metrics at the gate\'s thresholds', () => withScreenshot(page, 'health', async () => {
    await runCommand(page, 'EvoTrainer: Show Health Report');
    const frame = await findFrame(page, '[data-testid="health-report"]', 90_000);
    // 2 of 303 honest trajectories ran git log (0.7%): a warning, below the 5% at which the gate rejects.
    assert.equal(await frame.locator('[data-testid="metric-git_history_share"]').getAttribute('data-status'), 'warning');
    assert.equal(await frame.locator('[data-testid="metric-answer_in_context_share"]').getAttribute('data-status'), 'ok');
    assert.match(await frame.locator('[data-testid="metric-pass_rate"]').innerText(), /73\.9%/);
    assert.equal(await frame.locator('[data-testid="metric-mean_logprob"]').getAttribute('data-status'), 'n/a');
    // …so the LEAK finding is a warning (read those two), not the critical one the gate rejects at.
    assert.match((await frame.locator('[data-testid="finding-LEAK"]').getAttribute('class'))!, /\bwarning\b/);
    assert.match(await frame.locator('[data-testid="failure-modes"]').innerText(), /format error loop/);
    // The harness's metric file, judged by its own threshold, with the value the CLI prints.
    const cliHealth = JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'health', '--json', '--run', 'swe'], { cwd: path.join(home, 'harness'), encoding: 'utf8' })) as { metrics: { name: string; value: number; status: string }[] };
    const own = cliHealth.metrics.find((m) => m.name === 'long_trajectories')!;
    assert.equal(own.status, 'warning');
    const ownRow = frame.locator('[data-testid="metric-long_trajectories"]');
    assert.equal(await ownRow.getAttribute('data-status'), 'warning');
    assert.match(await ownRow.innerText(), new RegExp(`${(own.value * 100).toFixed(1)}%`));
    await page.screenshot({ path: path.join(resultsDir, 'health-webview.png') });
    // The failure-mode bars as their counts say on first paint; no style refused by the CSP.
    await assertBarsProportional(frame, '[data-testid^="mode-bar-"]');
    assert.deepEqual(csp, []);
    // The scope is labelled, Findings' by default (the latest run), and the user picks another.
    const scope = frame.locator('[data-testid="health-scope"]');
    assert.equal(await scope.innerText(), 'Scope: run swe (303 rollouts)');
    await frame.locator('[data-testid="health-scope-select"]').click();
    await frame.getByText('every run and version pooled (304 rollouts)').last().click();
    await frame.locator('[data-testid="health-scope"]', { hasText: 'Scope: every run and version pooled (304 rollouts)' }).waitFor({ timeout: 30_000 });
    await frame.locator('[data-testid="metric-pass_rate"]', { hasText: '73.7%' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(resultsDir, 'health-scope-all.png') });
    await frame.locator('[data-testid="health-scope-select"]').click();
    await frame.getByText('run swe (303 rollouts)').last().click();
    await frame.locator('[data-testid="health-scope"]', { hasText: 'Scope: run swe (303 rollouts)' }).waitFor({ timeout: 30_000 });
    await atWebviewWidth(page, frame, 'health', async () => {
      await assertBarsProportional(frame, '[data-testid^="mode-bar-"]');
      const clipped = await frame.locator('[data-testid^="metric-"] .name').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().height > 40).map((e) => e.textContent));
      assert.deepEqual(clipped, [], 'metric names fit at 600 px');
    });
  }));

  it('the Health panel hidden behind another tab and shown again shows the store as it is now', () => withScreenshot(page, 'health-reshown', async () => {
    const healthTab = page.locator('.tabs-container .tab', { hasText: 'EvoTrainer: Health' });
    await healthTab.waitFor({ timeout: 15_000 });
    const pooled = (n: number) => `every run and version pooled (${n} rollouts)`;
    const before = await findFrame(page, '[data-testid="health-report"]', 30_000);
    assert.equal(await before.locator('vscode-option', { hasText: pooled(304) }).count(), 1);
    // Another editor in front: the manifest, opened the way a person does (Quick Open).
    await quickOpen(page, 'evotrainer.yaml');
    assert.equal(await page.locator('.tabs-container .tab.active', { hasText: 'EvoTrainer: Health' }).count(), 0, 'the Health tab is behind');
    // Meanwhile the CLI imports a third run into the store.
    const workspace = path.join(home, 'harness');
    const imported = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'import', path.join(home, 'hostile', 'trajs'), '--run', 'later'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    await healthTab.click();
    // The report as the store is now: the new run among the scopes, the pooled count grown,
    // the scope the user picked kept (not the state the panel was created with).
    const frame = await findFrame(page, `vscode-option:has-text("${pooled(305)}")`, 60_000);
    await frame.locator('[data-testid="health-report"]').waitFor({ timeout: 30_000 });
    assert.equal(await frame.locator('vscode-option', { hasText: 'run later (1 rollouts)' }).count(), 1);
    assert.equal(await frame.locator('[data-testid="health-scope"]').innerText(), 'Scope: run swe (303 rollouts)');
    const face = await frame.locator('[data-testid="health-scope-select"]').evaluate((el) => el.shadowRoot?.querySelector('.select-face .text')?.textContent ?? '');
    assert.equal(face, 'run swe (303 rollouts)', 'the select shows the scope');
    assert.match(await frame.locator('[data-testid="metric-pass_rate"]').innerText(), /73\.9%/);
    await page.screenshot({ path: path.join(resultsDir, 'health-reshown.png') });
    assert.deepEqual(csp, []);
  }));

  it('the Health panel names the rollouts a leak metric saw, and one opens in the Failure Explorer', () => withScreenshot(page, 'health-leaks', async () => {
    const frame = await findFrame(page, '[data-testid="leaks-git_history_share"]', 30_000);
    // The two honest trajectories that ran git log (the warning above), named with their task.
    const leaks = frame.locator('[data-testid="leaks-git_history_share"] .leak');
    assert.equal(await leaks.count(), 2);
    for (const text of await leaks.allInnerTexts()) assert.match(text, /^rollout \d+ \([\w.-]+__[\w.-]+\): git history \(log\/show\/blame…\)$/);
    assert.equal(await frame.locator('[data-testid="leaks-answer_in_context_share"]').count(), 0, 'no trajectory was shown its answer');
    await page.screenshot({ path: path.join(resultsDir, 'health-leaks.png') });
    const link = frame.locator('[data-testid="leaks-git_history_share"] a[data-testid^="leak-rollout-"]').first();
    const id = (await link.getAttribute('data-testid'))!.slice('leak-rollout-'.length);
    await link.click();
    const explorer = await findFrame(page, `[data-testid="trajectory"][data-rollout="${id}"]`, 120_000);
    const traj = explorer.locator(`[data-testid="trajectory"][data-rollout="${id}"]`);
    await traj.locator('[data-testid="msg-0"]').waitFor({ timeout: 30_000 });
    const commands = await traj.locator('pre.cmd').allInnerTexts();
    assert.ok(commands.some((c) => /\bgit (log|show|blame)\b/.test(c)), `rollout ${id} reads git history: ${commands.slice(0, 5).join(' | ')}`);
    assert.deepEqual(csp, []);
    // The explorer holds the store while shown: closed before the commands below read it.
    await runCommand(page, 'View: Close All Editors');
  }));

  it('"Set LLM API Key" keeps the key in secret storage, and "Judge Rollouts…" sends it while judging a sample', () => withScreenshot(page, 'judge', async () => {
    await runCommand(page, 'EvoTrainer: Set LLM API Key');
    // The palette's input gives way to the key prompt: a password box (the key is never shown).
    const input = page.locator('.quick-input-widget input[type="password"]');
    await input.waitFor({ timeout: 15_000 });
    await input.fill('sk-e2e-secret');
    await input.press('Enter');
    await page.locator('.notifications-toasts', { hasText: 'API key saved' }).waitFor({ timeout: 15_000 });
    await runCommand(page, 'EvoTrainer: Judge Rollouts…');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'plausibility' }).first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    await page.locator('.notifications-toasts', { hasText: 'judged 4 rollouts with plausibility: plausible 4' }).waitFor({ timeout: 60_000 });
    assert.equal(llm.requests.length, 4);
    for (const r of llm.requests) {
      assert.equal(r.headers.authorization, 'Bearer sk-e2e-secret');
      assert.equal(r.body.model, 'scripted-judge');
    }
    await page.screenshot({ path: path.join(resultsDir, 'judge-notification.png') });
  }));
});
