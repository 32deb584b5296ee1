// `npm run bench:activation`: what activating the extension costs. Loads dist/extension.js
// and runs activate() with a stand-in `vscode` module (no editor here: every API call is a
// no-op recorder), in fresh Node processes, against the baseline of loading the engine
// bundle the extension defers (dist/panels.js: store, git, webview controllers).
// Prints both medians and their ratio; activation should stay a small fraction.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { arg, args, root } from './common';
import { recordBench, watchLoad } from './results';

const runs = Number(arg('runs', '7'));
const load = watchLoad();
const json = args.includes('--json');
for (const f of ['dist/extension.js', 'dist/panels.js']) {
  if (!existsSync(path.join(root, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
}

// A `vscode` stand-in: any property is a function or namespace that records and returns itself.
const STUB = `
const Module = require('module');
const rec = () => new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : k === Symbol.toPrimitive ? () => '' : rec()), apply: () => rec(), construct: () => rec(), set: () => true, defineProperty: () => true });
const vscode = {};
for (const k of ['window', 'workspace', 'commands', 'languages', 'extensions', 'env', 'l10n', 'lm', 'tasks', 'debug', 'scm', 'authentication', 'Uri', 'EventEmitter', 'TreeItem', 'ThemeIcon', 'ThemeColor', 'StatusBarAlignment', 'TreeItemCollapsibleState', 'Disposable', 'ProgressLocation', 'ViewColumn', 'MarkdownString', 'Range', 'Position', 'Selection', 'RelativePattern', 'CodeLens', 'FileType', 'ConfigurationTarget', 'ExtensionMode', 'QuickPickItemKind', 'DiagnosticSeverity', 'CancellationTokenSource', 'TextEdit', 'WorkspaceEdit', 'FileSystemError', 'Location', 'TabInputText', 'TabInputTextDiff'])
  vscode[k] = rec();
const orig = Module._load;
Module._load = function (req, ...rest) { return req === 'vscode' ? vscode : orig.call(this, req, ...rest); };
`;

function measure(target: 'activate' | 'engine'): number {
  const code =
    STUB +
    (target === 'activate'
      ? `const t = process.hrtime.bigint(); const ext = require(${JSON.stringify(path.join(root, 'dist/extension.js'))}); const ctx = { subscriptions: [], extensionUri: vscode.Uri, extensionPath: ${JSON.stringify(root)}, globalState: rec(), workspaceState: rec(), secrets: rec(), asAbsolutePath: (p) => p }; Promise.resolve().then(() => ext.activate(ctx)).then(() => { process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6)); process.exit(0); }, (e) => { process.stderr.write('activate() threw: ' + (e && e.stack || e)); process.exit(1); });`
      : `const t = process.hrtime.bigint(); require(${JSON.stringify(path.join(root, 'dist/panels.js'))}); process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));`);
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', cwd: root });
  const ms = Number(r.stdout.trim().split('\n').pop());
  if (r.status !== 0 || !r.stdout.trim() || !Number.isFinite(ms)) throw new Error(`${target} did not report a time: ${r.stdout}\n${r.stderr}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const act = median(Array.from({ length: runs }, () => measure('activate')));
const eng = median(Array.from({ length: runs }, () => measure('engine')));
const out = (s: string) => void (json ? process.stderr : process.stdout).write(s + '\n');
out(`activation (load dist/extension.js + activate()): median ${act.toFixed(1)} ms over ${runs} runs`);
out(`baseline, loading the deferred engine bundle (dist/panels.js): median ${eng.toFixed(1)} ms`);
out(`activation costs ${(act / eng).toFixed(2)}× the engine load it defers`);
if (json) process.stdout.write(JSON.stringify({ activationMs: act, engineMs: eng, ratio: act / eng, runs }) + '\n');
recordBench('activation', 'npm run bench:activation', runs === 7, load.stop(), [
  { figure: `extension activation (load + activate()), median of ${runs} processes`, ours: `${act.toFixed(1)} ms`, baseline: `loading the deferred engine bundle ${eng.toFixed(1)} ms`, ratio: `${(act / eng).toFixed(2)}× the time`, target: 'a small fraction of the engine load', met: act < eng },
]);
