import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FAILURE_MODES } from '../../core/diagnose/failureModes';
import { RolloutStore } from '../../core/store/store';
import { renderWebviewHtml } from '../../extension/webviews/html';
import { ExplorerBackend } from '../../extension/webviews/explorer/backend';
import { PAGE_ROWS, type OpenExplorerArgs } from '../../extension/webviews/explorer/protocol';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { STORE_FLAG, storePath } from '../store';

/**
 * The --vscode-* colours the explorer styles itself with, outside the editor: VS Code's
 * Dark Modern and Light Modern values, chosen by the browser's colour scheme.
 */
const THEME_CSS = `
:root {
  --vscode-font-family: system-ui, -apple-system, "Segoe UI", Ubuntu, sans-serif; --vscode-font-size: 13px; --vscode-font-weight: normal;
  --vscode-editor-font-family: ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", monospace; --vscode-editor-font-size: 12px;
  --vscode-editor-background: #1f1f1f; --vscode-foreground: #cccccc; --vscode-descriptionForeground: #9d9d9d; --vscode-errorForeground: #f85149;
  --vscode-editorWarning-foreground: #cca700; --vscode-focusBorder: #0078d4; --vscode-panel-border: #2b2b2b; --vscode-widget-border: #313131;
  --vscode-editorWidget-background: #202020; --vscode-textCodeBlock-background: #2b2b2b; --vscode-textLink-foreground: #4daafc;
  --vscode-list-hoverBackground: #2a2d2e; --vscode-list-activeSelectionBackground: #04395e; --vscode-list-activeSelectionForeground: #ffffff;
  --vscode-charts-blue: #3794ff; --vscode-charts-green: #89d185; --vscode-charts-purple: #b180d7; --vscode-testing-iconPassed: #73c991;
  --vscode-gitDecoration-addedResourceForeground: #81b88b; --vscode-gitDecoration-deletedResourceForeground: #c74e39;
  --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2); --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
  --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff; --vscode-button-hoverBackground: #026ec1;
  --vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc; --vscode-button-secondaryHoverBackground: #3c3c3c;
  --vscode-input-background: #313131; --vscode-input-foreground: #cccccc; --vscode-input-border: #3c3c3c; --vscode-input-placeholderForeground: #989898;
  --vscode-dropdown-background: #313131; --vscode-dropdown-foreground: #cccccc; --vscode-dropdown-border: #3c3c3c; --vscode-settings-dropdownListBorder: #454545;
  --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8; --vscode-progressBar-background: #0078d4;
  --vscode-settings-textInputBackground: #313131; --vscode-settings-textInputForeground: #cccccc; --vscode-settings-textInputBorder: #3c3c3c;
  --vscode-settings-dropdownBackground: #313131; --vscode-settings-dropdownForeground: #cccccc; --vscode-settings-dropdownBorder: #3c3c3c;
  --vscode-widget-shadow: rgba(0, 0, 0, 0.36); --vscode-list-focusOutline: #0078d4; --vscode-list-highlightForeground: #2aaaff;
  --vscode-terminal-ansiBlack: #000000; --vscode-terminal-ansiRed: #cd3131; --vscode-terminal-ansiGreen: #0dbc79; --vscode-terminal-ansiYellow: #e5e510;
  --vscode-terminal-ansiBlue: #2472c8; --vscode-terminal-ansiMagenta: #bc3fbc; --vscode-terminal-ansiCyan: #11a8cd; --vscode-terminal-ansiWhite: #e5e5e5;
  --vscode-terminal-ansiBrightBlack: #666666; --vscode-terminal-ansiBrightRed: #f14c4c; --vscode-terminal-ansiBrightGreen: #23d18b; --vscode-terminal-ansiBrightYellow: #f5f543;
  --vscode-terminal-ansiBrightBlue: #3b8eea; --vscode-terminal-ansiBrightMagenta: #d670d6; --vscode-terminal-ansiBrightCyan: #29b8db; --vscode-terminal-ansiBrightWhite: #e5e5e5;
  color-scheme: dark;
}
@media (prefers-color-scheme: light) {
  :root {
    --vscode-editor-background: #ffffff; --vscode-foreground: #3b3b3b; --vscode-descriptionForeground: #717171; --vscode-errorForeground: #f85149;
    --vscode-editorWarning-foreground: #bf8803; --vscode-focusBorder: #005fb8; --vscode-panel-border: #e5e5e5; --vscode-widget-border: #e5e5e5;
    --vscode-editorWidget-background: #f8f8f8; --vscode-textCodeBlock-background: #f0f0f0; --vscode-textLink-foreground: #005fb8;
    --vscode-list-hoverBackground: #f2f2f2; --vscode-list-activeSelectionBackground: #e8e8e8; --vscode-list-activeSelectionForeground: #000000;
    --vscode-charts-blue: #1a85ff; --vscode-charts-green: #388a34; --vscode-charts-purple: #652d90; --vscode-testing-iconPassed: #388a34;
    --vscode-gitDecoration-addedResourceForeground: #587c0c; --vscode-gitDecoration-deletedResourceForeground: #ad0707;
    --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2); --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
    --vscode-button-secondaryBackground: #e5e5e5; --vscode-button-secondaryForeground: #3b3b3b; --vscode-button-secondaryHoverBackground: #cccccc;
    --vscode-input-background: #ffffff; --vscode-input-foreground: #3b3b3b; --vscode-input-border: #cecece; --vscode-input-placeholderForeground: #767676;
    --vscode-dropdown-background: #ffffff; --vscode-dropdown-foreground: #3b3b3b; --vscode-dropdown-border: #cecece; --vscode-settings-dropdownListBorder: #cecece;
    --vscode-badge-background: #cccccc; --vscode-badge-foreground: #3b3b3b;
    --vscode-settings-textInputBackground: #ffffff; --vscode-settings-textInputForeground: #3b3b3b; --vscode-settings-textInputBorder: #cecece;
    --vscode-settings-dropdownBackground: #ffffff; --vscode-settings-dropdownForeground: #3b3b3b; --vscode-settings-dropdownBorder: #cecece;
    --vscode-widget-shadow: rgba(0, 0, 0, 0.16); --vscode-list-focusOutline: #005fb8; --vscode-list-highlightForeground: #0066bf;
    --vscode-terminal-ansiBlack: #000000; --vscode-terminal-ansiRed: #cd3131; --vscode-terminal-ansiGreen: #107c10; --vscode-terminal-ansiYellow: #949800;
    --vscode-terminal-ansiBlue: #0451a5; --vscode-terminal-ansiMagenta: #bc05bc; --vscode-terminal-ansiCyan: #0598bc; --vscode-terminal-ansiWhite: #555555;
    --vscode-terminal-ansiBrightBlack: #666666; --vscode-terminal-ansiBrightRed: #cd3131; --vscode-terminal-ansiBrightGreen: #14ce14; --vscode-terminal-ansiBrightYellow: #b5ba00;
    --vscode-terminal-ansiBrightBlue: #0451a5; --vscode-terminal-ansiBrightMagenta: #bc05bc; --vscode-terminal-ansiBrightCyan: #0598bc; --vscode-terminal-ansiBrightWhite: #a5a5a5;
    color-scheme: light;
  }
}
`;

