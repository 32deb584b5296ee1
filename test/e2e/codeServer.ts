import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Frame, type Locator, type Page } from 'playwright-core';
// The provisioning and launch scripts are plain JS: `npm run demo` uses them without tsx.
import { startCodeServer as startCodeServerScript } from '../../scripts/code-server.mjs';
import { chromiumPath } from '../../scripts/e2e-setup.mjs';
import { repoRoot } from '../helpers/tmp';

export const resultsDir = path.join(repoRoot, 'test-results', 'e2e');

export interface CodeServer {
  url: string;
  log: string;
  pid: number;
  stop(): Promise<void>;
}

/** code-server with this build's .vsix installed (see scripts/code-server.mjs). */
export function startCodeServer(opts: { workspace: string; home: string; vsix?: string; also?: string[]; settings?: Record<string, unknown> }): Promise<CodeServer> {
  return startCodeServerScript({ ...opts, vsix: opts.vsix ?? path.join(repoRoot, 'evotrainer.vsix') }) as Promise<CodeServer>;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath as string,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface Editor {
  server: CodeServer;
  browser: Browser;
  page: Page;
  /** Content-security-policy violations the page's console reported (see watchCspViolations). */
  csp: string[];
}

/**
 * code-server on `workspace` (with the extensions packed in `also` beside this build's), a
 * browser page at `viewport` watched for CSP violations, the workbench open with the
 * extension in it (and the secondary side bar closed, for room, with `hideSecondarySideBar`). What started is stopped again when a later step fails.
 */
export async function openEditor(opts: { workspace: string; home: string; viewport: { width: number; height: number }; hideSecondarySideBar?: boolean; also?: string[] }): Promise<Editor> {
  const server = await startCodeServer({ workspace: opts.workspace, home: opts.home, also: opts.also });
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: opts.viewport });
    const csp = watchCspViolations(page);
    await openWorkbench(page, server.url);
    if (opts.hideSecondarySideBar) await runCommand(page, 'View: Hide Secondary Side Bar', 8_000).catch(() => page.keyboard.press('Escape'));
    mkdirSync(resultsDir, { recursive: true });
    return { server, browser, page, csp };
  } catch (e) {
    await browser?.close();
    await server.stop();
    throw e;
  }
}

/**
 * `evotrainer view` with `args`, in `cwd`, once it has printed its URLs (`out`: all it
 * printed; `url`: the first URL). The editor's explorer lets go of the store a moment after
 * its panel closes or hides: while the store is still held, it tries again.
 */
export async function startView(args: string[], cwd: string): Promise<{ child: ChildProcess; out: string; url: string }> {
  const cli = path.join(repoRoot, 'bin', 'evotrainer.js');
  const start = () =>
    new Promise<{ child: ChildProcess; out: string; url: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [cli, 'view', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(out);
        if (m && /Ctrl-C stops it/.test(out)) resolve({ child, out, url: m[1]! });
      });
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', (code) => reject(new Error(`view exited ${code}: ${out}`)));
    });
  for (let attempt = 0; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 10 || !/open in another process/.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Opens the workbench and waits until the extension's contributions are in it. */
export async function openWorkbench(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await activityBarItem(page, 'EvoTrainer').waitFor({ timeout: 60_000 });
}

export function activityBarItem(page: Page, label: string) {
  return page.locator(`.activitybar .action-item[role="tab"][aria-label="${label}"], .activitybar .action-item a[aria-label="${label}"]`).first();
}

/**
 * Runs a command by its palette title, the way a person does. The palette lists
 * extension commands once the extension host has registered them, so it retries.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const input = page.locator('.quick-input-widget input');
  for (;;) {
    await page.keyboard.press('F1');
    await input.waitFor({ timeout: 15_000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ timeout: 5_000 });
      await input.press('Enter');
      return;
    } catch (err) {
      await page.keyboard.press('Escape');
      if (Date.now() > deadline) throw new Error(`command "${title}" never appeared in the palette: ${String(err)}`);
    }
  }
}

/** Runs a step; on failure saves what the screen showed, then fails with the cause. */
/** Opens a workspace file the way a person does (Quick Open) and waits for its tab to be the active one. */
export async function quickOpen(page: Page, fileName: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(fileName);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 15_000 });
  await input.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: fileName }).waitFor({ timeout: 15_000 });
}

/**
 * Chooses a context-menu entry: menus act on mouse-up after they settle, so hover first, then
 * click the item's label; a click the menu did not take (it is still open) is made with Enter.
 */
