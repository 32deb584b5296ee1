import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { LogChunk, NamedProfile } from '../../core/jobs';
import { displayLine, JobLogView } from '../../core/jobs/logLines';
import { curvesWebview } from '../curves/webview';
import type { EditorSession, Engine } from '../session';
import { buildRunsModel, formatDuration, groupDescription, isFinalState, plain, statusText, type ProfileGroup, type RunNode, type RunsModel } from './model';

type RunsElement = ProfileGroup | RunNode | { kind: 'error'; message: string };

/** The log follower of the editor: its offsets in the job records are its own (the CLI's are "cli"). */
export const EDITOR_FOLLOWER = 'editor';

const setting = () => vscode.workspace.getConfiguration('evotrainer').get<unknown>('clusters');

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
const needsLogin = (err: unknown) => !!err && typeof err === 'object' && (err as { failure?: unknown }).failure === 'needs-login';


class RunsTree implements vscode.TreeDataProvider<RunsElement> {
  private readonly changed = new vscode.EventEmitter<RunsElement | RunsElement[] | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  model: RunsModel = { groups: [], active: 0, running: 0 };
  error: string | null = null;

  constructor(private readonly load: () => RunsModel | null) {}

  /**
   * Re-reads the records. When only rows' contents changed, the existing elements are
   * updated in place and only they are redrawn: a context menu open on a row keeps its
   * element (a whole-tree refresh would drop it while the menu is up).
   */
  reload(): RunsModel {
    const hadError = this.error;
    let next: RunsModel;
    try {
      next = this.load() ?? { groups: [], active: 0, running: 0 };
      this.error = null;
    } catch (err) {
      this.error = errMessage(err);
      this.changed.fire();
      return this.model;
    }
    const shape = (m: RunsModel) => JSON.stringify(m.groups.map((g) => [g.name, g.jobs.map((j) => j.id)]));
    if (hadError || shape(next) !== shape(this.model)) {
      this.model = next;
      this.changed.fire();
      return this.model;
    }
    const dirty: RunsElement[] = [];
    this.model.groups.forEach((g, i) => {
      const n = next.groups[i]!;
      const { jobs, ...rest } = n;
      if (groupDescription(g) !== groupDescription(n)) dirty.push(g);
      Object.assign(g, rest);
      g.jobs.forEach((j, k) => {
        const nj = jobs[k]!;
        if (JSON.stringify(j) !== JSON.stringify(nj)) {
          Object.assign(j, nj);
          dirty.push(j);
        }
      });
    });
    this.model.active = next.active;
    this.model.running = next.running;
    if (dirty.length) this.changed.fire(dirty);
    return this.model;
  }

