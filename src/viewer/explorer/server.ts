import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FAILURE_MODES } from '../../core/diagnose/failureModes';
import { RolloutStore } from '../../core/store/store';
import { renderWebviewHtml } from '../html';
import { THEME_CSS } from '../theme';
import { asMessage, HostTransport } from '../transport';
import { ExplorerBackend } from './backend';
import { ExplorerMethods, PAGE_ROWS, type OpenExplorerArgs } from './protocol';

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
  const transport = new HostTransport('explorer', (level, m) => opts.log?.(`${level}: ${m}`)).serve(ExplorerMethods, backend.methods);
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
      let msg: unknown;
      try {
        msg = JSON.parse(await readBody(req));
      } catch (err) {
        return send(res, 400, `not a JSON message: ${(err as Error).message}\n`);
      }
      const message = asMessage(msg);
      if (!message) return send(res, 400, 'a message needs a "method" (and an integer "id" when it is a request)\n');
      const kind = transport.kindOf(message.method);
      if (!kind) return send(res, 400, `unknown method "${message.method.slice(0, 80)}"\n`);
      if ((kind === 'request') !== (message.id !== undefined)) return send(res, 400, `"${message.method}" is a ${kind}: ${kind === 'request' ? 'it needs an "id"' : 'it takes no "id"'}\n`);
      const answer = await transport.receive(message);
      if (!answer) return send(res, 204, '');
      // A refused message is the client's error; a handler's failure is an answer like any other.
      return send(res, 'code' in answer && answer.code !== 'failed' ? 400 : 200, JSON.stringify(answer), 'application/json; charset=utf-8');
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
