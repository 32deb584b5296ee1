import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { DoctorReport } from '../../src/core/doctor';
import { requireSharedData, sweDir } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';
import { activityBarItem, findFrame, launchBrowser, openWorkbench, resultsDir, runCommand, startCodeServer, withScreenshot, type CodeServer } from './codeServer';

describe('real VS Code (code-server in Chromium)', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  // Created here, not inside the hook: the helper's cleanup must run after the whole suite.
  const home = tempDir('evotrainer-e2e-');

  before(async () => {
    const workspace = path.join(home, 'harness');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'evotrainer.yaml'), 'name: e2e-harness\ndomain: swe\n');
    // The real SWE trajectories, imported with the CLI into the harness's own store.
    requireSharedData();
    const imported = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'import', path.join(sweDir, 'trajs'), '--run', 'swe'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    server = await startCodeServer({ workspace, home });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openWorkbench(page, server.url);
    mkdirSync(resultsDir, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
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

  it('"EvoTrainer: Show Health Report" renders the health of the real SWE rollouts, with the leak finding', () => withScreenshot(page, 'health', async () => {
    await runCommand(page, 'EvoTrainer: Show Health Report');
    const frame = await findFrame(page, '[data-testid="health-report"]', 90_000);
    assert.equal(await frame.locator('[data-testid="metric-git_history_share"]').getAttribute('data-status'), 'critical');
    assert.match(await frame.locator('[data-testid="metric-pass_rate"]').innerText(), /73\.9%/);
    assert.equal(await frame.locator('[data-testid="metric-mean_logprob"]').getAttribute('data-status'), 'n/a');
    assert.match(await frame.locator('[data-testid="finding-LEAK"]').innerText(), /git history/);
    assert.match(await frame.locator('[data-testid="failure-modes"]').innerText(), /format error loop/);
    await page.screenshot({ path: path.join(resultsDir, 'health-webview.png') });
  }));
});
