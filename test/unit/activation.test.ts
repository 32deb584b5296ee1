import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/tmp';

// Reads the build's metafile (scripts/build.mjs writes it; `npm test` builds first).
const metaFile = path.join(repoRoot, 'dist/meta.json');

describe('activation stays light', () => {
  it('the extension bundle holds no store, webview or language-client code', () => {
    assert.ok(existsSync(metaFile), 'dist/meta.json missing: run `npm run build`');
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { outputs: Record<string, { bytes: number; inputs: Record<string, unknown>; imports: { path: string; external?: boolean }[] }> };
    const ext = meta.outputs['dist/extension.js']!;
    const inputs = Object.keys(ext.inputs);
    const heavy = inputs.filter((f) => /node_modules\/(lit|@lit|@vscode-elements|@duckdb|vscode-languageclient|vscode-languageserver|yaml)\//.test(f) || f.startsWith('src/webview/'));
    assert.deepEqual(heavy, []);
    assert.ok(ext.bytes < 150 * 1024, `dist/extension.js is ${ext.bytes} bytes`);
    // The store is external and required lazily: never a top-level require of the bundle.
    const code = readFileSync(path.join(repoRoot, 'dist/extension.js'), 'utf8');
    const firstLines = code.split('\n').filter((l) => /^(var|const|let) \w+ = (__toESM\()?require\(/.test(l));
    assert.deepEqual(firstLines.filter((l) => /duckdb|client\.js/.test(l)), []);
  });

  it('the webview bundle carries Lit and vscode-elements, the host bundle does not', () => {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
    const web = Object.keys(meta.outputs['dist/webview/doctor.js']!.inputs);
    assert.ok(web.some((f) => f.includes('node_modules/lit')));
    assert.ok(web.some((f) => f.includes('@vscode-elements/elements')));
  });
});
