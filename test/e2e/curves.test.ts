import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { initHarness } from '../../src/core/harness/init';
import { rejectVersion } from '../../src/core/harness/versions';
import { writeVerlLog } from '../helpers/curves';
import { vfLine, writeVfEval } from '../helpers/tokens';
import { repoRoot, tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, REWARD } from '../integration/harness/helpers';
import { atWebviewWidth, clippedIn, findFrame, openEditor, quickOpen, resultsDir, runCommand, startView, watchCspViolations, withScreenshot, type CodeServer } from './codeServer';

const cli = path.join(repoRoot, 'bin', 'evotrainer.js');
const app = 'evo-curves-app';
const STEPS = 60;

/** A run's curves: entropy from `e0` decaying by `decay` per step, the score rising. */
function run(e0: number, decay: number) {
  return Array.from({ length: STEPS }, (_, i) => ({
    'actor/entropy': Number((e0 * Math.exp(-decay * i)).toFixed(4)),
    'actor/grad_norm': Number((0.3 + 0.1 * Math.sin(i / 4)).toFixed(4)),
    'actor/pg_clipfrac': 0.01,
    'critic/score/mean': Number((0.3 + (0.5 * i) / STEPS).toFixed(4)),
  }));
}

/** verl's rollout dump of one step: `rollout_data/{step}.jsonl`, four rollouts of two prompts. */
function writeDump(dir: string, step: number): void {
  mkdirSync(dir, { recursive: true });
  const rows = [0, 1, 2, 3].map((k) => ({ input: `<|im_start|>user\nWhat is ${k % 2}+${step}?<|im_end|>\n<|im_start|>assistant\n`, output: `\\boxed{${(k % 2) + step + (k > 1 ? 1 : 0)}}`, gts: String((k % 2) + step), score: k > 1 ? 0 : 1, acc: k <= 1, step }));
  writeFileSync(path.join(dir, `${step}.jsonl`), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

/**
 * The training curves in a real VS Code: three versions' runs (v0 and v1 promoted, v2
 * rejected), their verl console logs and v1's rollout dumps imported by the CLI; the chart
 * overlays them by step, marks each version's standing, reads values under the cursor and
 * opens the failure explorer on a step's rollouts, by keyboard and by mouse.
 */
describe('real VS Code: training curves', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let csp: string[] = [];
  const home = tempDir('evotrainer-e2e-curves-');
  const workspace = path.join(home, 'harness');

  before(async () => {
    const h = (await initHarness(workspace, 'starter')).harness;
    await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.45 }, { promote: true });
    await evaluatedVersion(h, 'v1', (wt) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.5 if pred is not None else 0.0'), { pass_rate: 0.5 });
    await rejectVersion(h, 'v2', 'entropy collapsed while the score rose');
    const runs: [string, number, number][] = [['v0', 1.2, 0.004], ['v1', 1.25, 0.01], ['v2', 1.3, 0.06]];
    for (const [v, e0, decay] of runs) {
      const dir = path.join(home, 'runs', v);
      writeVerlLog(path.join(dir, 'train.log'), run(e0, decay));
      if (v === 'v1') for (let s = 10; s <= STEPS; s += 10) writeDump(path.join(dir, 'rollout_data'), s);
      const r = spawnSync(process.execPath, [cli, 'import', dir, '--run', `train-${v}`, '--version', v], { cwd: workspace, encoding: 'utf8' });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    }
    // A verifiers eval whose model calls carry per-token log-probabilities: a short call, then a 20,000-token one with one very unlikely token.
    const long = Array.from({ length: 20_000 }, (_, i) => (i === 12_345 ? -11 : -((i % 17) / 20)));
    const vf = writeVfEval(path.join(home, 'vf'), [vfLine(7, [[-0.02, -0.4, -3.1, -0.01, -6.5, -0.2], long])]);
    const r = spawnSync(process.execPath, [cli, 'import', vf, '--run', 'vf-eval'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1400, height: 900 }, hideSecondarySideBar: true }));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const readout = (frame: Frame) => frame.locator('[data-testid="curves-readout"]').innerText();

  it('overlays the runs of every version by step, marks promotions and the rejection, fits 600 px', () => withScreenshot(page, 'curves', async () => {
    await runCommand(page, 'EvoTrainer: Show Training Curves');
    const frame = await findFrame(page, '[data-testid="curves-chart"]', 90_000);
    assert.equal(await frame.locator('[data-testid="curves-metric"]').evaluate((e) => (e as HTMLSelectElement).value), 'entropy');
    const lines = frame.locator(`${app} path.line`);
    assert.equal(await lines.count(), 3);
    for (const d of await lines.evaluateAll((els) => els.map((e) => e.getAttribute('d') ?? ''))) assert.ok((d.match(/L/g) ?? []).length >= 20, `a drawn line: ${d.slice(0, 60)}`);
    // Each line's colour is a theme chart colour, and no two are the same.
    const strokes = await lines.evaluateAll((els) => els.map((e) => getComputedStyle(e).stroke));
    assert.equal(new Set(strokes).size, 3, strokes.join(' '));
    // Promoted versions as stars at their curve's end (and a rule at that step), the rejected one crossed.
    assert.equal(await frame.locator('[data-testid="mark-v1"]').evaluate((e) => e.tagName), 'polygon');
    assert.equal(await frame.locator('[data-testid="mark-v0"]').evaluate((e) => e.tagName), 'polygon');
    assert.equal(await frame.locator('[data-testid="mark-v2"]').evaluate((e) => e.tagName), 'path');
    assert.match(await frame.locator(`${app} .promotion-label`).first().textContent() ?? '', /v1 ★.*promoted|v0, v1 ★ promoted/);
    assert.match(await frame.locator(`${app} .legend`).innerText(), /train-v2@v2\s+rejected/);
    // The ✕ in its curve's colour, over a halo of the background (it ends near the axis, over a dump tick).
    const stroke = (sel: string) => frame.locator(sel).evaluate((e) => getComputedStyle(e).stroke);
    assert.equal(await stroke('[data-testid="mark-v2"]'), await stroke('[data-testid="line-train-v2@v2"]'));
    assert.notEqual(await stroke('[data-testid="mark-v2"]'), await frame.locator(`${app} .marker-halo`).evaluate((e) => getComputedStyle(e).stroke));
    // The second colour, the theme's orange, lifted in the dark theme so that it does not read brown: light and saturated.
    const orange = await stroke('[data-testid="line-train-v1@v1"]');
    // rgb(r, g, b), or color(srgb r g b) in 0…1 for a mixed colour.
    const [r, g, b] = orange.match(/[\d.]+/g)!.map((v) => (orange.startsWith('color(') ? Number(v) * 255 : Number(v)));
    const [hi, lo] = [Math.max(r!, g!, b!), Math.min(r!, g!, b!)];
    assert.ok(r === hi && (hi + lo) / 2 / 255 > 0.52 && (hi - lo) / 255 > 0.6, `an orange, not a brown: rgb(${r}, ${g}, ${b})`);
    // Rollouts dumped at v1's steps 10…60: ticks under the axis.
    assert.equal(await frame.locator(`${app} svg.plot .dump`).count(), 6);
    await page.mouse.move(5, 880);
    await page.screenshot({ path: path.join(resultsDir, 'curves-first-paint.png') });
    assert.deepEqual(csp, [], 'no CSP violation on first paint');
    await atWebviewWidth(page, frame, 'curves', async () => {
      assert.deepEqual(await clippedIn(frame, app), [], 'nothing cut off at 600 px');
      const w = await frame.locator(`${app} svg.plot`).evaluate((e) => ({ box: e.getBoundingClientRect().width, view: Number(e.getAttribute('viewBox')!.split(' ')[2]) }));
      assert.ok(Math.abs(w.box - w.view) < 2, `the chart is drawn for its width: ${JSON.stringify(w)}`);
    });
  }));

  it('reads values by keyboard and opens the failure explorer on the rollouts of a step', () => withScreenshot(page, 'curves-keyboard', async () => {
    const frame = await findFrame(page, '[data-testid="curves-chart"]');
    const chart = frame.locator('[data-testid="curves-chart"]');
    assert.match((await chart.getAttribute('aria-label')) ?? '', /entropy over training steps 1 to 60 for 3 run\(s\): train-v0@v0, train-v1@v1, train-v2@v2/);
    await chart.focus();
    await page.keyboard.press('Home');
    assert.match(await readout(frame), /step 1 · train-v0@v0 actor\/entropy 1\.2/);
    await page.keyboard.press('ArrowDown');
    assert.match(await readout(frame), /step 1 · train-v1@v1 actor\/entropy 1\.25/);
    for (let i = 0; i < 19; i++) await page.keyboard.press('ArrowRight');
    assert.match(await readout(frame), /step 20 · train-v1@v1 .* 4 rollouts dumped here/);
    await page.screenshot({ path: path.join(resultsDir, 'curves-cursor.png') });
    await page.keyboard.press('Enter');
    const explorer = await findFrame(page, '[data-testid="explorer-total"]', 60_000);
    await explorer.locator('[data-testid="explorer-total"]', { hasText: '4 rollouts match' }).waitFor({ timeout: 30_000 });
    assert.equal(await explorer.locator('[data-testid="explorer-step"]').evaluate((e) => (e as HTMLInputElement).value), '20');
    assert.equal(await explorer.locator('[data-testid="explorer-run"]').evaluate((e) => (e as HTMLSelectElement).value), 'train-v1');
    await page.screenshot({ path: path.join(resultsDir, 'curves-explorer-step.png') });
  }));

  it('by mouse: another metric, a step without dumps opens the nearest step that has some', () => withScreenshot(page, 'curves-mouse', async () => {
    await runCommand(page, 'EvoTrainer: Show Training Curves');
    const frame = await findFrame(page, '[data-testid="curves-chart"]');
    await frame.locator('[data-testid="curves-metric"]').click();
    await frame.getByRole('option', { name: 'grad_norm (actor/grad_norm)' }).click();
    await frame.locator('[data-testid="curves-chart"][aria-label^="grad_norm over training steps"]').waitFor({ timeout: 30_000 });
    // Only v1's line: hide the others from the legend.
    await frame.locator('[data-testid="series-train-v0@v0"]').click();
    await frame.locator('[data-testid="series-train-v2@v2"]').click();
    assert.equal(await frame.locator(`${app} path.line`).count(), 1);
    // Point at step ~33 of the line, then click.
    const svgBox = (await frame.locator(`${app} svg.plot`).boundingBox())!;
    const d = (await frame.locator(`${app} path.line`).getAttribute('d'))!;
    const pts = [...d.matchAll(/[ML]([\d.]+),([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    const view = await frame.locator(`${app} svg.plot`).evaluate((e) => Number(e.getAttribute('viewBox')!.split(' ')[2]));
    const [px, py] = pts[32]!;
    await page.mouse.move(svgBox.x + (px * svgBox.width) / view, svgBox.y + (py * svgBox.height) / 320);
    assert.match(await readout(frame), /step 33 · train-v1@v1 actor\/grad_norm .* nearest rollouts at step 30/);
    await page.mouse.down();
    await page.mouse.up();
    assert.match(await readout(frame), /Step 33 dumped no rollouts: opened the nearest step that did, 30/);
    const explorer = await findFrame(page, '[data-testid="explorer-total"]', 60_000);
    await explorer.waitForFunction(() => (document.querySelector('evo-explorer-app')?.shadowRoot?.querySelector('[data-testid="explorer-step"]') as HTMLInputElement | null)?.value === '30', undefined, { timeout: 30_000 });
    assert.deepEqual(csp, [], 'the webview console has no CSP violation');
  }));

  it('the trajectory viewer shows each model call\'s per-token log-probabilities as a heat strip', () => withScreenshot(page, 'token-strip', async () => {
    const frame = await findFrame(page, '[data-testid="explorer-run"]');
    // Opened from the curves filtered to a version: the filter shows, and goes with a click.
    assert.match(await frame.locator('[data-testid="explorer-version"]').innerText(), /version v1/);
    await frame.locator('[data-testid="explorer-version"]').click();
    await frame.locator('[data-testid="explorer-version"]').waitFor({ state: 'detached', timeout: 15_000 });
    await frame.locator('[data-testid="explorer-step"] input').fill('');
    await frame.locator('[data-testid="explorer-step"] input').press('Enter');
    await frame.locator('[data-testid="explorer-run"]').click();
    await frame.getByRole('option', { name: 'vf-eval' }).click();
    await frame.locator('[data-testid="explorer-total"]', { hasText: /^1 rollout matches$/ }).waitFor({ timeout: 30_000 });
    await frame.locator('[data-row]').first().click();
    const short = frame.locator('[data-testid="token-strip-logprob-0"]');
    const long = frame.locator('[data-testid="token-strip-logprob-1"]');
    await long.waitFor({ timeout: 30_000 });
    assert.match((await short.getAttribute('aria-label')) ?? '', /^Per-token log-probability of 6 tokens: mean -1\.705, lowest -6\.5 at token 5, 1 token\(s\) at or below -6/);
    assert.match((await long.getAttribute('aria-label')) ?? '', /^Per-token log-probability of 20,000 tokens: .*lowest -11 at token 12346/);
    // Each strip sits under the reply it scores: the tool call, then the final answer.
    const placed = await frame.locator('evo-token-strip').evaluateAll((els) => els.map((e) => e.closest('[data-testid^="msg-"]')?.getAttribute('data-testid')));
    assert.equal(placed.length, 2);
    assert.notEqual(placed[0], placed[1]);
    // The unlikely token is drawn strongest: the canvas's pixel there is the theme's red, nearly opaque.
    // (No named functions inside: the page runs this code as serialized text.)
    const px = await long.evaluate((c) => {
      const canvas = c as HTMLCanvasElement;
      const ctx = canvas.getContext('2d')!;
      const y = Math.floor(canvas.height / 2);
      return {
        spike: [...ctx.getImageData(Math.floor(((12_345 + 0.5) / 20_000) * canvas.width), y, 1, 1).data],
        calm: [...ctx.getImageData(Math.floor(canvas.width * 0.05), y, 1, 1).data],
      };
    });
    assert.ok(px.spike[0]! > 150 && px.spike[0]! > px.spike[2]!, `the spike is red: ${px.spike}`);
    assert.ok(px.calm[3]! < px.spike[3]! || px.calm[0]! < px.spike[0]!, `a likely stretch is paler: ${px.calm} vs ${px.spike}`);
    // By keyboard: Home, then End reads the last token.
    await long.focus();
    await page.keyboard.press('End');
    assert.match(await frame.locator('evo-token-strip').nth(1).locator('.readout').innerText(), /^token 20000 of 20000: log-probability -0\.\d+$/);
    await short.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(resultsDir, 'token-strip-dark.png') });
    await atWebviewWidth(page, frame, 'token-strip', async () => {
      const { cw, tw } = await long.evaluate((c) => ({ cw: c.getBoundingClientRect().right, tw: document.documentElement.clientWidth }));
      assert.ok(cw <= tw + 1, `the strip fits 600 px: ${cw} > ${tw}`);
    });
    assert.deepEqual(csp, [], 'no CSP violation');
  }));

  it('the explorer and the curves hidden behind another tab and shown again show the store as it is now', () => withScreenshot(page, 'reshown', async () => {
    const tab = (title: string) => page.locator('.tabs-container .tab', { hasText: title }).first();
    const v1Stroke = await (await findFrame(page, '[data-testid="curves-chart"]')).locator('[data-testid="line-train-v1@v1"]').evaluate((e) => getComputedStyle(e).stroke);
    // The explorer on the rollouts dumped at step 20: v1's four.
    let explorer = await findFrame(page, '[data-testid="explorer-run"]');
    await explorer.locator('[data-testid="explorer-run"]').click();
    await explorer.getByRole('option', { name: 'all runs' }).click();
    await explorer.locator('[data-testid="explorer-step"] input').fill('20');
    await explorer.locator('[data-testid="explorer-step"] input').press('Enter');
    await explorer.locator('[data-testid="explorer-total"]', { hasText: /^4 rollouts match$/ }).waitFor({ timeout: 30_000 });
    // Another editor in front of both panels: the manifest, opened the way a person does (Quick Open).
    await quickOpen(page, 'evotrainer.yaml');
    assert.equal(await page.locator('.tabs-container .tab.active', { hasText: /EvoTrainer: (Failures|Curves)/ }).count(), 0, 'both panels are behind');
    // Meanwhile the CLI imports a fourth run, with rollouts dumped at steps 10…60: the hidden explorer lets go of the store for it.
    const dir = path.join(home, 'runs', 'later');
    writeVerlLog(path.join(dir, 'train.log'), run(1.4, 0.02));
    for (let s = 10; s <= STEPS; s += 10) writeDump(path.join(dir, 'rollout_data'), s);
    const r = spawnSync(process.execPath, [cli, 'import', dir, '--run', 'train-later'], { cwd: workspace, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    // The explorer shown again: the same filter over the store as it is now.
    await tab('EvoTrainer: Failures').click();
    explorer = await findFrame(page, '[data-testid="explorer-run"]');
    await explorer.locator('[data-testid="explorer-total"]', { hasText: /^8 rollouts match$/ }).waitFor({ timeout: 60_000 });
    assert.equal(await explorer.locator('[data-testid="explorer-step"]').evaluate((e) => (e as HTMLInputElement).value), '20');
    assert.equal(await explorer.locator('[data-testid="explorer-run"] vscode-option', { hasText: 'train-later' }).count(), 1);
    await page.screenshot({ path: path.join(resultsDir, 'explorer-reshown.png') });
    // The curves shown again: the new run's line beside v1's, the metric and the hidden series kept.
    await tab('EvoTrainer: Curves').click();
    const frame = await findFrame(page, '[data-testid="series-train-later"]', 60_000);
    const stroke = (sel: string) => frame.locator(sel).evaluate((e) => getComputedStyle(e).stroke);
    assert.match((await frame.locator('[data-testid="curves-chart"]').getAttribute('aria-label')) ?? '', /^grad_norm over training steps 1 to 60 for 2 run\(s\): train-later, train-v1@v1\./);
    assert.equal(await frame.locator(`${app} path.line`).count(), 2, "v1's line and the new run's");
    const face = await frame.locator('[data-testid="curves-metric"]').evaluate((el) => el.shadowRoot?.querySelector('.select-face .text')?.textContent ?? '');
    assert.equal(face, 'grad_norm (actor/grad_norm)', 'the select shows the metric');
    // Each run keeps its colour: v1's line is drawn as before the import, the new run in a colour of its own.
    assert.equal(await stroke('[data-testid="line-train-v1@v1"]'), v1Stroke);
    assert.notEqual(await stroke('[data-testid="line-train-later"]'), v1Stroke);
    await page.mouse.move(5, 880);
    await page.screenshot({ path: path.join(resultsDir, 'curves-reshown.png') });
    assert.deepEqual(csp, [], 'no CSP violation');
  }));

  it('`evotrainer view --curves` serves the chart in a plain browser; a step opens the explorer page, which links back', async () => {
    // The explorer panel is hidden behind the curves: the store is free for the view server.
    const { child, out } = await startView(['--curves'], workspace);
    try {
      const url = /Training curves for .*:\n {2}(\S+)/.exec(out)![1]!;
      for (const scheme of ['dark', 'light'] as const) {
        const p = await browser.newPage({ viewport: { width: 1200, height: 800 }, colorScheme: scheme });
        const errors: string[] = [];
        p.on('pageerror', (e) => errors.push(e.message));
        const violations = watchCspViolations(p);
        await p.goto(url);
        await p.locator('[data-testid="curves-chart"]').waitFor({ timeout: 30_000 });
        assert.equal(await p.locator(`${app} path.line`).count(), 4);
        // The link to the explorer in the theme's link colour, not the browser's.
        assert.equal(await p.locator('[data-testid="curves-explorer-link"]').evaluate((e) => getComputedStyle(e).color), scheme === 'dark' ? 'rgb(77, 170, 252)' : 'rgb(0, 95, 184)');
        assert.match(await p.locator(`${app} .legend`).innerText(), /train-v2@v2\s+rejected/);
        const strokes = await p.locator(`${app} path.line`).evaluateAll((els) => els.map((e) => getComputedStyle(e).stroke));
        assert.equal(new Set(strokes).size, 4, `a colour each, from the page's theme: ${strokes.join(' ')}`);
        await p.mouse.move(5, 790);
        await p.screenshot({ path: path.join(resultsDir, `view-curves-${scheme}.png`) });
        assert.deepEqual(errors, []);
        assert.deepEqual(violations, []);
        if (scheme === 'light') {
          await p.close();
          continue;
        }
        // Another metric: the host answers with the new state.
        await p.locator('[data-testid="curves-metric"]').click();
        await p.getByRole('option', { name: 'grad_norm (actor/grad_norm)' }).click();
        await p.locator('[data-testid="curves-chart"][aria-label^="grad_norm over training steps"]').waitFor({ timeout: 30_000 });
        // A step by keyboard: Enter opens the explorer page on v1's rollouts at step 20.
        await p.locator('[data-testid="series-train-v0@v0"]').click();
        await p.locator('[data-testid="series-train-later"]').click();
        await p.locator('[data-testid="curves-chart"]').focus();
        await p.keyboard.press('Home');
        for (let i = 0; i < 19; i++) await p.keyboard.press('ArrowRight');
        assert.match(await p.locator('[data-testid="curves-readout"]').innerText(), /step 20 · train-v1@v1 .* 4 rollouts dumped here/);
        await p.keyboard.press('Enter');
        await p.locator('[data-testid="explorer-total"]', { hasText: /^4 rollouts match$/ }).waitFor({ timeout: 30_000 });
        assert.equal(await p.locator('[data-testid="explorer-run"]').evaluate((e) => (e as HTMLSelectElement).value), 'train-v1');
        await p.screenshot({ path: path.join(resultsDir, 'view-curves-step-explorer.png') });
        await p.locator('[data-testid="explorer-curves-link"]').click();
        await p.locator('[data-testid="curves-chart"]').waitFor({ timeout: 30_000 });
        assert.deepEqual(errors, []);
        assert.deepEqual(violations, []);
        await p.close();
      }
    } finally {
      child.kill('SIGINT');
    }
  });
});
