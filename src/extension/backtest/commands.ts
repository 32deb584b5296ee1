import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { formatBacktest, recordBacktest, runBacktest, type BacktestReport } from '../../core/backtest';
import { decideAndApply, formatGate, promoteVersion, type GateReport } from '../../core/gate';
import { readLedger, type LedgerEntry } from '../../core/harness/ledger';
import { HarnessError, openHarness, type Harness } from '../../core/harness/repo';
import { rejectVersion } from '../../core/harness/versions';
import { defaultStorePath, RolloutStore } from '../../core/store/store';
import { requireTrust, type EditorSession } from '../session';
import type { ResultPanel } from '../webviews/backtest/resultPanel';
import { resultWebview } from './webviews';
import { backtestView, DECISION_LABEL, gateText, gateView } from '../webviews/backtest/view';
import { versionForFile } from './resolve';

/**
 * Step 7 and the promotion gate in the editor: backtest a version on the cached rollouts
 * (progress with cancel, the Backtest Diff webview, the report recorded on the version),
 * gate a version (the decision with every reason, then promote or reject from it), and
 * the "Backtest this change" lens. Everything here runs the harness's own code or git,
 * so it needs a trusted workspace.
 */
export type BacktestHost = EditorSession;

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The output channel keeps the whole message, the toast its first line. */
export function fail(host: BacktestHost, what: string, err: unknown): void {
  const text = message(err);
  host.output.error(`${what}: ${text}`);
  const [first, ...rest] = text.split('\n');
  void vscode.window.showErrorMessage(`EvoTrainer: ${what}: ${first}`, ...(rest.length ? ['Show Details'] : [])).then((p) => {
    if (p) host.output.show(true);
  });
}

export async function harnessOf(host: BacktestHost, dir?: string): Promise<Harness | null> {
  const root = dir ?? host.root();
  if (!root) {
    void vscode.window.showErrorMessage('EvoTrainer: open a harness (a folder with evotrainer.yaml) first, or create one with "EvoTrainer: Initialize Harness…".');
    return null;
  }
  return { ...(await openHarness(root)), onRepair: (m) => host.output.info(`resumed: ${m}`) };
}

interface VersionPick extends vscode.QuickPickItem {
  id: string;
}

async function pick(h: Harness, placeHolder: string, filter: (e: LedgerEntry) => boolean, title: string, extra: VersionPick[] = []): Promise<string | undefined> {
  const ledger = await readLedger(h);
  const items: VersionPick[] = [
    ...extra,
    ...[...ledger.entries.values()]
      .filter(filter)
      .sort((a, b) => Number(b.id.slice(1)) - Number(a.id.slice(1)))
      .map((e) => ({ id: e.id, label: `${e.id}${ledger.promoted?.version === e.id ? ' ★' : ''}`, description: `${e.status} · ${e.branch}`, detail: e.hypothesis?.change ?? (e.parent ? undefined : 'root version') })),
  ];
  if (!items.length) {
    void vscode.window.showInformationMessage(`EvoTrainer: no version to choose (${placeHolder.toLowerCase()}).`);
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder, title, matchOnDescription: true, matchOnDetail: true }))?.id;
}

// ---------------------------------------------------------------- backtest

export interface BacktestArgs {
  version?: string;
  against?: string;
  /** Ask for the baseline (the palette); the context menu and the lens use the parent. */
  askBaseline?: boolean;
}

