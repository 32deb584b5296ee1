import * as vscode from 'vscode';

/**
 * Versions, Runs, Findings and Skills are registered from the start so their welcome
 * content (package.json `viewsWelcome`) explains what will appear; each is replaced by
 * its real provider as the matching feature lands.
 */
export class EmptyTreeProvider implements vscode.TreeDataProvider<never> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  getTreeItem(element: never): vscode.TreeItem {
    return element;
  }
  getChildren(): never[] {
    return [];
  }
  refresh(): void {
    this.changed.fire();
  }
}
