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
