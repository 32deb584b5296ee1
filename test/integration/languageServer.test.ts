import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { repoRoot } from '../helpers/tmp';

interface Diagnostic {
  range: { start: { line: number; character: number } };
  message: string;
  severity: number;
}

describe('language server (dist/server.js over stdio)', () => {
  const proc = spawn(process.execPath, [path.join(repoRoot, 'dist', 'server.js'), '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const published = new Map<string, (d: Diagnostic[]) => void>();
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diagnostic[] }) => published.get(p.uri)?.(p.diagnostics));
  conn.listen();
  after(() => {
    conn.dispose();
    proc.kill();
  });

  const open = (uri: string, text: string) =>
    new Promise<Diagnostic[]>((resolve) => {
      published.set(uri, resolve);
      void conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'evotrainer-manifest', version: 1, text } });
    });

  it('initializes and reports manifest problems with their position', async () => {
    const init = (await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} })) as { capabilities: { textDocumentSync: number } };
    assert.equal(init.capabilities.textDocumentSync, 2);
    await conn.sendNotification('initialized', {});

    const dup = await open('file:///h/evotrainer.yaml', 'name: a\ndomain: math\nname: b\n');
    assert.equal(dup.length, 1);
    assert.equal(dup[0]!.range.start.line, 2);
    assert.equal(dup[0]!.severity, 1);

    const missing = await open('file:///h2/evotrainer.yaml', 'name: a\n');
    assert.deepEqual(missing.map((d) => d.message), ['Missing required key "domain".']);

    const fine = await open('file:///h3/evotrainer.yaml', 'name: a\ndomain: swe\n');
    assert.deepEqual(fine, []);
  });
});
