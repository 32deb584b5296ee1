import * as vscode from 'vscode';
import { categoryLabel, explorerArgs, formatNumber, presentVersion, type FindingsModel, type FindingsNode, type SkillsModel, type SkillsNode, type VersionNode, type VersionsModel } from './model';
import { markHidden } from '../../core/util/hidden';

/**
 * The Versions, Findings and Skills trees. They only map the state models (./model) onto
 * TreeItems; the data comes from loaders that run the engine in its own bundle, so the
 * activation bundle stays light.
 */

type Loader<T> = () => Promise<T | null>;

abstract class LoadingTree<T, N> implements vscode.TreeDataProvider<N> {
  protected readonly changed = new vscode.EventEmitter<N | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  protected model: T | null = null;
  protected error: string | null = null;
  private pending: Promise<void> | null = null;

  constructor(
    protected readonly load: Loader<T>,
    private readonly log: vscode.LogOutputChannel,
    private readonly what: string,
  ) {}

  refresh(): void {
    this.pending = null;
    this.changed.fire();
  }

  /** The model after the current load (tests and commands read the tree's view of the world). */
  async current(): Promise<T | null> {
    await this.ensure();
    return this.model;
  }

  protected async ensure(): Promise<void> {
    this.pending ??= this.load().then(
      (m) => {
        this.model = m;
        this.error = null;
      },
      (err: unknown) => {
        this.model = null;
        this.error = err instanceof Error ? err.message : String(err);
        this.log.error(`${this.what}: ${this.error}`);
      },
    );
    await this.pending;
  }

  abstract getTreeItem(element: N): vscode.TreeItem;
  abstract getChildren(element?: N): Promise<N[]>;
}

const errorItem = (message: string): vscode.TreeItem => {
  const item = new vscode.TreeItem(message);
  item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
  item.tooltip = message;
  return item;
};

// ---------------------------------------------------------------- versions

export type VersionsElement = VersionNode | { error: string };

export class VersionsTree extends LoadingTree<VersionsModel, VersionsElement> {
  getTreeItem(n: VersionsElement): vscode.TreeItem {
    if ('error' in n) return errorItem(n.error);
    const p = presentVersion(n);
    const item = new vscode.TreeItem(markHidden(p.label), n.children.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = `version:${n.id}`;
    item.description = markHidden(p.description);
    const tip = new vscode.MarkdownString();
    tip.appendText(markHidden(p.tooltip));
    item.tooltip = tip;
    item.iconPath = new vscode.ThemeIcon(p.icon.id, new vscode.ThemeColor(p.icon.color));
    item.contextValue = n.contextValue;
    item.accessibilityInformation = { label: markHidden(`${p.label}, ${p.description}`) };
    return item;
  }

  async getChildren(n?: VersionsElement): Promise<VersionsElement[]> {
    if (n && 'error' in n) return [];
    await this.ensure();
    if (this.error) return n ? [] : [{ error: `Could not read the lineage: ${this.error}` }];
    const m = this.model;
    if (!m) return [];
    const ids = n ? n.children : m.roots;
    return ids.map((id) => m.nodes.get(id)).filter((x): x is VersionNode => Boolean(x));
  }

  getParent(n: VersionsElement): VersionsElement | undefined {
    if ('error' in n || !n.parent) return undefined;
    return this.model?.nodes.get(n.parent);
  }

  node(id: string): VersionNode | undefined {
    return this.model?.nodes.get(id);
  }
}

// ---------------------------------------------------------------- findings

export type FindingsElement = FindingsNode | { error: string };

export class FindingsTree extends LoadingTree<FindingsModel, FindingsElement> {
  getTreeItem(n: FindingsElement): vscode.TreeItem {
    if ('error' in n) return errorItem(n.error);
    const C = vscode.TreeItemCollapsibleState;
    const scope = this.model?.scope ?? { version: null, run: null, rollouts: 0 };
    switch (n.kind) {
      case 'scope': {
        const item = new vscode.TreeItem(markHidden(`Rollouts of ${n.label}`));
        item.description = n.description;
        item.iconPath = new vscode.ThemeIcon('filter');
        item.tooltip = 'Select a version in the Versions view to see the findings of its rollouts.';
        return item;
      }
      case 'severity': {
        const item = new vscode.TreeItem(n.severity === 'critical' ? 'Critical' : n.severity === 'warning' ? 'Warning' : 'Info', C.Expanded);
        item.id = `severity:${n.severity}`;
        item.description = String(n.count);
        item.iconPath = new vscode.ThemeIcon(n.severity === 'critical' ? 'error' : n.severity === 'warning' ? 'warning' : 'info', new vscode.ThemeColor(n.severity === 'critical' ? 'errorForeground' : n.severity === 'warning' ? 'editorWarning.foreground' : 'editorInfo.foreground'));
        return item;
      }
      case 'finding': {
        const item = new vscode.TreeItem(markHidden(`${n.finding.rule} ${n.finding.title}`));
        item.id = `finding:${n.finding.id}`;
        item.description = n.failureMode ? markHidden(`→ ${n.failureMode.replace(/_/g, ' ')}`) : '';
        item.tooltip = new vscode.MarkdownString().appendText(markHidden(`${n.finding.title}\n\n${n.finding.suggestion ?? ''}`));
        item.iconPath = new vscode.ThemeIcon(n.finding.severity === 'critical' ? 'error' : 'warning', new vscode.ThemeColor(n.finding.severity === 'critical' ? 'errorForeground' : 'editorWarning.foreground'));
        item.contextValue = 'evotrainer.finding';
        item.command = { command: 'evotrainer.openFailureExplorer', title: 'Open Failure Explorer', arguments: [explorerArgs(n, scope)] };
        return item;
      }
      case 'modes': {
        const item = new vscode.TreeItem('Failure modes', C.Collapsed);
        item.id = 'modes';
        item.description = `${n.count} failing rollouts`;
        item.iconPath = new vscode.ThemeIcon('graph');
        return item;
      }
      case 'mode': {
        const item = new vscode.TreeItem(markHidden(n.mode.replace(/_/g, ' ')));
        item.id = `mode:${n.mode}`;
        item.description = String(n.count);
        item.iconPath = new vscode.ThemeIcon('debug-breakpoint-log-unverified');
        item.contextValue = 'evotrainer.failureMode';
        item.command = { command: 'evotrainer.openFailureExplorer', title: 'Open Failure Explorer', arguments: [explorerArgs(n, scope)] };
        return item;
      }
    }
  }

