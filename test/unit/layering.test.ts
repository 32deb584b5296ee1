import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import { repoRoot } from '../helpers/tmp';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('layering', () => {
  it('nothing under src/core imports the editor', () => {
    const offenders = files(path.join(repoRoot, 'src/core')).filter((f) => /from ['"]vscode['"]|require\(['"]vscode['"]\)/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(offenders, []);
  });

  it('nothing under src/cli, src/server or src/viewer imports the editor or src/extension', () => {
    const editorImport = /from ['"](?:vscode|[./]+(?:[^'"]*\/)?extension(?:\/[^'"]*)?)['"]|require\(['"]vscode['"]\)/;
    const offenders = ['src/cli', 'src/server', 'src/viewer'].flatMap((d) => files(path.join(repoRoot, d))).filter((f) => editorImport.test(readFileSync(f, 'utf8')));
    assert.deepEqual(offenders, []);
    // The pattern does catch the imports it is for.
    assert.ok(editorImport.test(`import { x } from '../../extension/webviews/html';`));
    assert.ok(editorImport.test(`import * as vscode from 'vscode';`));
    assert.ok(!editorImport.test(`import { x } from '../../viewer/html';`));
  });

  it('the lint rule rejects an editor import in the CLI, the language server and the viewer layer', async () => {
    const eslint = new ESLint({ cwd: repoRoot });
    const probes: [string, string][] = [
      ['src/cli/commands/probe.ts', `import { ExplorerPanel } from '../../extension/webviews/explorer/explorerPanel';\nexport const x = ExplorerPanel;\n`],
      ['src/server/probe.ts', `import { activate } from '../extension/extension';\nexport const x = activate;\n`],
      ['src/cli/probe.ts', `import * as vscode from 'vscode';\nexport const x = vscode;\n`],
      ['src/viewer/explorer/probe.ts', `import { WebviewController } from '../../extension/webviews/webviewController';\nexport const x = WebviewController;\n`],
      ['src/viewer/probe.ts', `import * as vscode from 'vscode';\nexport const x = vscode;\n`],
    ];
    for (const [file, text] of probes) {
      const [r] = await eslint.lintText(text, { filePath: path.join(repoRoot, file) });
      assert.ok(r!.messages.some((m) => m.ruleId === 'no-restricted-imports'), `${file}: ${JSON.stringify(r!.messages)}`);
    }
    const [fine] = await eslint.lintText(`import { renderWebviewHtml } from '../../viewer/html';\nexport const x = renderWebviewHtml;\n`, { filePath: path.join(repoRoot, 'src/cli/commands/probe.ts') });
    assert.deepEqual(fine!.messages, []);
  });

  it('the lint rule rejects a vscode import in core and a core import in a webview', async () => {
    const eslint = new ESLint({ cwd: repoRoot });
    const [core] = await eslint.lintText(`import * as vscode from 'vscode';\nexport const x = vscode;\n`, { filePath: path.join(repoRoot, 'src/core/probe.ts') });
    assert.ok(core!.messages.some((m) => m.ruleId === 'no-restricted-imports' && /must not depend on the editor/.test(m.message)), JSON.stringify(core!.messages));
    const [web] = await eslint.lintText(`import { runDoctor } from '../../core/doctor';\nexport const x = runDoctor;\n`, { filePath: path.join(repoRoot, 'src/webview/doctor/probe.ts') });
    assert.ok(web!.messages.some((m) => /no-restricted-imports/.test(m.ruleId ?? '')), JSON.stringify(web!.messages));
    const [fine] = await eslint.lintText(`import * as vscode from 'vscode';\nexport const x = vscode;\n`, { filePath: path.join(repoRoot, 'src/extension/probe.ts') });
    assert.deepEqual(fine!.messages, []);
  });
});
