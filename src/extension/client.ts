import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

/**
 * Harness files the language server serves. Rule, metric, skill and reward/filter files are
 * selected by their place in the harness, whatever their language, so YAML, SQL, Python and
 * Markdown keep their own highlighting and extensions; only evotrainer.yaml has a language
 * of its own (package.json `contributes.languages`).
 */
export const HARNESS_DOCUMENTS: NonNullable<LanguageClientOptions['documentSelector']> = [
  { language: 'evotrainer-manifest' },
  { scheme: 'file', pattern: '**/diagnostics/rules/*.{yaml,yml}' },
  { scheme: 'file', pattern: '**/diagnostics/metrics/*.{sql,py}' },
  { scheme: 'file', pattern: '**/skills/*.md' },
  { scheme: 'file', pattern: '**/{reward,filters}/**/*.py' },
];

/** The read-only document of built-in metrics that go-to-definition opens (the server renders it). */
const CATALOG_SCHEME = 'evotrainer-catalog';

/** Starts the language server for harness files (bundled separately as dist/server.js). */
export async function startClient(context: vscode.ExtensionContext): Promise<void> {
  if (client) return;
  const module = vscode.Uri.joinPath(context.extensionUri, 'dist', 'server.js').fsPath;
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  // Metric files define what rules may name; the manifest and the store feed hovers.
  const watcher = vscode.workspace.createFileSystemWatcher('**/{evotrainer.yaml,diagnostics/metrics/*,.evotrainer/store.duckdb}');
  context.subscriptions.push(watcher);
  const clientOptions: LanguageClientOptions = {
    documentSelector: HARNESS_DOCUMENTS,
    synchronize: { fileEvents: watcher },
  };
  const c = new LanguageClient('evotrainer', 'EvoTrainer Language Server', serverOptions, clientOptions);
  client = c;
  context.subscriptions.push({ dispose: () => void c.stop() });
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(CATALOG_SCHEME, {
      provideTextDocumentContent: async () => ((await c.sendRequest('evotrainer/builtinMetrics')) as { text: string }).text,
    }),
  );
  // The "Backtest this change" lens runs `evotrainer.backtestVersion` with {file, function}: registered at activation (src/extension/backtest/register.ts).
  await c.start();
}
