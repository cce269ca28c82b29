// The Memory view: tiers → files → imports, with problems decorated; click opens.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { TREE, TreeAgent, TreeFile, TreeFolder, TreeImport, TreeResponse } from "./protocol";
import { trustAction } from "./statusBar";

const TIER_LABELS: Record<string, string> = {
  global: "Global",
  userProjectMemory: "Private project memory",
  extension: "Extensions",
  project: "Project (loaded at start-up)",
  jit: "Subfolders (loaded just in time)",
  restricted: "Not read (Restricted Mode)",
};

const AGENT_LABELS: Record<TreeAgent["agent"], string> = {
  claude: "Claude Code",
  agents: "AGENTS.md agents",
  codex: "Codex",
  copilot: "GitHub Copilot CLI",
  "vscode-chat": "VS Code chat",
  cursor: "Cursor rules (convention)",
  antigravity: "Antigravity CLI (convention)",
  opencode: "OpenCode",
  pi: "pi",
};

const AGENT_TOOLTIPS: Record<TreeAgent["agent"], string> = {
  claude: "What Claude Code reads in this folder (CLAUDE.md tiers, includes, rules)",
  agents: "The AGENTS.md files: the nearest one is in force",
  codex: "What Codex sends at start here (global AGENTS.md, then the project's from the git root down)",
  copilot: "What GitHub Copilot CLI sends at start here (custom instructions, always-on instruction files), and what it adds when a tool touches a path",
  "vscode-chat": "What VS Code's chat attaches to each request here (copilot-instructions.md, AGENTS.md, CLAUDE.md, *.instructions.md by applyTo; read from VS Code's sources)",
  cursor: "Cursor's project rules as its docs describe them (.cursor/rules, .cursorrules, AGENTS.md): a convention, not verified",
  antigravity: "What Antigravity CLI reads as public descriptions of it say (GEMINI.md, AGENTS.md, .agents/ rules, workflows, skills): a convention, not verified",
  opencode: "What OpenCode sends at start here (its global file, the AGENTS.md, CLAUDE.md or CONTEXT.md chain, opencode.json instructions), and what a read adds",
  pi: "What pi sends at start here (its global context file, one AGENTS.md or CLAUDE.md per folder from / down, .pi/SYSTEM.md and APPEND_SYSTEM.md)",
};

const AGENT_ICONS: Record<TreeAgent["agent"], string> = {
  claude: "hubot",
  agents: "organization",
  codex: "terminal",
  copilot: "copilot",
  "vscode-chat": "comment-discussion",
  cursor: "law",
  antigravity: "rocket",
  opencode: "code",
  pi: "symbol-constant",
};

type Node =
  | { kind: "status"; state: "starting" | "stopped" }
  | { kind: "trust"; notice: string; rules?: string | null }
  | { kind: "folder"; folder: TreeFolder }
  | { kind: "gemini"; folder: TreeFolder; tiers: Node[]; files: number }
  | { kind: "tier"; folder: TreeFolder; tier: string; files: TreeFile[] }
  | { kind: "agent"; folder: TreeFolder; agent: TreeAgent }
  | { kind: "group"; folder: TreeFolder; group: string; files: TreeFile[] }
  | { kind: "file"; folder: TreeFolder; file: TreeFile }
  | { kind: "import"; parent: TreeFile; item: TreeImport };