  async getChildren(n?: FindingsElement): Promise<FindingsElement[]> {
    if (n && 'error' in n) return [];
    await this.ensure();
    if (this.error) return n ? [] : [{ error: `Could not compute findings: ${this.error}` }];
    if (!this.model) return [];
    return n ? (this.model.children.get(n) ?? []) : this.model.top;
  }
}

// ---------------------------------------------------------------- skills

export type SkillsElement = SkillsNode | { error: string };

export class SkillsTree extends LoadingTree<SkillsModel, SkillsElement> {
  getTreeItem(n: SkillsElement): vscode.TreeItem {
    if ('error' in n) return errorItem(n.error);
    const C = vscode.TreeItemCollapsibleState;
    switch (n.kind) {
      case 'domain': {
        const item = new vscode.TreeItem(n.domain, C.Expanded);
        item.id = `domain:${n.domain}`;
        item.description = `${n.count} skill${n.count === 1 ? '' : 's'}`;
        item.iconPath = new vscode.ThemeIcon('globe');
        return item;
      }
      case 'category': {
        const item = new vscode.TreeItem(categoryLabel(n.category), C.Expanded);
        item.id = `category:${n.domain}:${n.category}`;
        item.description = String(n.count);
        item.iconPath = new vscode.ThemeIcon('symbol-class');
        return item;
      }
      case 'skill': {
        const s = n.skill;
        const item = new vscode.TreeItem(s.title);
        item.id = `skill:${n.domain}:${s.category}:${s.origin}:${s.id}`;
        item.description = `${s.id}${s.shared ? ' · shared' : s.origin === 'library' ? ' · library' : ''} · ${formatNumber(s.evidence)} evidence`;
        item.tooltip = new vscode.MarkdownString().appendText(`${s.title}\n\ntrigger: ${s.trigger}\ndomains: ${s.domains.join(', ')}\n${s.file}`);
        item.iconPath = new vscode.ThemeIcon('mortar-board', new vscode.ThemeColor(s.shared ? 'charts.green' : 'charts.blue'));
        item.contextValue = `evotrainer.skill origin:${s.origin}`;
        item.command = { command: 'evotrainer.showSkillEvidence', title: 'Show Evidence', arguments: [n] };
        return item;
      }
      case 'problem':
        return errorItem(n.message);
    }
  }

  async getChildren(n?: SkillsElement): Promise<SkillsElement[]> {
    if (n && 'error' in n) return [];
    await this.ensure();
    if (this.error) return n ? [] : [{ error: `Could not read the skills: ${this.error}` }];
    if (!this.model) return [];
    return n ? (this.model.children.get(n) ?? []) : this.model.top;
  }
}
