import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EditorSession } from '../session';

/** Rule, metric, skill, reward and filter files (src/extension/client.ts selects the same). */
const HARNESS_FILE = /\/(diagnostics\/(rules\/[^/]+\.ya?ml|metrics\/[^/]+\.(sql|py))|skills\/[^/]+\.md|(reward|filters)\/.+\.py)$/i;

/** The language server serves harness files; start it when the first one opens. */
export function registerLanguageClient({ context, output }: EditorSession): void {
  let started = false;
  const maybeStart = (doc: vscode.TextDocument) => {
    if (started || !(doc.languageId === 'evotrainer-manifest' || HARNESS_FILE.test(doc.uri.path))) return;
    started = true;
    // A separate bundle, required only now, so activation never pays for it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const client = require(path.join(__dirname, 'client.js')) as typeof import('../client');
    client.startClient(context).catch((err: unknown) => output.error(`Language server failed to start: ${String(err)}`));
  };
  vscode.workspace.textDocuments.forEach(maybeStart);
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument(maybeStart));
}
