import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { requireSharedData, sweDir } from '../helpers/data';
import { HUGE_LINE_END, IMG_TEXT, SCRIPT_TEXT, TROJAN_TEXT, writeHostileTrajectory } from '../helpers/hostile';
import { repoRoot, tempDir } from '../helpers/tmp';
import { assertBarsProportional, atWebviewWidth, findFrame, openEditor, resultsDir, runCommand, startView, watchCspViolations, withScreenshot, type CodeServer } from './codeServer';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const cli = path.join(repoRoot, 'bin', 'evotrainer.js');
const app = 'evo-explorer-app';

function lum(rgb: string): number {
  const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** Text and colour of the page behind the explorer: dark or light as the theme says. */
async function themeOf(frame: Frame): Promise<{ fg: string; bg: string }> {
  return frame.locator(app).evaluate((el) => ({ fg: getComputedStyle(el).color, bg: getComputedStyle(document.body).backgroundColor }));
}

/** The hostile trajectory carries markup, ANSI codes and a 10 MB line: all of it must show as text and nothing may run. */
async function assertInert(frame: Frame): Promise<void> {
  const pwned = await frame.evaluate(() => (window as unknown as { __evoPwned?: unknown }).__evoPwned);
  assert.equal(pwned, undefined, 'no script from rollout text ran');
  const task = await frame.locator('[data-testid="text-1"]').innerText();
  assert.ok(task.includes(SCRIPT_TEXT) && task.includes(IMG_TEXT), `the markup shows literally: ${task.slice(0, 200)}`);
  assert.equal(await frame.locator(`${app} img, ${app} script`).count(), 0, 'no element was created from rollout text');
  const obs = frame.locator('[data-testid="text-3"]');
  assert.match(await obs.innerText(), /RED-ALERT plain after-title/);
  assert.doesNotMatch(await obs.innerText(), /\u001b|pwned-title/);
  const red = obs.locator('span.ansi-fg-1');
  assert.equal(await red.innerText(), 'RED-ALERT');
  assert.notEqual(await red.evaluate((el) => getComputedStyle(el).color), await obs.evaluate((el) => getComputedStyle(el).color), 'the ANSI red is a theme colour');
  assert.match(await frame.locator('[data-testid="diff"]').innerText(), /<script>window.__evoPwned/);
  // A right-to-left override and isolates ("Trojan Source"): each shown as its marked code point, in logical order.
  const trojan = frame.locator('[data-testid="text-2"]');
  const shownText = await trojan.innerText();
  assert.ok(shownText.includes('if access_level != "user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩" {'), `the override is marked: ${shownText.slice(0, 200)}`);
  assert.doesNotMatch(shownText, /[\u202a-\u202e\u2066-\u2069]/, 'no bidirectional control reaches the page');
  const mark = trojan.locator('span.hidden-char').first();
  assert.equal(await mark.innerText(), '⟨U+202E⟩');
  assert.equal(await mark.getAttribute('title'), 'U+202E RIGHT-TO-LEFT OVERRIDE');
  const style = await mark.evaluate((el) => ({ border: getComputedStyle(el).borderTopStyle, colour: getComputedStyle(el).color, text: getComputedStyle(el.parentElement!).color }));
  assert.equal(style.border, 'solid', 'the mark is boxed');
  assert.notEqual(style.colour, style.text, 'the mark stands out from the text around it');
  assert.ok(TROJAN_TEXT.includes('\u202E'));
  // The 10 MB line: 16,000 characters shown, the rest a page at a time.
  const huge = frame.locator('[data-testid="text-5"]');
  const before = (await huge.innerText()).length;
  assert.ok(before < 20_000, `shown ${before} characters of the 10 MB line`);
  const more = frame.locator('[data-testid="more-text-5"]');
  assert.match(await more.innerText(), /Show more \(10\.\d M characters left/);
  await more.click();
  await frame.waitForFunction((n) => {
    const el = document.querySelector('evo-explorer-app')?.shadowRoot?.querySelector('[data-testid="text-5"]');
    return (el?.textContent?.length ?? 0) > n;
  }, before + 60_000);
  assert.ok(!(await huge.innerText()).includes(HUGE_LINE_END), 'the end of the line is still to come');
  assert.equal(await frame.evaluate(() => (window as unknown as { __evoPwned?: unknown }).__evoPwned), undefined);
}

describe('failure explorer in a real VS Code (code-server in Chromium) and in a browser (evotrainer view)', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  const home = tempDir('evotrainer-e2e-explorer-');
  const workspace = path.join(home, 'harness');
  const settings = path.join(workspace, '.vscode', 'settings.json');
  let hostileId = 0;
  let csp: string[] = [];

  before(async () => {
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, 'evotrainer.yaml'), 'name: e2e-explorer\ndomain: swe\n');
    writeFileSync(settings, JSON.stringify({ 'workbench.colorTheme': 'Default Dark Modern' }));
    const hostile = path.join(home, 'hostile');
    writeHostileTrajectory(hostile);
    for (const [p, run] of [[path.join(sweDir, 'trajs'), 'swe'], [path.join(hostile, 'trajs'), 'hostile']] as const) {
      const r = spawnSync(process.execPath, [cli, 'import', p, '--run', run], { cwd: workspace, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }
    const list = spawnSync(process.execPath, [cli, 'rollouts', 'list', '--run', 'hostile', '--json'], { cwd: workspace, encoding: 'utf8' });
    hostileId = (JSON.parse(list.stdout) as { id: number }[])[0]!.id;
    // Room for the explorer: the secondary side bar, when the editor opens it, goes.
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1500, height: 950 }, hideSecondarySideBar: true }));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('opens from the palette, filters by a failure mode from the histogram, opens a trajectory; dark and light', () => withScreenshot(page, 'explorer', async () => {
    await runCommand(page, 'EvoTrainer: Open Failure Explorer');
    const frame = await findFrame(page, '[data-testid="explorer-histogram"]', 90_000);
    assert.match(await frame.locator('[data-testid="explorer-total"]').innerText(), /^304 rollouts$/);
    assert.match(await frame.locator('[data-testid="bar-format_error_loop"]').innerText(), /format error loop\s+74/);
    // First paint: each bar as long as its count says, no style refused by the CSP.
    await page.screenshot({ path: path.join(resultsDir, 'explorer-first-paint.png') });
    await assertBarsProportional(frame, '[data-testid="explorer-histogram"] .bar');
    assert.deepEqual(csp, []);
    await atWebviewWidth(page, frame, 'explorer', async () => {
      await assertBarsProportional(frame, '[data-testid="explorer-histogram"] .bar');
      const cut = await frame.locator(`${app} .thead .th`).evaluateAll((els) => els.filter((e) => getComputedStyle(e).display !== 'none' && e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
      assert.deepEqual(cut, [], 'no column header cut off at 600 px');
    });
    // Only the visible rows are in the DOM.
    assert.ok((await frame.locator('[data-row]').count()) < 80);
    await frame.locator('[data-testid="bar-format_error_loop"]').click();
    await frame.locator('[data-testid="explorer-total"]', { hasText: '74 rollouts match' }).waitFor({ timeout: 30_000 });
    const modes = await frame.locator('[data-row] span:nth-child(4)').allInnerTexts();
    assert.ok(modes.length > 5 && modes.every((m) => m === 'format error loop'), modes.join(','));
    // Sort by turns, longest first.
    await frame.locator('[data-testid="sort-num_turns"]').click();
    await frame.locator('[data-testid="sort-num_turns"]').click();
    await frame.locator('[data-testid="sort-num_turns"][aria-sort="descending"]').waitFor();
    await frame.waitForFunction(() => {
      const rows = [...(document.querySelector('evo-explorer-app')?.shadowRoot?.querySelectorAll('[data-row] span:nth-child(7)') ?? [])].map((e) => Number(e.textContent));
      return rows.length > 5 && rows.every((v, i) => i === 0 || v <= rows[i - 1]!);
    });
    const colors = await themeOf(frame);
    assert.ok(lum(colors.fg) > 150 && lum(colors.bg) < 60, `dark: ${colors.fg} on ${colors.bg}`);
    await page.screenshot({ path: path.join(resultsDir, 'explorer-dark.png') });

    const first = frame.locator('[data-row]').first();
    const id = await first.getAttribute('data-row');
    await first.click();
    const traj = frame.locator(`[data-testid="trajectory"][data-rollout="${id}"]`);
    await traj.waitFor({ timeout: 30_000 });
    assert.match(await frame.locator('[data-testid="trajectory-mode"]').innerText(), /format error loop/);
    assert.ok((await frame.locator('[data-testid^="cmd-"]').count()) > 5, 'the commands');
    assert.ok((await frame.locator('[data-testid^="rc-"]').count()) > 5, 'the return codes');
    assert.ok((await traj.locator('.flag', { hasText: 'format error' }).count()) > 0, 'the format errors that classify it');
    const diff = frame.locator('[data-testid="diff"]');
    assert.match(await diff.innerText(), /diff --git a\//);
    assert.ok((await diff.locator('.dl.add').count()) > 0 && (await diff.locator('.dl.del').count()) > 0, 'diff lines coloured by kind');
    await page.screenshot({ path: path.join(resultsDir, 'trajectory-dark.png') });
    await diff.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(resultsDir, 'trajectory-diff-dark.png') });

    // The light theme reaches the open webview.
    writeFileSync(settings, JSON.stringify({ 'workbench.colorTheme': 'Default Light Modern' }));
    await frame.waitForFunction(() => document.body.classList.contains('vscode-light'), undefined, { timeout: 30_000 });
    await page.waitForTimeout(300);
    const light = await themeOf(frame);
    assert.ok(lum(light.fg) < 100 && lum(light.bg) > 200, `light: ${light.fg} on ${light.bg}`);
    await frame.locator('[data-testid="msg-0"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(resultsDir, 'trajectory-light.png') });
    await diff.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(resultsDir, 'trajectory-diff-light.png') });
    await frame.locator('[data-testid="trajectory-close"]').click();
    await page.screenshot({ path: path.join(resultsDir, 'explorer-light.png') });
    writeFileSync(settings, JSON.stringify({ 'workbench.colorTheme': 'Default Dark Modern' }));
    await frame.waitForFunction(() => document.body.classList.contains('vscode-dark'), undefined, { timeout: 30_000 });
  }));

  it('renders a hostile trajectory inert: markup as text, ANSI as theme colours, a 10 MB line paged', () => withScreenshot(page, 'explorer-hostile', async () => {
    const frame = await findFrame(page, '[data-testid="explorer-search"]', 30_000);
    await frame.locator('[data-testid="bar-format_error_loop"]').click();
    await frame.locator('[data-testid="explorer-total"]', { hasText: '304 rollouts' }).waitFor({ timeout: 30_000 });
    await frame.locator('[data-testid="explorer-search"] input').fill('__evoPwned');
    await frame.locator('[data-testid="explorer-total"]', { hasText: '1 rollout matches' }).waitFor({ timeout: 30_000 });
    await frame.locator(`[data-testid="row-${hostileId}"]`).click();
    await frame.locator(`[data-testid="trajectory"][data-rollout="${hostileId}"]`).waitFor({ timeout: 30_000 });
    await assertInert(frame);
    await frame.locator('[data-testid="msg-1"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(resultsDir, 'trajectory-hostile-dark.png') });
    await atWebviewWidth(page, frame, 'trajectory', async () => {
      const traj = frame.locator(`[data-testid="trajectory"][data-rollout="${hostileId}"]`);
      const { scrollWidth, clientWidth } = await traj.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
      assert.ok(scrollWidth <= clientWidth + 1, `the trajectory fits 600 px: ${scrollWidth} > ${clientWidth}`);
    });
    // The panel closes, and with it the store (so `evotrainer view` can open it).
    await runCommand(page, 'View: Close All Editors');
    assert.deepEqual(csp, [], 'the webview console has no CSP violation');
  }));

  it('`evotrainer view` serves the same explorer in a plain browser, inert, in both colour schemes', async () => {
    const { child, url } = await startView(['--rollout', String(hostileId), '--run', 'hostile'], workspace);
    try {
      for (const scheme of ['light', 'dark'] as const) {
        const p = await browser.newPage({ viewport: { width: 1400, height: 900 }, colorScheme: scheme });
        const errors: string[] = [];
        p.on('pageerror', (e) => errors.push(e.message));
        const violations = watchCspViolations(p);
        await p.goto(url);
        await p.locator(`[data-testid="trajectory"][data-rollout="${hostileId}"]`).waitFor({ timeout: 30_000 });
        await p.locator('[data-testid="text-1"]').waitFor();
        await assertInert(p.mainFrame());
        const colors = await themeOf(p.mainFrame());
        if (scheme === 'dark') assert.ok(lum(colors.bg) < 60, colors.bg);
        else assert.ok(lum(colors.bg) > 200, colors.bg);
        await p.screenshot({ path: path.join(resultsDir, `view-browser-${scheme}.png`) });
        assert.deepEqual(errors, []);
        assert.deepEqual(violations, []);
        await p.close();
      }
      // Unfiltered, 600 px wide: the whole histogram, each bar as its count says on first paint.
      const p = await browser.newPage({ viewport: { width: 600, height: 900 } });
      const violations = watchCspViolations(p);
      await p.goto(url.split('?')[0]!);
      await p.locator('[data-testid="explorer-histogram"] .bar').first().waitFor({ timeout: 30_000 });
      await p.screenshot({ path: path.join(resultsDir, 'view-browser-600px.png') });
      await assertBarsProportional(p.mainFrame(), '[data-testid="explorer-histogram"] .bar');
      assert.deepEqual(violations, []);
      await p.close();
    } finally {
      child.kill('SIGINT');
    }
  });

  it('benchmark smoke: virtualized table vs a plain table in Chromium, printed with the row count', () => {
    const dir = tempDir('evotrainer-bench-explorer-');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/explorer.ts', '--rows', '5000', '--scroll', '1000', '--baseline', '500', '--dir', dir, '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    console.log(r.stdout.split('\n').filter((l) => !l.startsWith('{')).join('\n'));
    assert.match(r.stdout, /virtualized, 5,000 rows\s+first paint\s+\d+ ms/);
    assert.match(r.stdout, /first paint \d+\.\d\d× the baseline's/);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!) as { rows: number; scrolledRows: number; maxRowsInDom: number; firstPaintMs: number; paintRatio: number; frameRatio: number };
    assert.equal(res.rows, 5000);
    assert.equal(res.scrolledRows, 1000);
    assert.ok(res.maxRowsInDom < 100, `virtualized: at most ${res.maxRowsInDom} rows in the DOM`);
    for (const k of ['firstPaintMs', 'paintRatio', 'frameRatio'] as const) assert.ok(Number.isFinite(res[k]) && res[k] > 0, `${k} = ${res[k]}`);
  });
});
