// Starts a real VS Code (code-server) with the packaged extension installed, on a
// loopback port, in its own user-data and extensions folders. Used by `npm run demo`
// and by the e2e tests; stopped by pid (its whole process group).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { codeServerEntry, node24Bin } from './e2e-setup.mjs';

export async function freePort(preferred = 0) {
  const tryPort = (port) =>
    new Promise((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => {
        const { port: p } = srv.address();
        srv.close(() => resolve(p));
      });
    });
  if (preferred) {
    try {
      return await tryPort(preferred);
    } catch {
      // taken: any free port will do
    }
  }
  return tryPort(0);
}

const SETTINGS = {
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
};

/**
 * @param {{ workspace: string, home: string, vsix: string, also?: string[], settings?: Record<string, unknown>, port?: number, host?: string }} opts
 *   also: more .vsix files to install beside; settings: user settings over the defaults above
 * @returns {Promise<{ url: string, log: string, pid: number, stop: () => Promise<void> }>}
 */
export async function startCodeServer(opts) {
  const node = path.join(node24Bin, 'node');
  const extDir = path.join(opts.home, 'extensions');
  const userData = path.join(opts.home, 'user-data');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({ ...SETTINGS, ...opts.settings }, null, 2));
  const env = { ...process.env, PATH: `${node24Bin}${path.delimiter}${process.env.PATH}`, HOME: opts.home };
  for (const vsix of [opts.vsix, ...(opts.also ?? [])]) {
    const install = spawnSync(node, [codeServerEntry, '--extensions-dir', extDir, '--user-data-dir', userData, '--install-extension', vsix], { encoding: 'utf8', env });
    if (install.status !== 0 || !/successfully installed/.test(install.stdout)) {
      throw new Error(`installing ${vsix} into code-server failed:\n${install.stdout}\n${install.stderr}`);
    }
  }
  const host = opts.host ?? '127.0.0.1';
  const port = await freePort(opts.port ?? 0);
  const log = path.join(opts.home, 'code-server.log');
  const fd = openSync(log, 'w');
  const child = spawn(
    node,
    [
      codeServerEntry,
      '--auth', 'none',
      '--bind-addr', `${host}:${port}`,
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
  const url = `http://${host}:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}:\n${readFileSync(log, 'utf8')}`);
    try {
      const res = await fetch(`${url}healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid, 'SIGKILL');
      throw new Error(`code-server did not answer on ${url} within 60 s:\n${readFileSync(log, 'utf8')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    log,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
