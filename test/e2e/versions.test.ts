import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { readLedger } from '../../src/core/harness/ledger';
import { initHarness } from '../../src/core/harness/init';
import type { Harness } from '../../src/core/harness/repo';
import { recordSkill } from '../../src/core/harness/skills';
import { requireSharedData, sweDir } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, refsSnapshot, REWARD } from '../integration/harness/helpers';
import { activityBarItem, atWebviewWidth, chooseMenuItem, clippedIn, findFrame, openEditor, resultsDir, runCommand, withScreenshot, type CodeServer } from './codeServer';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const format = (v: string) => (wt: string) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', `"format": ${v} if pred is not None else 0.0`);

/**
 * The lineage in a real VS Code: a harness with several versions built through the engine,
 * shown in the Versions view; promote from the context menu, reject from the palette,
 * cherry-pick a skill cleanly and into a conflict (shown before confirming), review a
 * version's diff beside its evidence, open the lineage graph. Screenshots in dark and light.
 */
describe('real VS Code: versions, lineage, skills', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let csp: string[] = [];
  let h: Harness;
  const home = tempDir('evotrainer-e2e-versions-');
  const workspace = path.join(home, 'harness $(x) "q"');

  before(async () => {
    h = (await initHarness(workspace, 'starter')).harness;
    // v1: the skill's source (promoted); v2 on it (evaluated: promoted in the test);
    // v3, v4 from v0 change the same line differently (v3 rejected in the test, v4 the conflict target).
    await evaluatedVersion(h, 'v0', format('0.5'), { pass_rate: 0.4 }, { promote: true, hyp: { hypothesis: 'If we halve the format reward, pass_rate improves because the policy stops gaming format', slug: 'halve-format' } });
    await evaluatedVersion(h, 'v1', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.45 }, { hyp: { hypothesis: 'If we cast correctness to bool, pass_rate improves because partial scores vanish', slug: 'bool-correctness' } });
    await evaluatedVersion(h, 'v0', format('0.2'), { pass_rate: 0.33 }, { hyp: { hypothesis: 'If we cut the format reward to 0.2, pass_rate improves', slug: 'format-0.2' } });
    await evaluatedVersion(h, 'v0', format('0.3'), { pass_rate: 0.36 }, { hyp: { hypothesis: 'If we cut the format reward to 0.3, pass_rate improves', slug: 'format-0.3' } });
    await recordSkill(h, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: 'format reward share > 0.5 and pass_rate flat' });
    // The real SWE trajectories, as the rollouts of v2 (for its findings).
    const imported = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'import', path.join(sweDir, 'trajs'), '--run', 'swe', '--version', 'v2'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1500, height: 900 } }));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const sidebar = () => page.locator('.sidebar');
  const versionRow = (id: string) => sidebar().locator(`.monaco-list-row[aria-label^="${id} "]`).first();
  const toast = (text: string | RegExp) => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  const pickRow = (text: string) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  const shot = async (name: string) => {
    await page.mouse.move(5, 880); // no hover tooltip over what the screenshot shows
    await new Promise((r) => setTimeout(r, 300));
    await page.screenshot({ path: path.join(resultsDir, name) });
  };

  async function contextMenu(rowId: string, item: string) {
    // A tooltip left by the last hover can cover the row.
    await page.mouse.move(5, 880);
    await page.keyboard.press('Escape');
    await versionRow(rowId).click({ button: 'right' });
    const entry = page.locator('.monaco-menu .action-item', { hasText: item }).first();
    await entry.waitFor({ timeout: 15_000 });
    await chooseMenuItem(page, entry);
  }

  async function dismissToasts() {
    await page.keyboard.press('Escape');
    await runCommand(page, 'Notifications: Clear All Notifications').catch(() => undefined);
  }

  it('the Versions view shows the lineage with states, metrics and deltas; Findings follow the selected version', () => withScreenshot(page, 'versions-view', async () => {
    await activityBarItem(page, 'EvoTrainer').click();
    for (const id of ['v0', 'v1', 'v2', 'v3', 'v4']) await versionRow(id).waitFor({ timeout: 60_000 });
    // A wider side bar, so the screenshots show the descriptions whole.
    const box = (await sidebar().boundingBox())!;
    await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 150, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    // The empty secondary side bar takes a third of the window: close it.
    const aux = page.locator('.part.auxiliarybar');
    if (await aux.isVisible().catch(() => false)) {
      await aux.locator('.codicon-close, .codicon-layout-sidebar-right').first().click({ timeout: 5_000 }).catch(() => page.keyboard.press('Control+Alt+KeyB'));
    }
    assert.match((await versionRow('v1').getAttribute('aria-label'))!, /v1 halve-format, pass_rate 0\.4 · promoted ★/);
    assert.match((await versionRow('v2').getAttribute('aria-label'))!, /v2 bool-correctness, pass_rate 0\.45 \(\+0\.05\) · evaluated/);
    assert.match((await versionRow('v3').getAttribute('aria-label'))!, /v3 format-0\.2, pass_rate 0\.33 · evaluated/);
    // The skill recorded from v1 is in the Skills view, by domain and category.
    await sidebar().getByText('Reward design').first().waitFor({ timeout: 30_000 });
    // Selecting v2 scopes the findings to its rollouts: the real SWE data leaks git history.
    await versionRow('v2').click();
    await sidebar().getByText('Rollouts of version v2').waitFor({ timeout: 90_000 });
    await sidebar().locator('.monaco-list-row', { hasText: 'LEAK' }).first().waitFor({ timeout: 30_000 });
    await shot('versions-views-dark.png');
  }));

  it('a finding opens the failure explorer filtered to its failure mode and version', () => withScreenshot(page, 'finding-click', async () => {
    await sidebar().locator('.monaco-list-row', { hasText: 'LEAK' }).first().click();
    const frame = await findFrame(page, '[data-testid="explorer-mode"]', 90_000);
    await frame.waitForFunction(() => {
      const el = document.querySelector('evo-explorer-app')?.shadowRoot?.querySelector('[data-testid="explorer-mode"]') as { value?: string } | null | undefined;
      return el?.value === 'leak';
    }, null, { timeout: 30_000 });
    assert.match(await frame.locator('[data-testid="explorer-total"]').innerText(), /\d+ rollouts? match/);
    await runCommand(page, 'View: Close All Editors');
  }));

  it('promotes v2 from its context menu and rejects v3 from the palette with a reason', () => withScreenshot(page, 'promote-reject', async () => {
    await contextMenu('v2', 'Promote Version');
    await toast('v2 promoted').waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => /promoted ★/.test(document.querySelector('.sidebar .monaco-list-row[aria-label^="v2 "]')?.getAttribute('aria-label') ?? ''), null, { timeout: 30_000 });

    await runCommand(page, 'EvoTrainer: Reject Version');
    await pickRow('v3').waitFor({ timeout: 15_000 });
    assert.equal(await pickRow('v2').count(), 0, 'a promoted version is not offered for rejection');
    await pickRow('v3').click();
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'Reject v3' }).waitFor({ timeout: 15_000 });
    await input.fill('pass_rate regressed 7 points; format 0.2 starves the signal');
    await input.press('Enter');
    await toast('v3 rejected').waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => /rejected · pass_rate regressed 7 points/.test(document.querySelector('.sidebar .monaco-list-row[aria-label^="v3 "]')?.getAttribute('aria-label') ?? ''), null, { timeout: 30_000 });
    const ledger = await readLedger(h);
    assert.equal(ledger.promoted?.version, 'v2');
    assert.equal(ledger.entries.get('v3')!.rejectReason, 'pass_rate regressed 7 points; format 0.2 starves the signal');
    await shot('versions-after-decisions-dark.png');
    await dismissToasts();
  }));

  it('cherry-picks a skill: the conflict is shown before confirming and nothing changes; then a clean apply', () => withScreenshot(page, 'cherry-pick', async () => {
    const refs = refsSnapshot(h.root);
    await runCommand(page, 'EvoTrainer: Cherry-pick Skill…');
    await pickRow('halve-format-reward').click();
    await pickRow('v4').click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    assert.match(await dialog.innerText(), /conflicts with v4 in reward\/compute_score\.py; nothing will be changed/);
    assert.equal(await dialog.locator('.monaco-button', { hasText: 'Apply' }).count(), 0, 'no way to confirm a conflicting apply');
    await shot('cherry-pick-conflict-dark.png');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached', timeout: 15_000 });
    assert.equal(refsSnapshot(h.root), refs, 'the conflict moved no ref');

    await runCommand(page, 'EvoTrainer: Cherry-pick Skill…');
    await pickRow('halve-format-reward').click();
    await pickRow('root version').waitFor({ timeout: 15_000 });
    assert.match((await page.locator('.quick-input-widget input').getAttribute('placeholder')) ?? '', /apply halve-format-reward onto/);
    assert.equal(await pickRow('v3').count(), 0, 'a rejected version is no target');
    await page.locator('.quick-input-widget input').fill('v0');
    await pickRow('v0').click();
    await dialog.waitFor({ timeout: 30_000 });
    assert.match(await dialog.innerText(), /applies cleanly onto v0 \(reward\/compute_score\.py\)/);
    await shot('cherry-pick-clean-dark.png');
    await dialog.locator('.monaco-button', { hasText: 'Apply' }).click();
    await toast(/applied clean: v5 on evo\/v5-skill-halve-format-reward/).waitFor({ timeout: 30_000 });
    const v5 = (await readLedger(h)).entries.get('v5');
    assert.equal(v5?.skill?.id, 'halve-format-reward');
    assert.equal(v5?.parent, 'v0');
    await versionRow('v5').waitFor({ timeout: 30_000 });
    await dismissToasts();
  }));

  it('creates a version from a finding: the finding seeds the hypothesis and becomes its context', () => withScreenshot(page, 'new-from-finding', async () => {
    await runCommand(page, 'EvoTrainer: New Version from Finding…');
    await pickRow('LEAK').click({ timeout: 90_000 });
    await pickRow('v2').click({ timeout: 15_000 });
    const input = page.locator('.quick-input-widget input');
    for (const expected of [/^If we change … , git_history_share improves because it addresses LEAK/, /^git_history_share$/, /^git_history_share < 0\.\d+$/]) {
      await page.waitForFunction((re) => new RegExp(re).test((document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value ?? ''), expected.source, { timeout: 15_000 });
      await input.press('Enter');
    }
    await pickRow('environment').waitFor({ timeout: 15_000 });
    await input.press('Enter');
    await toast(/v6 proposed on evo\/v6-/).waitFor({ timeout: 30_000 });
    const v6 = (await readLedger(h)).entries.get('v6')!;
    assert.equal(v6.parent, 'v2');
    assert.equal(v6.layer, 'environment');
    assert.match(v6.hypothesis!.because, /^finding LEAK: \d+\.\d% of trajectories ran git log/);
    await versionRow('v6').waitFor({ timeout: 30_000 });
    await dismissToasts();
  }));

  it('compares two versions: a changed file opens in the native diff editor', () => withScreenshot(page, 'compare', async () => {
    await runCommand(page, 'EvoTrainer: Compare Versions');
    await page.locator('.quick-input-widget input').fill('v1');
    await pickRow('halve-format').click({ timeout: 15_000 });
    await page.locator('.quick-input-widget input').fill('v4');
    await pickRow('format-0.3').click({ timeout: 15_000 });
    await pickRow('All changed files').waitFor({ timeout: 30_000 });
    await pickRow('reward/compute_score.py').click();
    await page.locator('.tab', { hasText: 'compute_score.py (v1 ↔ v4)' }).first().waitFor({ timeout: 30_000 });
    await runCommand(page, 'View: Close All Editors');
  }));

  let evidence: Frame;
  it("opens a version's diff in the native diff editor with its evidence beside it", () => withScreenshot(page, 'version-diff', async () => {
    await contextMenu('v2', 'Open Version Diff');
    await page.locator('.tab', { hasText: 'compute_score.py (v1 ↔ v2)' }).first().waitFor({ timeout: 30_000 });
    const diff = page.locator('.monaco-diff-editor').first();
    await diff.waitFor({ timeout: 30_000 });
    await diff.locator('.modified', { hasText: 'bool(correct)' }).first().waitFor({ timeout: 30_000 }).catch(async () => {
      assert.match(await diff.innerText(), /bool\(correct\)/);
    });
    evidence = await findFrame(page, '[data-testid="version-hypothesis"]', 60_000);
    assert.match(await evidence.locator('[data-testid="version-hypothesis"]').innerText(), /If we cast correctness to bool/);
    assert.match(await evidence.locator('[data-testid="version-criterion"]').innerText(), /pass_rate > 0\.30/);
    assert.match(await evidence.locator('[data-testid="version-gate"]').innerText(), /promote by gate/);
    assert.match(await evidence.locator('[data-testid="version-backtest"]').innerText(), /0 ordering violations/);
    assert.match(await evidence.locator('[data-testid="version-state"]').innerText(), /promoted ★/);
    await shot('version-diff-evidence-dark.png');
    await atWebviewWidth(page, evidence, 'version-evidence', async () => assert.deepEqual(await clippedIn(evidence, 'evo-version-app'), [], 'nothing cut off at 600 px'));
  }));

  it('the evidence of a fresh version says no backtest yet and not gated yet', () => withScreenshot(page, 'evidence-empty', async () => {
    await contextMenu('v5', 'Show Version Evidence');
    const frame = await findFrame(page, '[data-testid="version-title"]:text("v5")', 60_000);
    assert.match(await frame.locator('[data-testid="version-backtest"]').innerText(), /No backtest yet\./);
    assert.match(await frame.locator('[data-testid="version-gate"]').innerText(), /Not gated yet\./);
  }));

  let lineage: Frame;
  it('opens the lineage graph: scores, the promoted path highlighted, the rejected branch as negative evidence', () => withScreenshot(page, 'lineage', async () => {
    await runCommand(page, 'View: Close All Editors');
    await runCommand(page, 'EvoTrainer: Open Lineage Graph');
    lineage = await findFrame(page, '[data-testid="lineage-graph"]', 60_000);
    for (const [id, status, promoted] of [['v0', 'promoted', 'true'], ['v1', 'promoted', 'true'], ['v2', 'promoted', 'true'], ['v3', 'rejected', 'false'], ['v4', 'evaluated', 'false'], ['v5', 'proposed', 'false']] as const) {
      const n = lineage.locator(`[data-testid="lineage-node-${id}"]`);
      assert.equal(await n.getAttribute('data-status'), status, id);
      assert.equal(await n.getAttribute('data-promoted'), promoted, id);
    }
    assert.match(await lineage.locator('[data-testid="lineage-node-v2"]').textContent() ?? '', /0\.45\s*\+0\.05/);
    assert.match(await lineage.locator('[data-testid="lineage-negative"]').innerText(), /v3 format-0\.2: pass_rate regressed 7 points/);
    await shot('lineage-graph-dark.png');
    await atWebviewWidth(page, lineage, 'lineage', async () => assert.deepEqual(await clippedIn(lineage, 'evo-lineage-app'), [], 'nothing cut off at 600 px'));
    assert.deepEqual(csp, [], 'no CSP violation in any webview');
  }));

  it('the same views and webviews in the light theme', () => withScreenshot(page, 'light', async () => {
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'workbench.colorTheme': 'Default Light Modern' }));
    await page.waitForFunction(() => document.querySelector('.monaco-workbench')?.classList.contains('vs'), null, { timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 1500));
    await shot('lineage-graph-light.png');
    const bodyBg = await lineage.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const lum = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    assert.ok(lum(bodyBg) > 200, `the lineage webview follows the light theme (background ${bodyBg})`);
    await versionRow('v2').waitFor();
    await shot('versions-views-light.png');
    await runCommand(page, 'View: Close All Editors');
    await contextMenu('v2', 'Open Version Diff');
    evidence = await findFrame(page, '[data-testid="version-hypothesis"]', 60_000);
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 1000));
    await shot('version-diff-evidence-light.png');
  }));
});
