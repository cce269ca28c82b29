// The Skills view. The skills issue fills it (loaded skills, the inbox); until then it shows
// the inbox folder and a clear empty state.
import * as vscode from "vscode";

type Node = { kind: "inbox" };

export class SkillsTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    return node ? [] : [{ kind: "inbox" }];
  }

  getTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem("Inbox", vscode.TreeItemCollapsibleState.None);
    item.description = "no extracted skills waiting";
    item.iconPath = new vscode.ThemeIcon("inbox");
    item.tooltip = "Skills the agent extracts from your sessions wait here for you to accept or reject.";
    return item;
  }
}