export async function chooseMenuItem(page: Page, entry: Locator): Promise<void> {
  await entry.hover();
  await entry.locator('.action-label').first().click();
  await page.locator('.monaco-menu').first().waitFor({ state: 'detached', timeout: 5_000 }).catch(async () => {
    await entry.hover();
    await page.keyboard.press('Enter');
  });
}

export async function withScreenshot<T>(page: Page, name: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: path.join(resultsDir, `FAILED-${name}.png`) }).catch(() => undefined);
    throw err;
  }
}

/** Webview content lives in nested frames: find the one holding the selector. */
export async function findFrame(page: Page, selector: string, timeoutMs = 30_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      try {
        if ((await frame.locator(selector).count()) > 0) return frame;
      } catch {
        // frame navigated away while we looked
      }
    }
    if (Date.now() > deadline) throw new Error(`no frame contains ${selector} after ${timeoutMs} ms (frames: ${page.frames().length})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Collects the Content-Security-Policy violations that any frame of the page, webviews
 * included, logs to its console (Chromium reports them as console errors).
 */
export function watchCspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(`${m.location().url}: ${m.text()}`);
  });
  return seen;
}

/**
 * Histogram bars (`selector`, each with its `data-count`) are as long as their counts say,
 * relative to the longest: on first paint, not only after an update.
 */
export async function assertBarsProportional(frame: Frame, selector: string): Promise<void> {
  const bars = await frame.locator(selector).evaluateAll((els) => els.map((e) => ({ w: e.getBoundingClientRect().width, n: Number(e.getAttribute('data-count')) })));
  assert.ok(bars.length >= 2 && bars.every((b) => b.n >= 0), JSON.stringify(bars));
  const maxW = Math.max(...bars.map((b) => b.w));
  const maxN = Math.max(...bars.map((b) => b.n));
  assert.ok(bars.some((b) => b.n < maxN / 2), `a bar well below the longest: ${JSON.stringify(bars)}`);
  for (const b of bars) assert.ok(Math.abs(b.w / maxW - b.n / maxN) < 0.03, `bar of ${b.n} is ${b.w.toFixed(0)} px of ${maxW.toFixed(0)} px: ${JSON.stringify(bars)}`);
}

/**
 * Resizes the browser so that the webview showing `frame` is `width` px wide (600 by
 * default: a narrow editor column), runs `check`, saves a screenshot, and restores the size.
 */
export async function atWebviewWidth(page: Page, frame: Frame, name: string, check: () => Promise<void>, width = 600): Promise<void> {
  const before = page.viewportSize()!;
  const frameWidth = async () => {
    const box = await (await frame.frameElement()).boundingBox();
    if (!box) throw new Error(`the webview of ${name} is not visible`);
    return box.width;
  };
  try {
    // The webview may share the editor area with another editor, growing slower than the page: step towards the width.
    let w = before.width;
    let have = await frameWidth();
    let slope = 1;
    for (let i = 0; i < 6 && Math.abs(have - width) > 3; i++) {
      const next = Math.max(420, Math.round(w + (width - have) / slope));
      await page.setViewportSize({ width: next, height: before.height });
      await page.waitForTimeout(300);
      const now = await frameWidth();
      if (next !== w && now !== have) slope = Math.max(0.2, (now - have) / (next - w));
      w = next;
      have = now;
    }
    assert.ok(Math.abs(have - width) <= 3, `the webview of ${name} is ${have} px wide, not ${width}`);
    await page.screenshot({ path: path.join(resultsDir, `${name}-${width}px.png`) });
    await check();
  } finally {
    await page.setViewportSize(before);
  }
}

/**
 * What a webview app (`app`: its custom element) shows past the right edge of its frame or
 * cuts inside a box, other than inside a scrolling or ellipsized box: `tag.class "text"`.
 */
export function clippedIn(frame: Frame, app: string): Promise<string[]> {
  // No named functions inside: the page runs this code as serialized text.
  return frame.locator(app).evaluate((host) => {
    const width = document.documentElement.clientWidth;
    return [...(host.shadowRoot ?? host).querySelectorAll('*')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        if (!r.width || getComputedStyle(el).textOverflow === 'ellipsis') return false;
        for (let p: Element | null = el.parentElement ?? ((el.getRootNode() as ShadowRoot).host ?? null); p && p !== host; p = p.parentElement ?? ((p.getRootNode() as ShadowRoot).host ?? null)) {
          const cs = getComputedStyle(p);
          if (/auto|scroll|hidden/.test(cs.overflowX) || cs.textOverflow === 'ellipsis') return false;
        }
        return r.right > width + 1 || (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible' && el.children.length === 0);
      })
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${(el.textContent ?? '').trim().slice(0, 40)}"`);
  });
}
