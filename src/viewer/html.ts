import { INITIAL_STATE_ID } from './protocol';

export interface WebviewPage {
  app: string;
  title: string;
  state: unknown;
  /** `webview.cspSource` */
  cspSource: string;
  nonce: string;
  /** Maps a file under dist/webview/ to its webview URI. */
  asset: (name: string) => string;
  /** Origins the page may fetch from (a page served over HTTP talks to its own server); none by default. */
  connectSrc?: string;
}

/**
 * The page every webview app starts from: a strict CSP whose scripts and styles need
 * the per-load nonce, and the initial state as JSON in a script tag so the first render
 * needs no round trip. Rollout text can be anything, so nothing from the state is ever
 * placed in markup: '<' is escaped inside the JSON so no string can close the tag.
 */
export function renderWebviewHtml(p: WebviewPage): string {
  const stateJson = JSON.stringify(p.state ?? null).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  const csp = [
    `default-src 'none'`,
    `img-src ${p.cspSource} data:`,
    `font-src ${p.cspSource}`,
    `style-src ${p.cspSource} 'nonce-${p.nonce}'`,
    `script-src 'nonce-${p.nonce}'`,
    ...(p.connectSrc ? [`connect-src ${p.connectSrc}`] : []),
  ].join('; ');
  const tag = `evo-${p.app.replace(/[^a-z0-9-]/g, '')}-app`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" nonce="${p.nonce}" href="${escapeHtml(p.asset('codicon.css'))}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" nonce="${p.nonce}" href="${escapeHtml(p.asset('webview.css'))}">
<title>${escapeHtml(p.title)}</title>
</head>
<body>
<script type="application/json" id="${INITIAL_STATE_ID}" nonce="${p.nonce}">${stateJson}</script>
<${tag}></${tag}>
<script type="module" nonce="${p.nonce}" src="${escapeHtml(p.asset(`${p.app}.js`))}"></script>
</body>
</html>`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