export async function backtestVersionCommand(host: BacktestHost, args: BacktestArgs = {}, dir?: string): Promise<BacktestReport | undefined> {
  if (!requireTrust('Backtest Version')) return undefined;
  let h: Harness | null;
  let id = args.version;
  let against = args.against;
  try {
    h = await harnessOf(host, dir);
    if (!h) return undefined;
    const ledger = await readLedger(h);
    if (!id) {
      id = await pick(h, 'Version to backtest on the cached rollouts', (e) => e.parent !== null && e.commit !== e.base && e.status !== 'rejected', 'Backtest Version (1/2)');
      if (!id) return undefined;
      if (args.askBaseline !== false) {
        const entry = ledger.entries.get(id as LedgerEntry['id'])!;
        const chosen = await pick(h, `Baseline to compare ${id} with`, (e) => e.id !== id && e.id !== entry.parent, 'Backtest Version (2/2): baseline', [{ id: entry.parent ?? '', label: `${entry.parent} (parent)`, description: 'default' }]);
        if (chosen === undefined) return undefined;
        against = chosen === entry.parent ? undefined : chosen;
      }
    } else if (!ledger.entries.has(id as LedgerEntry['id'])) throw new HarnessError(`no version ${id} in the ledger`);
  } catch (err) {
    fail(host, 'Backtest failed', err);
    return undefined;
  }
  const harness = h;
  const version = id;
  const title = `Backtest: ${version}${against ? ` vs ${against}` : ''}`;
  const panel = await host.webviews.show(resultWebview, { status: 'loading', kind: 'backtest', title, progress: 'starting' }, { key: `backtest:${version}` });
  const started = Date.now();
  const abort = new AbortController();
  try {
    const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: backtesting ${version}`, cancellable: true }, async (progress, token) => {
      const sub = token.onCancellationRequested(() => abort.abort());
      const store = await RolloutStore.open(defaultStorePath(harness.root));
      try {
        return await runBacktest(harness, store, {
          version,
          against,
          trust: vscode.workspace.isTrusted,
          signal: abort.signal,
          onProgress: (m) => {
            progress.report({ message: m });
            host.output.info(`backtest ${version}: ${m}`);
            if (!panel.disposed) panel.update({ status: 'loading', kind: 'backtest', title, progress: m });
          },
        });
      } finally {
        sub.dispose();
        store.close();
        if (abort.signal.aborted) host.output.info(`backtest ${version}: cancelled after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    });
    await recordBacktest(harness, report);
    host.output.info(formatBacktest(report));
    panel.update({ status: 'done', kind: 'backtest', title: `Backtest: ${report.version} vs ${report.against}`, backtest: backtestView(report) });
    host.refresh();
    const verdict = report.verdict === 'not_replayable' ? 'not replayable offline' : report.verdict.toUpperCase();
    const show = report.verdict === 'fail' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(`EvoTrainer: backtest of ${report.version} vs ${report.against}: ${verdict} — ${report.reasons[0] ?? ''}`);
    return report;
  } catch (err) {
    const cancelled = abort.signal.aborted;
    panel.update({ status: 'failed', kind: 'backtest', title, error: cancelled ? 'Cancelled: nothing was recorded.' : message(err) });
    if (cancelled) void vscode.window.showInformationMessage(`EvoTrainer: backtest of ${version} cancelled; nothing was recorded.`);
    else fail(host, 'Backtest failed', err);
    return undefined;
  }
}

/** The "Backtest this change" lens: the version whose checkout holds the file (else the current checkout's). */
export async function backtestThisChange(host: BacktestHost, args?: { file?: string; function?: string }): Promise<BacktestReport | undefined> {
  const what = `Backtest this change${args?.function ? ` (${args.function})` : ''}`;
  if (!requireTrust(what)) return undefined;
  const file = typeof args?.file === 'string' ? (args.file.startsWith('file:') ? vscode.Uri.parse(args.file).fsPath : args.file) : vscode.window.activeTextEditor?.document.uri.fsPath;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    const found = file ? await versionForFile(h, file) : null;
    if (!found) {
      void vscode.window.showWarningMessage(`EvoTrainer: ${what}: ${file ? path.basename(file) : 'this file'} is in no checkout of a version; choose the version to backtest.`);
      return backtestVersionCommand(host, { askBaseline: false });
    }
    if (!found.entry.parent) {
      void vscode.window.showInformationMessage(`EvoTrainer: ${what}: this checkout is ${found.entry.id}, the root version: there is nothing to backtest it against. Make the change in a new version (EvoTrainer: New Version…), commit it, then backtest it.`);
      return undefined;
    }
    host.output.info(`${what}: ${file} is in ${found.entry.id}'s checkout (${found.how === 'branch' ? found.entry.branch : `HEAD ${found.entry.commit.slice(0, 12)}`})`);
    return backtestVersionCommand(host, { version: found.entry.id });
  } catch (err) {
    fail(host, what, err);
    return undefined;
  }
}

// ---------------------------------------------------------------- gate

export interface GateOutcome {
  report: GateReport;
  /** What the person chose from the result: promoted / rejected / nothing (yet). */
  action: 'promoted' | 'rejected' | null;
}

