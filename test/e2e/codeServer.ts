import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
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
  const box = await (await frame.frameElement()).boundingBox();
  if (!box) throw new Error(`the webview of ${name} is not visible`);
  await page.setViewportSize({ width: Math.round(before.width + width - box.width), height: before.height });
  try {
    await frame.waitForFunction((w) => Math.abs(window.innerWidth - w) <= 2, width, { timeout: 10_000 });
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
  return frame.locator(app).evaluate((host) => {
    const root = host.shadowRoot ?? host;
    const width = document.documentElement.clientWidth;
    const contained = (el: Element): boolean => {
      for (let p = el.parentElement ?? ((el.getRootNode() as ShadowRoot).host as Element | undefined); p && p !== host; p = p.parentElement ?? ((p.getRootNode() as ShadowRoot).host as Element | undefined)) {
        const cs = getComputedStyle(p);
        if (/auto|scroll|hidden/.test(cs.overflowX) || cs.textOverflow === 'ellipsis') return true;
      }
      return false;
    };
    return [...root.querySelectorAll('*')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        if (!r.width || contained(el) || getComputedStyle(el).textOverflow === 'ellipsis') return false;
        return r.right > width + 1 || (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible' && el.children.length === 0);
      })
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${(el.textContent ?? '').trim().slice(0, 40)}"`);
  });
}