export class MemoryTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private data: TreeResponse | undefined;
  private timer: NodeJS.Timeout | undefined;
  private view: vscode.TreeView<Node> | undefined;
  private startedWaiting = Date.now();

  constructor(private readonly client: MemlensClient) {}

  /** Refresh soon (coalesces bursts of diagnostics and JIT events). */
  refresh(delayMs = 300): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.reload(), delayMs);
  }

  /**
   * Fetches the tree first and redraws only when it changed. Redrawing makes VS Code drop its
   * tree items; a request it had in flight for one of them (expanding "Global" while the view
   * first shows) then logs "No tree item with id '…' found" in the extension host. With the
   * data already here, the redraw's root answers at once, before such a request is handled.
   */
  private async reload(): Promise<void> {
    const fresh = await this.client.request<TreeResponse>(TREE, {}).catch(() => undefined);
    if (fresh === undefined) {
      // No answer (the server is restarting): show "starting…"; getChildren asks again.
      this.data = undefined;
      this.changed.fire(undefined);
      return;
    }
    if (this.data && JSON.stringify(fresh) === JSON.stringify(this.data)) {
      return;
    }
    this.data = fresh;
    this.changed.fire(undefined);
  }

  /** Shows "starting…" until the server answers (after activation or Restart Server). */
  starting(): void {
    this.startedWaiting = Date.now();
    // Forget the old server's tree at once, so the view says "starting…" rather than showing
    // stale figures (or none) until the new server answers.
    this.data = undefined;
    this.changed.fire(undefined);
  }

  /** The view, for its message (Restricted Mode). */
  attach(view: vscode.TreeView<Node>): void {
    this.view = view;
  }

  private async load(): Promise<TreeResponse | undefined> {
    if (!this.data) {
      // No answer: the server is (re)starting or still building its index.
      this.data = await this.client.request<TreeResponse>(TREE, {}).catch(() => undefined);
    }
    return this.data;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const data = await this.load();
      if (!data) {
        this.setMessage(undefined);
        // Ask again soon; after a minute without an answer, say so (and link to the logs).
        const waited = Date.now() - this.startedWaiting;
        if (waited < 60_000) {
          this.refresh(1000);
        }
        return [{ kind: "status", state: waited < 60_000 ? "starting" : "stopped" }];
      }
      this.startedWaiting = Date.now();
      const notices = [...new Set(data.folders.map((folder) => folder.notice).filter((n): n is string => !!n))];
      this.setMessage(notices.length > 0 ? notices.join("\n") : undefined);
      const untrusted = data.folders.find((folder) => folder.notice);
      const trust: Node[] = untrusted?.notice ? [{ kind: "trust", notice: untrusted.notice, rules: untrusted.trustRules }] : [];
      if (data.folders.length === 1) {
        const tiers = this.tiers(data.folders[0]);
        return tiers.length > 0 ? [...trust, ...tiers] : trust;
      }
      return [...trust, ...data.folders.map((folder): Node => ({ kind: "folder", folder }))];
    }
    switch (node.kind) {
      case "folder":
        return this.tiers(node.folder);
      case "gemini":
        return node.tiers;
      case "tier":
        return node.files.map((file) => ({ kind: "file", folder: node.folder, file }));
      case "agent":
        return this.agentRows(node.folder, node.agent.files);
      case "group":
        return node.files.map((file) => ({ kind: "file", folder: node.folder, file }));
      case "file":
        return node.file.imports.map((item) => ({ kind: "import", parent: node.file, item }));
      default:
        return [];
    }
  }

  /** An agent's rows in the server's order; rows the server puts in a group (Claude Code's
   * topic files, by type) under one node each, where the group's first row comes. */
  private agentRows(folder: TreeFolder, files: TreeFile[]): Node[] {
    const nodes: Node[] = [];
    const groups = new Map<string, TreeFile[]>();
    for (const file of files) {
      if (!file.group) {
        nodes.push({ kind: "file", folder, file });
        continue;
      }
      let members = groups.get(file.group);
      if (!members) {
        members = [];
        groups.set(file.group, members);
        nodes.push({ kind: "group", folder, group: file.group, files: members });
      }
      members.push(file);
    }
    return nodes;
  }

  private setMessage(message: string | undefined): void {
    if (this.view) {
      this.view.message = message;
    }
  }

  private tiers(folder: TreeFolder): Node[] {
    const order = ["global", "userProjectMemory", "extension", "project", "jit", "restricted"];
    const tiers: Node[] = [];
    let files = 0;
    for (const tier of order) {
      const inTier = folder.files.filter((file) => file.tier === tier);
      if (inTier.length > 0) {
        tiers.push({ kind: "tier", folder, tier, files: inTier });
        files += inTier.length;
      }
    }
    // Every agent is a node of its own, Gemini CLI's tiers under its name like the others'
    // files (none when it has nothing here: a Claude-only repository shows no Gemini CLI).
    const nodes: Node[] = tiers.length > 0 ? [{ kind: "gemini", folder, tiers, files }] : [];
    for (const agent of folder.otherAgents ?? []) {
      nodes.push({ kind: "agent", folder, agent });
    }
    return nodes;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "status": {
        const starting = node.state === "starting";
        const item = new vscode.TreeItem(starting ? "Starting the Memory Lens server…" : "The Memory Lens server is not running");
        item.description = starting ? "" : "Show Logs";
        item.tooltip = starting
          ? "Memory files appear once the server has read the workspace."
          : "No answer from the server for a minute: its log says why.";
        item.iconPath = new vscode.ThemeIcon(starting ? "loading~spin" : "warning");
        item.command = { title: "Show Logs", command: "memlens.showLogs" };
        return item;
      }
      case "trust": {
        const action = trustAction(node.rules);
        const item = new vscode.TreeItem(`${action.title}…`);
        item.description = node.rules ? "Untrusted" : "Restricted Mode";
        item.tooltip = node.notice;
        item.iconPath = new vscode.ThemeIcon("workspace-untrusted");
        item.command = action;
        item.contextValue = "memlens.trust";
        return item;
      }
      case "folder": {
        const item = new vscode.TreeItem(path.basename(node.folder.folder), vscode.TreeItemCollapsibleState.Expanded);
        const agent = node.folder.agentLabel ? ` · ${node.folder.agentLabel}` : "";
        item.description = `${node.folder.mode} mode${node.folder.trusted ? "" : ", untrusted"}${agent}`;
        item.tooltip = node.folder.agentNote ?? undefined;
        item.iconPath = new vscode.ThemeIcon("root-folder");
        return item;
      }
      case "gemini": {
        // Open: its tiers were the view's top level before every agent had a node, and the
        // chat panel works with this memory.
        const item = new vscode.TreeItem("Gemini CLI", vscode.TreeItemCollapsibleState.Expanded);
        item.description = `${node.files}`;
        item.tooltip = "What Gemini CLI loads in this folder: global, project and just-in-time memory (tiers, imports)";
        item.iconPath = new vscode.ThemeIcon("sparkle");
        return item;
      }
      case "tier": {
        const item = new vscode.TreeItem(TIER_LABELS[node.tier] ?? node.tier, vscode.TreeItemCollapsibleState.Expanded);
        item.description = `${node.files.length}`;
        item.iconPath = new vscode.ThemeIcon(node.tier === "jit" ? "history" : node.tier === "restricted" ? "workspace-untrusted" : "layers");
        return item;
      }
      case "agent": {
        const item = new vscode.TreeItem(AGENT_LABELS[node.agent.agent], vscode.TreeItemCollapsibleState.Collapsed);
        item.description = `${node.agent.files.length}`;
        item.tooltip = AGENT_TOOLTIPS[node.agent.agent];
        item.iconPath = new vscode.ThemeIcon(AGENT_ICONS[node.agent.agent]);
        item.contextValue = `memlens.agent.${node.agent.agent}`;
        return item;
      }
      case "group": {
        const item = new vscode.TreeItem(`${node.group} (${node.files.length})`, vscode.TreeItemCollapsibleState.Expanded);
        item.tooltip = `${node.group}: ${node.files.length} file${node.files.length === 1 ? "" : "s"} Claude Code reads when relevant`;
        item.iconPath = new vscode.ThemeIcon("bookmark");
        item.contextValue = "memlens.memoryGroup";
        return item;
      }
      case "file": {
        const file = node.file;
        const uri = vscode.Uri.file(file.path);
        const state = file.imports.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
        const item = new vscode.TreeItem(uri, state);
        const relative = path.relative(node.folder.folder, file.path);
        // A grouped row (a memory topic file, outside the workspace) by its file name: the
        // tooltip has the path.
        item.label = file.group ? path.basename(file.path) : relative.startsWith("..") ? file.path : relative;
        // Its own problems, then those in the files it imports (said apart: the row counts
        // both, and says which are whose).
        const count = (n: number | undefined, what: string, where = "") =>
          n ? `${n} ${what}${n === 1 ? "" : "s"}${where}` : "";
        const problems = [
          count(file.errors, "error"),
          count(file.warnings, "warning"),
          count(file.importErrors, "error", " in imports"),
          count(file.importWarnings, "warning", " in imports"),
        ].filter(Boolean);
        const size = file.chars === null ? "not readable"
          : `${file.chars.toLocaleString()} chars${file.tokens != null ? ` · ~${file.tokens.toLocaleString()} tokens` : ""}`;
        const tier = node.file.tier === "agents" || TIER_LABELS[node.file.tier] ? [] : [node.file.tier];
        // A grouped row (a Claude Code topic file): its own text first (description and age),
        // the size in the tooltip.
        item.description = file.group
          ? [...(file.note ? [file.note] : []), ...problems].join(" · ")
          : [...tier, size, ...problems, ...(file.note ? [file.note] : [])].join(" · ");
        item.tooltip = file.group
          ? `${file.path}\n${[size, ...problems, ...(file.note ? [file.note] : [])].join(" · ")}`
          : `${file.path}\n${item.description}`;
        item.iconPath = file.errors || file.importErrors
          ? new vscode.ThemeIcon("error", new vscode.ThemeColor("problemsErrorIcon.foreground"))
          : file.warnings || file.importWarnings
            ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"))
            : new vscode.ThemeIcon("markdown");
        item.command = { title: "Open", command: "vscode.open", arguments: [uri] };
        item.contextValue = "memlens.file";
        return item;
      }
      case "import": {
        const entry = node.item;
        const item = new vscode.TreeItem(entry.text, vscode.TreeItemCollapsibleState.None);
        item.description = entry.exists ? path.basename(entry.target) : "missing";
        item.tooltip = entry.target;
        item.iconPath = entry.exists
          ? new vscode.ThemeIcon("references")
          : new vscode.ThemeIcon("error", new vscode.ThemeColor("problemsErrorIcon.foreground"));
        item.command = entry.exists
          ? { title: "Open", command: "vscode.open", arguments: [vscode.Uri.file(entry.target)] }
          : {
              title: "Reveal",
              command: "vscode.open",
              arguments: [
                vscode.Uri.file(node.parent.path),
                { selection: new vscode.Range(entry.line, 0, entry.line, 0) },
              ],
            };
        return item;
      }
    }
  }
}