export async function gateVersionCommand(host: BacktestHost, id?: string): Promise<GateOutcome | undefined> {
  if (!requireTrust('Gate Version')) return undefined;
  let report: GateReport;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    const version = id ?? (await pick(h, 'Version to judge (the promotion gate)', (e) => e.parent !== null && e.status !== 'promoted' && e.status !== 'rejected', 'Gate Version'));
    if (!version) return undefined;
    host.output.info(`gate ${version}: judging its evidence`);
    report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: gating ${version}` }, async () => {
      const store = await RolloutStore.open(defaultStorePath(h.root));
      try {
        return (await decideAndApply(h, store, { version, judge: 'eval_rollouts' })).report!;
      } finally {
        store.close();
      }
    });
    host.output.info(formatGate(report));
    const state = (await readLedger(h)).entries.get(version as LedgerEntry['id'])?.status ?? '';
    await host.webviews.show(resultWebview, { status: 'done', kind: 'gate', title: `Gate: ${version}`, gate: gateView(report, state) }, { key: `gate:${version}` });
    host.refresh();
  } catch (err) {
    fail(host, 'Gate failed', err);
    return undefined;
  }
  const failed = report.checks.filter((c) => c.passed === false).length;
  const open = report.checks.filter((c) => c.passed === null).length;
  const head = `EvoTrainer: gate of ${report.version}${report.baseline ? ` vs ${report.baseline}` : ''}: ${DECISION_LABEL[report.decision]} — ${failed ? `${failed} check(s) fail` : open ? `${open} check(s) a person must judge` : `all ${report.checks.length} checks pass`}`;
  const buttons = report.decision === 'promote' ? ['Promote', 'Reject…'] : report.decision === 'reject' ? ['Reject…'] : ['Promote Anyway…', 'Reject…'];
  const show = report.decision === 'promote' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  // Non-modal: the panel beside shows every reason; the notification waits in the center.
  void show(head, ...buttons).then(async (choice) => {
    if (choice === 'Promote' || choice === 'Promote Anyway…') await promoteFromGate(host, report.version);
    else if (choice === 'Reject…') await rejectFromGate(host, report.version);
  });
  return { report, action: null };
}

function refreshGatePanel(host: BacktestHost, version: string, state: string): void {
  const p = host.webviews.get(resultWebview, `gate:${version}`) as ResultPanel | undefined;
  const s = p?.current;
  if (p && s?.status === 'done' && s.kind === 'gate') p.update({ ...s, gate: { ...s.gate, state } });
}

/** Promotes on the recorded gate decision; a decision other than PROMOTE asks for an override reason. */
export async function promoteFromGate(host: BacktestHost, version: string): Promise<boolean> {
  if (!requireTrust('Promote Version')) return false;
  try {
    const h = await harnessOf(host);
    if (!h) return false;
    const entry = (await readLedger(h)).entries.get(version as LedgerEntry['id']);
    if (!entry) throw new HarnessError(`no version ${version} in the ledger`);
    let override: string | undefined;
    if (entry.decision?.decision !== 'promote') {
      override = await vscode.window.showInputBox({
        title: `Promote ${version} although the gate said ${(entry.decision?.decision ?? 'not gated').toUpperCase().replace('_', ' ')}`,
        prompt: 'Why? Recorded in the ledger as a human override.',
        validateInput: (v) => (v.trim() ? undefined : 'a reason is required'),
      });
      if (!override) return false;
    }
    const r = await promoteVersion(h, version, override ? { override } : {});
    host.output.info(`${version} promoted (${r.decision.decidedBy}); evo/promoted → ${r.entry.commit.slice(0, 12)}`);
    void vscode.window.showInformationMessage(`EvoTrainer: ${version} promoted; evo/promoted → ${r.entry.commit.slice(0, 12)}.`);
    refreshGatePanel(host, version, 'promoted');
    host.refresh();
    return true;
  } catch (err) {
    fail(host, 'Promote failed', err);
    return false;
  }
}

/** Rejects with a reason prefilled from the failing checks (editable, required). */
export async function rejectFromGate(host: BacktestHost, version: string): Promise<boolean> {
  if (!requireTrust('Reject Version')) return false;
  try {
    const h = await harnessOf(host);
    if (!h) return false;
    const entry = (await readLedger(h)).entries.get(version as LedgerEntry['id']);
    if (!entry) throw new HarnessError(`no version ${version} in the ledger`);
    // The failed checks first; the undecided ones (recorded as "UNDECIDED: …") only when nothing failed.
    const reasons = entry.decision?.reasons.filter((r) => !r.passed) ?? [];
    const failed = reasons.filter((r) => !r.detail.startsWith('UNDECIDED: '));
    const failing = (failed.length ? failed : reasons).map((r) => `${r.check}: ${r.detail}`);
    const reason = await vscode.window.showInputBox({
      title: `Reject ${version}`,
      prompt: 'Why? Rejected versions are negative evidence; the reason is what others will read.',
      value: failing.length ? `gate: ${failing.join(' | ')}`.slice(0, 2000) : '',
      validateInput: (v) => (v.trim() ? undefined : 'a reason is required'),
    });
    if (!reason) return false;
    const e = await rejectVersion(h, version, reason);
    host.output.info(`${e.id} rejected: ${e.rejectReason}`);
    void vscode.window.showInformationMessage(`EvoTrainer: ${e.id} rejected; ${e.branch} is kept as negative evidence.`);
    refreshGatePanel(host, version, 'rejected');
    host.refresh();
    return true;
  } catch (err) {
    fail(host, 'Reject failed', err);
    return false;
  }
}

/** For tests and the output channel: the gate's reasons as text. */
export { gateText };

/** Writes the pending gate the loop would have left (a person dismissed the question). */
export function leavePending(root: string, gate: object): void {
  const file = path.join(root, '.evotrainer', 'evolve', 'pending.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(gate, null, 2));
  renameSync(`${file}.tmp`, file);
}