const MAX_BODY = 1 << 20;
const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.ttf': 'font/ttf', '.map': 'application/json' };

/** The built webview bundles: beside the CLI bundle (dist/), or in dist/ of the project when run from source. */
export function webviewAssetsDir(): string {
  const candidates = [path.join(__dirname, 'webview'), path.resolve(__dirname, '..', '..', '..', 'dist', 'webview')];
  const found = candidates.find((d) => existsSync(path.join(d, 'explorer.js')));
  if (!found) throw new Error(`the explorer's page is not built (looked for explorer.js in ${candidates.join(' and ')}); run \`npm run build\``);
  return found;
}

export interface ExplorerServer {
  /** The page, with its token: the only URL that opens it. */
  url: string;
  port: number;
  token: string;
  backend: ExplorerBackend;
  close(): Promise<void>;
}

export interface ExplorerServerOptions {
  /** The rollout store file (opened on the first request, closed after a minute idle so imports can write). */
  storeFile: string;
  port?: number;
  assetsDir?: string;
  log?: (message: string) => void;
}

function send(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('request body over 1 MiB'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Query parameters of the page URL: the same optional arguments as the editor command. */
function pageArgs(params: URLSearchParams): OpenExplorerArgs {
  const args: OpenExplorerArgs = {};
  const mode = params.get('failureMode');
  if (mode && (FAILURE_MODES as readonly string[]).includes(mode)) args.failureMode = mode;
  const run = params.get('run');
  if (run) args.run = run.slice(0, 500);
  const version = params.get('version');
  if (version) args.version = version.slice(0, 500);
  const step = params.get('step');
  if (step && /^-?\d{1,9}$/.test(step)) args.step = Number(step);
  const rollout = params.get('rollout');
  if (rollout && /^\d{1,15}$/.test(rollout)) args.rolloutId = Number(rollout);
  return args;
}

/**
 * Serves the failure explorer's page on 127.0.0.1 under a random token: the same bundle
 * and the same messages as in the editor, POSTed as JSON to `/<token>/api`. Requests
 * without the token, or addressed to another host name (DNS rebinding), are refused.
 */
export async function startExplorerServer(opts: ExplorerServerOptions): Promise<ExplorerServer> {
  const assets = opts.assetsDir ?? webviewAssetsDir();
  const token = randomBytes(24).toString('base64url');
  const prefix = `/${token}/`;
  const backend = new ExplorerBackend({ open: () => RolloutStore.open(opts.storeFile), storeLabel: opts.storeFile, idleCloseMs: 60_000, log: (level, m) => opts.log?.(`${level}: ${m}`) });
  let port = 0;
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHosts().has(req.headers.host ?? '')) return send(res, 403, 'forbidden host\n');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname === '/favicon.ico') return send(res, 204, '');
    const given = url.pathname.slice(1, 1 + token.length);
    const tokenOk = given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token)) && url.pathname.startsWith(prefix.slice(0, -1));
    if (!tokenOk) return send(res, 403, 'this explorer needs the URL with its token, as `evotrainer view` printed it\n');
    const rest = url.pathname.slice(prefix.length - 1);
    if (rest === '' && req.method === 'GET') {
      res.writeHead(302, { location: prefix + url.search });
      return res.end();
    }
    if (rest === '/' && req.method === 'GET') {
      const baseline = Number(url.searchParams.get('baseline') ?? 0);
      const firstRows = Number.isInteger(baseline) && baseline > 0 ? Math.min(baseline, 100_000) : PAGE_ROWS;
      const state = await backend.state(pageArgs(url.searchParams), firstRows);
      if (firstRows !== PAGE_ROWS) state.baselineRows = firstRows;
      const nonce = randomBytes(16).toString('base64');
      const page = renderWebviewHtml({ app: 'explorer', title: 'EvoTrainer: Failures', state, cspSource: `'self'`, connectSrc: `'self'`, nonce, asset: (name) => `${prefix}assets/${encodeURIComponent(name)}` });
      return send(res, 200, page.replace('</head>', `<link rel="stylesheet" nonce="${nonce}" href="${prefix}assets/theme.css">\n</head>`), 'text/html; charset=utf-8');
    }
    if (rest.startsWith('/assets/') && req.method === 'GET') {
      const name = decodeURIComponent(rest.slice('/assets/'.length));
      if (name === 'theme.css') return send(res, 200, THEME_CSS, CONTENT_TYPES['.css']);
      if (!/^[a-z0-9][a-z0-9._-]*$/i.test(name) || !CONTENT_TYPES[path.extname(name)]) return send(res, 404, 'not found\n');
      const file = path.join(assets, name);
      if (!existsSync(file)) return send(res, 404, 'not found\n');
      return send(res, 200, readFileSync(file), CONTENT_TYPES[path.extname(name)]);
    }
    if (rest === '/api' && req.method === 'POST') {
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return send(res, 415, 'send JSON\n');
      let msg: { method?: unknown; params?: unknown };
      try {
        msg = JSON.parse(await readBody(req)) as typeof msg;
      } catch (err) {
        return send(res, 400, `not a JSON message: ${(err as Error).message}\n`);
      }
      if (typeof msg?.method !== 'string') return send(res, 400, 'a message needs a "method"\n');
      const answer = await backend.handle(msg.method, msg.params);
      if (!answer) return send(res, 400, `rejected "${msg.method.slice(0, 80)}": unknown command or invalid parameters\n`);
      return send(res, 200, JSON.stringify({ messages: [answer] }), 'application/json; charset=utf-8');
    }
    return send(res, 404, 'not found\n');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.log?.(`error: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    port,
    token,
    backend,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const view: Command = {
  summary: 'serve the failure explorer in a browser (127.0.0.1, tokened URL)',
  usage: 'evotrainer view [--port N] [--failure-mode MODE] [--run RUN] [--version V] [--step N] [--rollout ID]',
  flags: {
    port: { type: 'string', description: 'port on 127.0.0.1 (default: a free one)' },
    'failure-mode': { type: 'string', description: `open filtered to one failure mode (${FAILURE_MODES.join(', ')})` },
    run: { type: 'string', description: 'open filtered to one run' },
    version: { type: 'string', description: 'open filtered to one version' },
    step: { type: 'string', description: 'open filtered to the rollouts of one training step' },
    rollout: { type: 'string', description: 'open this rollout\'s trajectory' },
    ...STORE_FLAG,
  },
  async run(flags) {
    const portFlag = flagString(flags, 'port');
    if (portFlag !== undefined && !/^\d{1,5}$/.test(portFlag)) throw new UsageError(`--port must be a port number, got "${portFlag}"`);
    const mode = flagString(flags, 'failure-mode');
    if (mode !== undefined && !(FAILURE_MODES as readonly string[]).includes(mode)) throw new UsageError(`--failure-mode must be one of ${FAILURE_MODES.join(', ')}; got "${mode}"`);
    const rollout = flagString(flags, 'rollout');
    if (rollout !== undefined && !/^\d+$/.test(rollout)) throw new UsageError(`--rollout must be a rollout id, got "${rollout}"`);
    const step = flagString(flags, 'step');
    if (step !== undefined && !/^-?\d{1,9}$/.test(step)) throw new UsageError(`--step must be a step number, got "${step}"`);
    const file = storePath(flags);
    if (!existsSync(file)) throw new Error(`${file}: no rollout store here; import rollouts first (\`evotrainer import PATH\`) or pass --store FILE`);
    const server = await startExplorerServer({ storeFile: file, port: portFlag ? Number(portFlag) : 0, log: (m) => process.stderr.write(`${m}\n`) });
    // Indexed before the URL is printed, so the first page load is fast.
    const first = await server.backend.state();
    if (first.status === 'failed') {
      await server.close();
      await server.backend.dispose();
      throw new Error(first.error ?? 'the store could not be read');
    }
    const query = new URLSearchParams();
    if (mode) query.set('failureMode', mode);
    for (const k of ['run', 'version', 'step'] as const) {
      const v = flagString(flags, k);
      if (v) query.set(k, v);
    }
    if (rollout) query.set('rollout', rollout);
    const q = query.toString();
    out(`Failure explorer for ${file}:\n  ${server.url}${q ? `?${q}` : ''}\nServing on 127.0.0.1 only; the URL's token is the key. Ctrl-C stops it.`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    await server.backend.dispose();
    return 0;
  },
};
