import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
// The provisioning script is plain JS so `npm test` can run it before tsx exists.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore: no declaration file for the .mjs setup script
import { chromiumPath, codeServerEntry, node24Bin } from '../../scripts/e2e-setup.mjs';
import { repoRoot } from '../helpers/tmp';

export const resultsDir = path.join(repoRoot, 'test-results', 'e2e');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface CodeServer {
  url: string;
  log: string;
  stop(): Promise<void>;
}

/**
 * A real VS Code (code-server) with the packaged .vsix installed, on a free loopback
 * port, in its own user-data and extensions folders, dark theme.
 */
export async function startCodeServer(opts: { workspace: string; home: string; vsix?: string }): Promise<CodeServer> {
  const vsix = opts.vsix ?? path.join(repoRoot, 'evotrainer.vsix');
  const node = path.join(node24Bin as string, 'node');
  const extDir = path.join(opts.home, 'extensions');
  const userData = path.join(opts.home, 'user-data');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.colorTheme': 'Default Dark Modern',
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'chat.disableAIFeatures': true,
    }),
  );
  const env = { ...process.env, PATH: `${node24Bin}${path.delimiter}${process.env.PATH}`, HOME: opts.home };
  const install = spawnSync(node, [codeServerEntry, '--extensions-dir', extDir, '--user-data-dir', userData, '--install-extension', vsix], { encoding: 'utf8', env });
  if (install.status !== 0 || !/successfully installed/.test(install.stdout)) {
    throw new Error(`installing ${vsix} into code-server failed:\n${install.stdout}\n${install.stderr}`);
  }
  const port = await freePort();
  const log = path.join(opts.home, 'code-server.log');
  const fd = openSync(log, 'w');
  const child: ChildProcess = spawn(
    node,
    [
      codeServerEntry,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-workspace-trust',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--extensions-dir', extDir,
      '--user-data-dir', userData,
      opts.workspace,
    ],
    { env, stdio: ['ignore', fd, fd], detached: true },
  );
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}:\n${readFileSync(log, 'utf8')}`);
    try {
      const res = await fetch(`${url}healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer on ${url} within 60 s:\n${readFileSync(log, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    log,
    async stop() {
      if (child.exitCode !== null || !child.pid) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      process.kill(-child.pid, 'SIGTERM'); // its whole process group, by pid
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
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
