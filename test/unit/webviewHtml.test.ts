import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { renderWebviewHtml } from '../../src/viewer/html';
import { INITIAL_STATE_ID } from '../../src/viewer/protocol';
import { repoRoot } from '../helpers/tmp';

const page = (state: unknown) =>
  renderWebviewHtml({ app: 'doctor', title: 'T <b>', state, cspSource: 'vscode-resource:', nonce: 'N0nce+/=', asset: (n) => `vscode-resource:/dist/webview/${n}` });

describe('webview page', () => {
  it('carries a strict CSP whose scripts need the nonce', () => {
    const html = page({});
    const csp = /Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-N0nce\+\/='(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const scripts = html.match(/<script\b[^>]*>/g)!;
    assert.equal(scripts.length, 2);
    for (const s of scripts) assert.match(s, /nonce="N0nce\+\/="/);
    assert.match(html, /<title>T &lt;b&gt;<\/title>/);
  });

  it('embeds untrusted state so that no string can close the script tag', () => {
    const hostile = { text: '</script><script>alert(1)</script><!--', sep: '\u2028' };
    const html = page(hostile);
    assert.equal(html.match(/<\/script>/g)!.length, 2, 'only the two real closing tags');
    const json = new RegExp(`id="${INITIAL_STATE_ID}"[^>]*>(.*?)</script>`, 's').exec(html)![1]!;
    assert.deepEqual(JSON.parse(json), hostile);
  });

  it('no webview template writes a style attribute, which the CSP refuses (inline styles go through cssProps)', () => {
    const dir = path.join(repoRoot, 'src', 'webview');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 5);
    const offenders = files.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').map((line, i) => ({ f, i, line })))
      .filter(({ line }) => /styleMap|(^|[^.\w])style=/.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim()}`);
    assert.deepEqual(offenders, []);
  });
});
