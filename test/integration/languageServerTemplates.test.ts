import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { repoRoot } from '../helpers/tmp';

interface Diagnostic {
  range: { start: { line: number; character: number } };
  message: string;
}

const templates = path.join(repoRoot, 'harness-templates');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? (n === '.git' || n === 'node_modules' || n === '__pycache__' ? [] : walk(p)) : [p];
  });
}

/** The harness files the client hands the server (src/extension/client.ts), by kind. */
function harnessFiles(root: string): { file: string; languageId: string }[] {
  return walk(root)
    .map((file) => ({ file, rel: path.relative(root, file).split(path.sep).join('/') }))
    .filter(({ rel }) => rel === 'evotrainer.yaml' || /^diagnostics\/rules\/[^/]+\.ya?ml$/.test(rel) || /^diagnostics\/metrics\/[^/]+\.(sql|py)$/.test(rel) || (/^skills\/[^/]+\.md$/.test(rel) && !/readme\.md$/i.test(rel)))
    .map(({ file }) => ({ file, languageId: file.endsWith('evotrainer.yaml') ? 'evotrainer-manifest' : path.extname(file).slice(1) }));
}

describe('language server: every shipped harness template is clean', () => {
  const proc = spawn(process.execPath, [path.join(repoRoot, 'dist', 'server.js'), '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const published = new Map<string, Diagnostic[]>();
  const waiters = new Map<string, () => void>();
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => {
    published.set(p.uri, p.diagnostics);
    waiters.get(p.uri)?.();
  });
  conn.listen();
  after(() => {
    conn.dispose();
    proc.kill();
  });

  const open = (uri: string, languageId: string, text: string) =>
    new Promise<Diagnostic[]>((resolve) => {
      waiters.set(uri, () => resolve(published.get(uri)!));
      void conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    });

  const dirs = existsSync(templates) ? readdirSync(templates).filter((d) => existsSync(path.join(templates, d, 'evotrainer.yaml'))) : [];

  it('finds the templates', async () => {
    assert.ok(dirs.length >= 1, `no template under ${templates}`);
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    await conn.sendNotification('initialized', {});
  });

  it('their manifests, rules, metrics and skills have no problem; their entry points carry the backtest lens', async () => {
    const problems: string[] = [];
    for (const d of dirs) {
      const root = path.join(templates, d);
      for (const { file, languageId } of harnessFiles(root)) {
        const ds = await open(pathToFileURL(file).href, languageId, readFileSync(file, 'utf8'));
        for (const x of ds) problems.push(`${path.relative(templates, file)}:${x.range.start.line + 1}:${x.range.start.character + 1}: ${x.message}`);
      }
      const reward = path.join(root, 'reward', 'compute_score.py');
      if (existsSync(reward)) {
        const uri = pathToFileURL(reward).href;
        await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: readFileSync(reward, 'utf8') } });
        const lenses = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as { command: { arguments: { function: string }[] } }[];
        assert.ok(lenses.some((l) => l.command.arguments[0]!.function === 'compute_score'), `${d}: no lens on compute_score`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('a skills/README.md is not a skill (as the engine lists skills)', async () => {
    const readme = dirs.map((d) => path.join(templates, d, 'skills', 'README.md')).find((f) => existsSync(f));
    assert.ok(readme, 'no template has a skills/README.md');
    const uri = pathToFileURL(readme).href;
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text: readFileSync(readme, 'utf8') } });
    // A later document's diagnostics arrive after anything the README would have caused.
    await open('untitled:probe', 'evotrainer-manifest', 'name: p\ndomain: math\n');
    assert.equal(published.has(uri), false);
  });
});
