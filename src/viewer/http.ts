import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { renderWebviewHtml } from './html';
import { THEME_CSS } from './theme';
import type { IpcMessage } from './protocol';
import { asMessage, errorText, type HostTransport } from './transport';

const MAX_BODY = 1 << 20;
const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.ttf': 'font/ttf', '.map': 'application/json' };

/** The built page bundles: beside the CLI bundle (dist/), or in dist/ of the project when run from source. */
export function webviewAssetsDir(app: string): string {
  const candidates = [path.join(__dirname, 'webview'), path.resolve(__dirname, '..', '..', 'dist', 'webview')];
  const found = candidates.find((d) => existsSync(path.join(d, `${app}.js`)));
  if (!found) throw new Error(`the ${app} page is not built (looked for ${app}.js in ${candidates.join(' and ')}); run \`npm run build\``);
  return found;
}

export interface ViewerServer {
  /** The page, with its token: the only URL that opens it. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** One page the server serves, with its own API beside it. */
export interface ViewerPage {
  /** The page bundle under dist/webview/ (`explorer` → explorer.js). */
  app: string;
  title: string;
  /** Answers what the page sends: the feature's method map. */
  transport: HostTransport;
  /** The state the page opens with, from the query of its URL. */
  initialState(query: URLSearchParams): Promise<unknown>;
  /**
   * Notifications the host has for the page since its last message (a new state after a
   * command): a plain browser hears from the host only in the answer to what it sends.
   */
  drain?(): IpcMessage[];
}

export interface ViewerServerOptions {
  /**
   * The pages by path: '' is the one at the tokened URL itself (`/<token>/`), a name the one
   * at `/<token>/<name>/`. Each posts its messages to `api` beside it; the assets are shared.
   */
  pages: Record<string, ViewerPage>;
  /** Names the command that printed the URL, for the refusal without the token. */
  command: string;
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

/**
 * The viewer's host outside the editor: serves its pages on 127.0.0.1 under a random
 * token, with the same bundles and the same messages as in a VS Code panel, each POSTed
 * as JSON to the page's `api` (`/<token>/api`, `/<token>/<name>/api`) and handed to its
 * feature's transport (a request's answer is the response body; with notifications the
 * host has for the page, the body is the list of them, the answer first). Requests
 * without the token, or addressed to another host name (DNS rebinding), are refused.
 */
export async function startViewerServer(opts: ViewerServerOptions): Promise<ViewerServer> {
  const apps = Object.values(opts.pages).map((p) => p.app);
  if (!apps.length) throw new Error('a viewer server needs a page');
  for (const name of Object.keys(opts.pages)) if (name !== '' && !/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`a page path is a lowercase name, not "${name}"`);
  if (opts.pages.assets) throw new Error('"assets" is the path of the shared assets, not a page');
  const assets = opts.assetsDir ?? webviewAssetsDir(apps[0]!);
  for (const app of apps.slice(1)) if (!opts.assetsDir) webviewAssetsDir(app);
  const token = randomBytes(24).toString('base64url');
  const prefix = `/${token}/`;
  let port = 0;
  const pageAt = (name: string | undefined): ViewerPage | undefined => (name !== 'assets' && Object.hasOwn(opts.pages, name ?? '') ? opts.pages[name ?? ''] : undefined);
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHosts().has(req.headers.host ?? '')) return send(res, 403, 'forbidden host\n');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname === '/favicon.ico') return send(res, 204, '');
    const given = url.pathname.slice(1, 1 + token.length);
    const tokenOk = given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token)) && url.pathname.startsWith(prefix.slice(0, -1));
    if (!tokenOk) return send(res, 403, `this page needs the URL with its token, as \`${opts.command}\` printed it\n`);
    const rest = url.pathname.slice(prefix.length - 1);
    // A page's own path without its closing slash: its relative links and API need it.
    const bare = /^(?:\/([a-z][a-z0-9-]*))?$/.exec(rest);
    if (bare && pageAt(bare[1]) && req.method === 'GET') {
      res.writeHead(302, { location: `${prefix}${bare[1] ? `${bare[1]}/` : ''}${url.search}` });
      return res.end();
    }
    const route = /^\/(?:([a-z][a-z0-9-]*)\/)?(api)?$/.exec(rest);
    const page = route ? pageAt(route[1]) : undefined;
    if (page && !route![2] && req.method === 'GET') {
      const state = await page.initialState(url.searchParams);
      const nonce = randomBytes(16).toString('base64');
      const body = renderWebviewHtml({ app: page.app, title: page.title, state, cspSource: `'self'`, connectSrc: `'self'`, nonce, asset: (name) => `${prefix}assets/${encodeURIComponent(name)}` });
      return send(res, 200, body.replace('</head>', `<link rel="stylesheet" nonce="${nonce}" href="${prefix}assets/theme.css">\n</head>`), 'text/html; charset=utf-8');
    }
    if (rest.startsWith('/assets/') && req.method === 'GET') {
      const name = decodeURIComponent(rest.slice('/assets/'.length));
      if (name === 'theme.css') return send(res, 200, THEME_CSS, CONTENT_TYPES['.css']);
      if (!/^[a-z0-9][a-z0-9._-]*$/i.test(name) || !CONTENT_TYPES[path.extname(name)]) return send(res, 404, 'not found\n');
      const file = path.join(assets, name);
      if (!existsSync(file)) return send(res, 404, 'not found\n');
      return send(res, 200, readFileSync(file), CONTENT_TYPES[path.extname(name)]);
    }
    if (page && route![2] && req.method === 'POST') {
      const transport = page.transport;
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
      // A command answers nothing: its parameters are checked here, so a refused one is a 400 that says why, not an empty 204.
      const refused = kind === 'command' ? transport.refusal(message.method, message.params) : null;
      if (refused) return send(res, 400, `${refused}\n`);
      const answer = await transport.receive(message);
      const notes = page.drain?.() ?? [];
      if (!answer && !notes.length) return send(res, 204, '');
      // A refused message is the client's error; a handler's failure is an answer like any other.
      const status = answer && 'code' in answer && answer.code !== 'failed' ? 400 : 200;
      return send(res, status, JSON.stringify(notes.length ? [...(answer ? [answer] : []), ...notes] : answer), 'application/json; charset=utf-8');
    }
    return send(res, 404, 'not found\n');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.log?.(`error: ${errorText(err)}`);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