  getTreeItem(n: RunsElement): vscode.TreeItem {
    if (n.kind === 'error') {
      const item = new vscode.TreeItem(n.message);
      item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
      item.tooltip = n.message;
      return item;
    }
    if (n.kind === 'profile') {
      const item = new vscode.TreeItem(n.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `profile:${n.name}`;
      item.description = groupDescription(n);
      item.iconPath = new vscode.ThemeIcon(n.profileKind === 'local' ? 'vm' : n.profileKind === 'slurm' ? 'server-process' : 'remote');
      item.contextValue = 'evotrainer.profile';
      item.accessibilityInformation = { label: `${n.name}, ${item.description}` };
      return item;
    }
    const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
    item.id = `job:${n.id}`;
    item.description = n.description;
    const tip = new vscode.MarkdownString();
    tip.appendText(n.tooltip);
    item.tooltip = tip;
    item.iconPath = new vscode.ThemeIcon(n.icon.id, new vscode.ThemeColor(n.icon.color));
    item.contextValue = n.contextValue;
    item.command = n.contextValue.includes('+log') ? { command: 'evotrainer.openJobLog', title: 'Open Job Log', arguments: [n] } : undefined;
    item.accessibilityInformation = { label: `${n.label}, ${n.description}` };
    return item;
  }

  getChildren(n?: RunsElement): RunsElement[] {
    if (!n) {
      if (this.error) return [{ kind: 'error', message: this.error }];
      return this.model.groups;
    }
    return n.kind === 'profile' ? n.jobs : [];
  }

  getParent(n: RunsElement): RunsElement | undefined {
    if (n.kind !== 'job') return undefined;
    return this.model.groups.find((g) => g.name === n.profile);
  }
}

/** A job argument: a Runs row (context menu), an id (palette, tests), or nothing (pick). */
function jobId(arg: unknown): string | undefined {
  if (typeof arg === 'string' && /^[A-Za-z0-9_-]+$/.test(arg)) return arg;
  if (arg && typeof arg === 'object' && (arg as RunNode).kind === 'job' && typeof (arg as RunNode).id === 'string') return (arg as RunNode).id;
  return undefined;
}

/**
 * The Runs view (jobs per cluster profile), the job commands, the status-bar item and the
 * log channels. Every job that is not final is watched through the engine's monitor: one
 * poll per profile per interval for all of them (and for the log being followed). The
 * engine loads on first use (a Runs view shown, a command run, a job record found).
 */
export function registerJobs(session: EditorSession): void {
  const { context, output, engine, root } = session;
  const tree = new RunsTree(() => {
    const r = root();
    return r ? buildRunsModel(engine().loadJobs(r), Date.now()) : null;
  });
  const view = vscode.window.createTreeView<RunsElement>('evotrainer.runs', { treeDataProvider: tree, showCollapseAll: true });
  const status = vscode.window.createStatusBarItem('evotrainer.jobs', vscode.StatusBarAlignment.Left, 50);
  status.name = 'EvoTrainer Jobs';
  status.command = 'evotrainer.runs.focus';
  // The line a followed job is drawing (a progress bar redrawn with '\r'): an output channel
  // shows a line only once it ends, so it shows here meanwhile.
  const progress = vscode.window.createStatusBarItem('evotrainer.jobProgress', vscode.StatusBarAlignment.Left, 49);
  progress.name = 'EvoTrainer Job Progress';
  let progressOf: string | null = null;
  const showProgress = (id: string, label: string, line: string) => {
    if (!line) {
      if (progressOf === id) {
        progress.hide();
        progressOf = null;
      }
      return;
    }
    progressOf = id;
    const short = line.length > 60 ? `${line.slice(0, 59)}…` : line;
    // Log text is the job's: a "$(name)" in it must not draw an icon.
    progress.text = `$(loading~spin) ${label}: ${short.replace(/\$\(/g, '\\$(')}`;
    progress.tooltip = `${label}: ${line}`;
    progress.command = { command: 'evotrainer.openJobLog', title: 'Open Job Log', arguments: [id] };
    progress.show();
  };
  const watches = new Map<string, AbortController>();
  const logs = new Map<string, { channel: vscode.OutputChannel; follow: AbortController | null; view: JobLogView }>();
  const stop = new AbortController();
  let loginOpen: Promise<void> | null = null;
  let ticker: NodeJS.Timeout | null = null;
  let loaded = false;

  const showStatus = (m: RunsModel) => {
    const s = statusText(m);
    if (!s) return status.hide();
    status.text = s.text;
    status.tooltip = s.tooltip;
    status.show();
  };

  /** Re-reads the records (local files), updates the view and the status bar, watches what is active. */
  const refresh = () => {
    const r = root();
    if (!r) return;
    loaded = true;
    const m = tree.reload();
    showStatus(m);
    for (const g of m.groups) for (const j of g.jobs) if (!isFinalState(j.state) && j.contextValue.includes('+cancel')) watch(r, j.id);
    // Elapsed times move while jobs run: redraw every few seconds while the view shows them.
    if (m.active && !ticker) {
      ticker = setInterval(() => {
        if (!view.visible && !tree.model.active) return;
        const now = tree.reload();
        showStatus(now);
        if (!now.active && ticker) {
          clearInterval(ticker);
          ticker = null;
        }
      }, 5_000);
    }
  };

  /**
   * A terminal runs the profile's login once (ssh -N -f: it asks for the password or code,
   * opens the shared connection and returns). Done when batch calls get through, or when the
   * terminal's process ends.
   */
  const login = (profile: NamedProfile): Promise<void> => {
    loginOpen ??= (async () => {
      const e = engine();
      const argv = e.loginCommand(profile);
      const where = profile.host ?? profile.name;
      const term = vscode.window.createTerminal({ name: `Log in: ${profile.name}`, shellPath: argv[0]!, shellArgs: argv.slice(1), message: `EvoTrainer: log in to ${where}; jobs then share this connection.` });
      term.show();
      void vscode.window.showInformationMessage(`EvoTrainer: ${where} needs a login by you: log in in the terminal "${term.name}". EvoTrainer carries on when the connection is up.`);
      let closed = false;
      const sub = vscode.window.onDidCloseTerminal((t) => {
        if (t === term) closed = true;
      });
      try {
        const deadline = Date.now() + 10 * 60_000;
        for (;;) {
          await new Promise((r) => setTimeout(r, 1_000));
          if (stop.signal.aborted) throw new Error('the editor is closing');
          if (term.exitStatus !== undefined || closed) {
            if (await e.loginWorks(profile)) return;
            throw new Error(`the login to ${where} did not complete (the terminal ended); run "EvoTrainer: Launch Job…" or the action again to retry`);
          }
          if (await e.loginWorks(profile)) return;
          if (Date.now() > deadline) throw new Error(`no login to ${where} within 10 minutes; run the action again to retry`);
        }
      } finally {
        sub.dispose();
      }
    })().finally(() => {
      loginOpen = null;
    });
    return loginOpen;
  };

  /** Runs an engine call; a login that needs a person opens the login terminal once, then it runs again. */
  async function withLogin<T>(profile: () => NamedProfile | null, run: () => Promise<T>, opts: { ask?: boolean } = {}): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const p = needsLogin(err) ? profile() : null;
      if (!p || p.kind === 'local') throw err;
      output.warn(`${p.name}: ${errMessage(err)}`);
      // A background watch asks first; an action the person just started logs in at once.
      if (opts.ask && !loginOpen) {
        const go = await vscode.window.showWarningMessage(`EvoTrainer: following the jobs on ${p.name} needs a login to ${p.host ?? p.name}.`, 'Log In');
        if (go !== 'Log In') throw err;
      }
      await login(p);
      return run();
    }
  }

  const watch = (r: string, id: string) => {
    if (watches.has(id)) return;
    const ctl = new AbortController();
    watches.set(id, ctl);
    stop.signal.addEventListener('abort', () => ctl.abort());
    const e = engine();
    let profile: NamedProfile | null = null;
    try {
      profile = e.jobRecord(r, id).profile;
    } catch {
      /* the record vanished: the watch fails below and is dropped */
    }
    void withLogin(() => profile, () => e.watchJob(r, id, { onState: () => refresh(), onOffline: (err) => output.warn(`${id}: ${err.message}; retrying (the job keeps running)`), signal: ctl.signal }), { ask: true })
      .then((final) => {
        output.info(`job ${id} ${final.state}${final.elapsedSeconds !== null ? ` after ${formatDuration(final.elapsedSeconds)}` : ''}`);
        if (final.failure) output.warn(`${id}: ${final.failure.message}. Next: ${final.failure.nextStep}`);
      })
      .catch((err: unknown) => {
        if (!ctl.signal.aborted) output.error(`watching ${id}: ${errMessage(err)}`);
      })
      .finally(() => {
        if (watches.get(id) === ctl) watches.delete(id);
        if (!stop.signal.aborted) refresh();
      });
  };

  const pickJob = async (title: string, filter: (n: RunNode) => boolean): Promise<string | undefined> => {
    const m = tree.reload();
    const jobs = m.groups.flatMap((g) => g.jobs).filter(filter);
    if (!jobs.length) {
      void vscode.window.showInformationMessage(`EvoTrainer: no job to ${title.toLowerCase()}.`);
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      jobs.map((j) => ({ label: `$(${j.icon.id.replace('~spin', '')}) ${j.label}`, description: `${j.profile} · ${j.description}`, detail: j.id, id: j.id })),
      { title: `EvoTrainer: ${title}`, placeHolder: 'job', matchOnDescription: true, matchOnDetail: true },
    );
    return pick?.id;
  };

  const openLog = async (id: string, o: { reveal?: boolean } = {}): Promise<void> => {
    const reveal = o.reveal !== false;
    const r = root();
    if (!r) return;
    const e = engine();
    const rec = e.jobRecord(r, id);
    const have = logs.get(id);
    if (have) {
      if (reveal) have.channel.show(true);
      if (have.follow || isFinalState(rec.state)) return;
    }
    const channel = have?.channel ?? vscode.window.createOutputChannel(`EvoTrainer Job ${plain(rec.template, 40)} ${id}`);
    // Lines as a terminal shows them (a progress bar's last redraw), across follows of the same channel.
    const entry = { channel, follow: new AbortController() as AbortController | null, view: have?.view ?? new JobLogView(Boolean(rec.array)) };
    logs.set(id, entry);
    if (!have) context.subscriptions.push(channel);
    if (reveal) channel.show(true);
    // The log feeds the training curves too (verl's step lines), live, before any import.
    const label = `${plain(rec.template, 40)} ${id}`;
    const write = (c: LogChunk) => {
      channel.append(entry.view.write(c.task, c.text));
      showProgress(id, label, entry.view.pending(c.task));
      e.liveCurves.feed(id, rec.run ?? id, rec.version, c.task, c.text);
    };
    if (!have) {
      channel.appendLine(`── ${rec.template}${rec.version ? ` ${rec.version}` : ''} · job ${id} on ${rec.profile.name}${rec.remoteId ? ` (#${rec.remoteId})` : ''} · ${rec.state}`);
      // What an editor already showed of this log (another window, before a restart): then on from there.
      const before = await withLogin(() => rec.profile, () => e.shownBefore(r, id, EDITOR_FOLLOWER)).catch((err: unknown) => {
        channel.appendLine(`(the earlier part of the log could not be read: ${errMessage(err)})`);
        return [];
      });
      before.forEach(write);
    }
    const signal = entry.follow!.signal;
    stop.signal.addEventListener('abort', () => entry.follow?.abort());
    try {
      const final = await withLogin(() => rec.profile, () => e.followJob(r, id, { follower: EDITOR_FOLLOWER, onLog: write, onState: () => refresh(), onOffline: (err) => channel.appendLine(`(${err.message}; retrying: the job keeps running)`), signal }));
      e.liveCurves.finish(id);
      channel.append(entry.view.end());
      channel.appendLine(`── ${final.state}${final.exitCode !== null ? ` (exit ${final.exitCode})` : ''}${final.elapsedSeconds !== null ? ` after ${formatDuration(final.elapsedSeconds)}` : ''}`);
      const f = e.failureText(final);
      if (f) channel.appendLine(displayLine(f));
    } catch (err) {
      if (!signal.aborted) channel.appendLine(`(stopped following: ${errMessage(err)})`);
    } finally {
      entry.follow = null;
      showProgress(id, label, '');
    }
  };

  const launch = async (): Promise<void> => {
    const r = root();
    if (!r) {
      void vscode.window.showErrorMessage('EvoTrainer: open a folder with an evotrainer.yaml harness to launch jobs.');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('EvoTrainer: launching a job runs harness code; trust this workspace first (Workspaces: Manage Workspace Trust).');
      return;
    }
    const e = engine();
    let choices: Awaited<ReturnType<Engine['launchChoices']>>;
    try {
      choices = await e.launchChoices(r, setting());
    } catch (err) {
      void vscode.window.showErrorMessage(`EvoTrainer: ${errMessage(err)}`, { modal: false });
      return;
    }
    const version = await vscode.window.showQuickPick(choices.versions.map((v) => ({ label: v.label, description: v.description, v })), { title: 'EvoTrainer: Launch Job (1/3) — version', placeHolder: 'the harness version to run' });
    if (!version) return;
    const templates = await e.templatesAt(r, version.v.commit);
    if (!templates.length) {
      void vscode.window.showErrorMessage(`EvoTrainer: ${version.label} has no job templates: add jobs/<name>.sbatch or jobs.<name> in evotrainer.yaml.`);
      return;
    }
    const template = await vscode.window.showQuickPick(templates.map((t) => ({ label: t.name, description: t.origin })), { title: `EvoTrainer: Launch Job (2/3) — template for ${version.label}`, placeHolder: 'job template' });
    if (!template) return;
    const profile = await vscode.window.showQuickPick(choices.profiles.map((p) => ({ label: p.name, description: `${p.description}${p.isDefault ? ' · default' : ''}` })), { title: `EvoTrainer: Launch Job (3/3) — where to run ${template.label} ${version.label}`, placeHolder: 'cluster profile' });
    if (!profile) return;
    const key = `editor:${template.label}:${version.v.commit}:${profile.label}:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const req = { version: version.v.id, commit: version.v.commit, template: template.label, profile: profile.label, setting: setting(), key };
    try {
      const rec = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: submitting ${template.label} ${version.label} to ${profile.label}…` }, () =>
        withLogin(() => e.profileNamed(r, req.setting, req.profile), () => e.launchJob(r, req)),
      );
      refresh();
      if (rec.state === 'failed') {
        void vscode.window.showErrorMessage(`EvoTrainer: ${rec.failure?.message ?? 'the job failed at submit'}. ${rec.failure?.nextStep ?? ''}`);
        return;
      }
      void vscode.window.showInformationMessage(`EvoTrainer: job ${rec.id} submitted to ${rec.profile.name}${rec.remoteId ? ` (#${rec.remoteId})` : ''}.`);
      void openLog(rec.id);
    } catch (err) {
      output.error(`launch: ${errMessage(err)}`);
      void vscode.window.showErrorMessage(`EvoTrainer: the job was not submitted: ${errMessage(err)}`);
    }
  };

  const cancel = async (arg?: unknown): Promise<void> => {
    const r = root();
    if (!r) return;
    const id = jobId(arg) ?? (await pickJob('Cancel Job', (j) => j.contextValue.includes('+cancel')));
    if (!id) return;
    const e = engine();
    try {
      const rec = e.jobRecord(r, id);
      await withLogin(() => rec.profile, () => e.cancelRun(r, id));
      void vscode.window.showInformationMessage(`EvoTrainer: cancel sent to ${id}.`);
    } catch (err) {
      void vscode.window.showErrorMessage(`EvoTrainer: cancelling ${id} failed: ${errMessage(err)}`);
    }
    refresh();
  };

  const fetch = async (arg?: unknown): Promise<void> => {
    const r = root();
    if (!r) return;
    const id = jobId(arg) ?? (await pickJob('Fetch Outputs', (j) => j.contextValue.includes('+fetch')));
    if (!id) return;
    const e = engine();
    try {
      const rec = e.jobRecord(r, id);
      const res = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: fetching the outputs of ${id}…` }, () => withLogin(() => rec.profile, () => e.fetchAndImport(r, id)));
      const n = res.files.filter((f) => f.status === 'fetched').length;
      void vscode.window.showInformationMessage(`EvoTrainer: ${n} file(s) fetched, ${res.files.length - n} unchanged (${res.transport}, verified)${res.imported !== undefined ? `; ${res.imported} rollout(s) imported` : ''}.`);
      void vscode.commands.executeCommand('evotrainer.refreshViews');
    } catch (err) {
      void vscode.window.showErrorMessage(`EvoTrainer: fetching ${id}'s outputs failed: ${errMessage(err)}`);
    }
    refresh();
  };

  const cmd = (id: string, run: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, run));
  cmd('evotrainer.launchJob', () => launch());
  cmd('evotrainer.cancelJob', (arg?: unknown) => cancel(arg));
  cmd('evotrainer.openJobLog', async (arg?: unknown) => {
    const id = jobId(arg) ?? (await pickJob('Open Job Log', (j) => j.contextValue.includes('+log')));
    if (id) await openLog(id);
  });
  cmd('evotrainer.showJobCurves', async (arg?: unknown) => {
    const id = jobId(arg) ?? (await pickJob('Show Job Curves', (j) => j.contextValue.includes('+log')));
    if (!id) return;
    // The chart first; following the log then feeds it (and the log's channel) as the job runs.
    await session.webviews.show(curvesWebview, { jobId: id });
    void openLog(id, { reveal: false });
  });
  cmd('evotrainer.fetchJobOutputs', (arg?: unknown) => fetch(arg));
  cmd('evotrainer.refreshRuns', () => refresh());

  // A bad evotrainer.clusters setting is named as soon as it changes, not at the next launch.
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((ev) => {
      if (!ev.affectsConfiguration('evotrainer.clusters')) return;
      try {
        engine().mergedProfiles(root(), setting());
      } catch (err) {
        void vscode.window.showErrorMessage(`EvoTrainer: ${errMessage(err)}`);
      }
    }),
  );

  // Jobs submitted by the CLI or the evolve loop appear too: their records change on disk.
  const records = vscode.workspace.createFileSystemWatcher('**/.evotrainer/jobs/*.json');
  let pending: NodeJS.Timeout | null = null;
  const soon = () => {
    if (!loaded && !view.visible) return;
    if (pending) clearTimeout(pending);
    pending = setTimeout(() => {
      pending = null;
      refresh();
    }, 300);
  };
  context.subscriptions.push(
    view,
    status,
    progress,
    records,
    records.onDidCreate(soon),
    records.onDidChange(soon),
    view.onDidChangeVisibility((ev) => {
      if (ev.visible) refresh();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => refresh()),
    {
      dispose: () => {
        stop.abort();
        if (ticker) clearInterval(ticker);
        if (pending) clearTimeout(pending);
      },
    },
  );
  if (view.visible) refresh();
  // Jobs that were running when the window closed: pick them up (the status bar shows them).
  setTimeout(() => {
    if (!loaded && root() && hasJobRecords(root()!)) refresh();
  }, 1_500);
  session.onRefresh(refresh);
}

/** Whether the harness has job records at all (a directory listing: no engine needed). */
function hasJobRecords(root: string): boolean {
  try {
    return readdirSync(path.join(root, '.evotrainer', 'jobs')).some((f) => f.endsWith('.json'));
  } catch {
    return false;
  }
}
