import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { commandMix, writeTrajectory } from '../helpers/synth';
import { repoRoot, tempDir } from '../helpers/tmp';
import { openEditor, resultsDir, runCommand, withScreenshot, type CodeServer } from './codeServer';

/** A manifest with one bad value, one unknown key (a typo) and a bad eval-set pin. */
const BROKEN_MANIFEST = `name: e2e-lsp
domain: math
autonomy: sometimes
primary_metrc: pass_rate
eval_set:
  path: data/eval.jsonl
  hash: sha256:not-a-hash
`;

const RULE = `when: {metric: pass_rate, op: '<', value: 0.7}
then: {title: Low pass rate, severity: warning, layer: reward}
`;

const REWARD = `def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(solution_str.strip() == ground_truth)}
`;

/** Opens a workspace file through Go to File. */
async function openFile(page: Page, name: string): Promise<void> {
  await runCommand(page, 'Go to File');
  const input = page.locator('.quick-input-widget input');
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
  await input.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
}

/** Puts the cursor at a 1-based line and column with Go to Line. */
async function goTo(page: Page, line: number, column: number): Promise<void> {
  await runCommand(page, 'Go to Line/Column');
  const input = page.locator('.quick-input-widget input');
  await input.fill(`:${line}:${column}`);
  await input.press('Enter');
}

describe('language server in real VS Code (code-server in Chromium)', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let csp: string[] = [];
  // Registered before the temp folder's own cleanup: code-server stops before its folder goes.
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
  const home = tempDir('evotrainer-e2e-lsp-');

  before(async () => {
    const workspace = path.join(home, 'harness');
    mkdirSync(path.join(workspace, 'data'), { recursive: true });
    writeFileSync(path.join(workspace, 'evotrainer.yaml'), BROKEN_MANIFEST);
    writeFileSync(path.join(workspace, 'data', 'eval.jsonl'), '{"question": "1+1", "answer": "2"}\n');
    mkdirSync(path.join(workspace, 'diagnostics', 'rules'), { recursive: true });
    writeFileSync(path.join(workspace, 'diagnostics', 'rules', 'low-pass.yaml'), RULE);
    mkdirSync(path.join(workspace, 'reward'));
    writeFileSync(path.join(workspace, 'reward', 'score.py'), REWARD);
    // The harness's store, imported with the CLI: generated trajectories, 3 of 5 resolved.
    const gen = path.join(home, 'gen');
    for (let k = 0; k < 5; k++) writeTrajectory(gen, `t-${k}`, { commands: commandMix(1, 1, 1), resolved: k < 3 });
    const imported = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'import', path.join(gen, 'trajs'), '--run', 'run-1'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1400, height: 900 } }));
  });

  it('a broken evotrainer.yaml shows its problems, at their lines and columns, in the Problems panel', () => withScreenshot(page, 'language-server', async () => {
    await openFile(page, 'evotrainer.yaml');
    // The server's squiggles appear in the editor…
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 60_000 });
    assert.ok((await page.locator('.monaco-editor .squiggly-warning').count()) >= 1, 'the unknown key is a warning');

    // …and the Problems panel lists each one with its position.
    await runCommand(page, 'View: Focus Problems');
    const panel = page.locator('.markers-panel');
    await panel.waitFor({ timeout: 15_000 });
    const row = (text: string) => panel.locator('.monaco-list-row', { hasText: text }).first();
    await row('autonomy: Invalid option').waitFor({ timeout: 30_000 });
    const expected: [string, string][] = [
      ['autonomy: Invalid option', '[Ln 3, Col 11]'],
      ['Unknown key "primary_metrc"', '[Ln 4, Col 1]'],
      ['eval_set.hash: must be "sha256:"', '[Ln 7, Col 9]'],
    ];
    for (const [message, position] of expected) {
      const text = await row(message).innerText();
      assert.ok(text.includes(position), `${message}: ${text}`);
    }
    // Every row comes from this server, attributed to it.
    const sources = await panel.locator('.monaco-list-row .marker-source, .monaco-list-row .source').allInnerTexts();
    assert.ok(sources.length === 0 || sources.every((s) => /evotrainer/.test(s)), sources.join(','));
    await page.screenshot({ path: path.join(resultsDir, 'language-server-problems.png') });
  }));

  it("a rule's metric shows its definition and latest store value on hover, and goes to the built-in catalog", () => withScreenshot(page, 'language-server-hover', async () => {
    await openFile(page, 'low-pass.yaml');
    // Line 1, inside "pass_rate".
    await goTo(page, 1, 18);
    await runCommand(page, 'Show or Focus Hover');
    const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'Latest value' }).first();
    await hover.waitFor({ timeout: 60_000 });
    const text = await hover.innerText();
    assert.match(text, /pass_rate · built-in metric · results · ratio/);
    assert.match(text, /Latest value: 0\.6 — run run-1, 5 rollouts/);
    assert.match(text, /avg\(correct::int\)/);
    await page.screenshot({ path: path.join(resultsDir, 'language-server-hover.png') });
    await page.keyboard.press('Escape');

    await runCommand(page, 'Go to Definition');
    await page.locator('.tab.active', { hasText: 'builtin-metrics.yaml' }).waitFor({ timeout: 30_000 });
    await page.locator('.monaco-editor .view-line', { hasText: 'pass_rate:' }).first().waitFor({ timeout: 15_000 });
  }));

  it('reward code carries the "Backtest this change" lens, which runs evotrainer.backtestVersion', () => withScreenshot(page, 'language-server-codelens', async () => {
    await openFile(page, 'score.py');
    const lens = page.locator('.codelens-decoration a', { hasText: 'Backtest this change' }).first();
    await lens.waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(resultsDir, 'language-server-codelens.png') });
    await lens.click();
    await page.locator('.notifications-toasts', { hasText: 'compute_score' }).waitFor({ timeout: 15_000 });
    assert.deepEqual(csp, [], 'no CSP violation');
  }));
});
