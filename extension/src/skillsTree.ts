// The Skills view: the inbox of extracted skills waiting for the user (accept / reject /
// open), then one group per agent: "Gemini CLI", where it is shown, with every skill it looks at
// (offered or not, with problems: memlens/skills), and each other agent in use (Claude Code, Codex) with the
// skills it offers and the ones it drops, as the server says (memlens/agentSkills): the reason
// is the row's description and tooltip. Claude Code's skills found on a read below the folder
// follow its start-up ones, "◇ listed on read" as the agent matrix's legend says it, the
// trigger ("when Claude Code reads a file under web/") in the tooltip.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { activeFolder } from "./folders";
import {
  AGENT_SKILLS,
  AgentSkill,
  AgentSkillsResult,
  AgentSkillsResults,
  INBOX,
  INBOX_ACCEPT,
  INBOX_REJECT,
  InboxActionResult,
  InboxEntry,
  InboxResult,
  SKILLS,
  SkillItem,
  SkillsResult,
} from "./protocol";

type Node =
  | { kind: "chooseFolder" }
  | { kind: "inbox" }
  | { kind: "gemini"; skills: SkillItem[] }
  | { kind: "skill"; skill: SkillItem }
  | { kind: "pending"; item: InboxEntry }
  | { kind: "agent"; agent: AgentSkillsResult }
  | { kind: "agentSkill"; agent: AgentSkillsResult; skill: AgentSkill };

export class SkillsTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private inbox: InboxEntry[] = [];
  // The workspace folder shown: the active editor's (kept while the editor is in none), or
  // the one the user chose; unset in a multi-root window until one of those says which.
  private folder: vscode.WorkspaceFolder | undefined;
  private view: vscode.TreeView<Node> | undefined;

  constructor(private readonly client: MemlensClient) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** The view, whose description names the folder in a multi-root window. */
  attach(view: vscode.TreeView<Node>): void {
    this.view = view;
  }

  /** Follows the active editor to its folder (nothing changes while it is in none). */
  follow(): void {
    const next = activeFolder();
    if (next && next.uri.toString() !== this.folder?.uri.toString()) {
      this.show(next);
    }
  }

  /** The folders changed: ask again which one to show (the one shown may be gone). */
  forget(): void {
    this.folder = undefined;
    this.refresh();
  }

  show(folder: vscode.WorkspaceFolder): void {
    this.folder = folder;
    this.refresh();
  }

  /** The `uri` the skills requests name: the folder shown. */
  folderUri(): string | undefined {
    return (this.folder ?? activeFolder())?.uri.toString();
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const multiRoot = (vscode.workspace.workspaceFolders ?? []).length > 1;
      this.folder ??= activeFolder();
      if (this.view) {
        this.view.description = multiRoot ? this.folder?.name : undefined;
      }
      if (!this.folder && multiRoot) {
        return [{ kind: "chooseFolder" }];
      }
      const uri = this.folder?.uri.toString();
      const [skills, inbox, others] = await Promise.all([
        this.client.request<SkillsResult>(SKILLS, { uri }),
        this.client.request<InboxResult>(INBOX, { uri }),
        this.client.request<AgentSkillsResults>(AGENT_SKILLS, { uri }),
      ]);
      this.inbox = inbox?.skills ?? [];
      const items: Node[] = [{ kind: "inbox" }];
      // Gemini CLI's group only where the server shows Gemini CLI (in use, or its files here).
      return items
        .concat(skills?.shown === false ? [] : [{ kind: "gemini" as const, skills: skills?.skills ?? [] }])
        .concat((others?.agents ?? []).map((agent) => ({ kind: "agent" as const, agent })));
    }
    if (node.kind === "gemini") {
      return node.skills.map((skill) => ({ kind: "skill" as const, skill }));
    }
    if (node.kind === "inbox") {
      return this.inbox.map((item) => ({ kind: "pending" as const, item }));
    }
    if (node.kind === "agent") {
      return node.agent.skills.map((skill) => ({ kind: "agentSkill" as const, agent: node.agent, skill }));
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "chooseFolder") {
      const item = new vscode.TreeItem("Choose a folder…", vscode.TreeItemCollapsibleState.None);
      item.description = "this window has several: open a file in one, or choose";
      item.iconPath = new vscode.ThemeIcon("root-folder");
      item.command = { title: "Choose a folder", command: "memlens.skills.chooseFolder" };
      return item;
    }
    if (node.kind === "inbox") {
      const count = this.inbox.length;
      const item = new vscode.TreeItem(
        "Inbox",
        count ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
      );
      // VS Code applies a tree item's collapsibleState only the first time it sees the item's
      // id, so an inbox first shown empty (e.g. before the server answered) would stay
      // collapsed once it fills. A different id for the filled inbox makes it open.
      item.id = count ? "memlens.inbox.pending" : "memlens.inbox.empty";
      item.description = count ? `${count} extracted skill${count === 1 ? "" : "s"} to review` : "nothing to review";
      item.iconPath = new vscode.ThemeIcon("inbox");
      item.contextValue = "memlens.inbox";
      return item;
    }
    if (node.kind === "pending") {
      const entry = node.item;
      const item = new vscode.TreeItem(entry.name, vscode.TreeItemCollapsibleState.None);
      const errors = entry.problems.filter((p) => p.severity === "error").length;
      item.description = errors ? `${errors} problem${errors === 1 ? "" : "s"}` : entry.description;
      item.tooltip = [entry.description, ...entry.problems.map((p) => `• ${p.message}`)].join("\n");
      item.iconPath = new vscode.ThemeIcon(errors ? "warning" : "lightbulb");
      item.contextValue = "memlens.inboxSkill";
      item.command = { title: "Open", command: "vscode.open", arguments: [vscode.Uri.file(entry.path)] };
      return item;
    }
    if (node.kind === "gemini") {
      const offered = node.skills.filter((s) => s.offered).length;
      const dropped = node.skills.length - offered;
      const item = new vscode.TreeItem("Gemini CLI", vscode.TreeItemCollapsibleState.Expanded);
      item.id = "memlens.agentSkills.gemini";
      item.description = `${offered} offered${dropped ? ` · ${dropped} not offered` : ""}`;
      item.tooltip = "The skills Gemini CLI offers in <available_skills>, and the ones it does not load or another tier hides.";
      item.iconPath = new vscode.ThemeIcon("hubot");
      item.contextValue = "memlens.agentSkills";
      return item;
    }
    if (node.kind === "agent") {
      const agent = node.agent;
      const offered = agent.skills.filter((s) => s.offered && !s.onRead).length;
      const onRead = agent.skills.filter((s) => s.offered && s.onRead).length;
      const dropped = agent.skills.length - offered - onRead;
      const item = new vscode.TreeItem(agent.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `memlens.agentSkills.${agent.agent}`;
      item.description = `${offered} offered${onRead ? ` · ${onRead} listed on read` : ""}${dropped ? ` · ${dropped} not offered` : ""}`;
      item.tooltip = `The skills ${agent.label} lists working in ${agent.cwd}, as it lists them.`;
      item.iconPath = new vscode.ThemeIcon("hubot");
      item.contextValue = "memlens.agentSkills";
      return item;
    }
    if (node.kind === "agentSkill") {
      const skill = node.skill;
      const item = new vscode.TreeItem(skill.name, vscode.TreeItemCollapsibleState.None);
      item.id = `memlens.agentSkills.${node.agent.agent}.${skill.location}`;
      // The reason's first clause here ("shadowed", "no description"); the tooltip has it all.
      const dropped = `not offered: ${(skill.reason ?? "").split(":")[0]}`;
      if (skill.onRead) {
        // Found on a read: its folder, not a tier, says where it is from.
        const folder = vscode.workspace.asRelativePath(path.dirname(skill.location), false);
        const listed = `◇ listed on read${skill.nameOnly ? ", by name only" : ""}`;
        item.description = `${folder} · ${skill.offered ? listed : dropped}`;
        const budget = skill.nameOnly ? ", by name only: its skills listing is past its budget" : "";
        item.tooltip = skill.offered
          ? `${node.agent.label} · ◇ listed on read ${skill.onRead}${budget}\n${skill.description}\n${skill.location}`
          : `${node.agent.label} · not offered ${skill.onRead}\n${skill.reason ?? ""}\n${skill.location}`;
      } else {
        const state = !skill.offered ? dropped : skill.nameOnly ? "listed by name only" : skill.description;
        item.description = `${skill.tier} · ${state}`;
        item.tooltip = `${node.agent.label} · ${skill.tier}\n${skill.offered ? skill.description : `Not offered: ${skill.reason ?? ""}`}\n${skill.location}`;
      }
      item.iconPath = skill.offered
        ? new vscode.ThemeIcon(skill.nameOnly ? "symbol-key" : "tools")
        : new vscode.ThemeIcon("circle-slash", new vscode.ThemeColor("problemsWarningIcon.foreground"));
      item.command = { title: "Open", command: "vscode.open", arguments: [vscode.Uri.file(skill.location)] };
      return item;
    }
    const skill = node.skill;
    const item = new vscode.TreeItem(skill.name, vscode.TreeItemCollapsibleState.None);
    const problems = skill.errors + skill.warnings;
    item.description = `${skill.tier}${skill.offered ? "" : " · not offered"}${problems ? ` · ${problems} problem${problems === 1 ? "" : "s"}` : ""}`;
    item.tooltip = `${skill.description}\n${skill.location}`;
    item.iconPath = skill.errors
      ? new vscode.ThemeIcon("error", new vscode.ThemeColor("problemsErrorIcon.foreground"))
      : skill.offered
        ? new vscode.ThemeIcon("tools")
        : new vscode.ThemeIcon("circle-slash");
    item.command = { title: "Open", command: "vscode.open", arguments: [vscode.Uri.file(skill.location)] };
    return item;
  }
}

export function registerSkillCommands(context: vscode.ExtensionContext, client: MemlensClient, tree: SkillsTreeProvider): void {
  const nameOf = (arg: unknown): string | undefined =>
    (arg as { item?: InboxEntry } | undefined)?.item?.name;
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(() => tree.follow()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => tree.forget()),
    vscode.commands.registerCommand("memlens.skills.chooseFolder", async () => {
      const folder = await vscode.window.showWorkspaceFolderPick({ placeHolder: "Show the skills of…" });
      if (folder) {
        tree.show(folder);
      }
    }),
    vscode.commands.registerCommand("memlens.acceptSkill", async (arg?: unknown) => {
      const name = nameOf(arg);
      if (!name) {
        return;
      }
      const result = await client.request<InboxActionResult>(INBOX_ACCEPT, { name, uri: tree.folderUri() });
      if (result?.ok) {
        void vscode.window.showInformationMessage(`${result.message}; the agent is offered it from now on.`);
      } else {
        void vscode.window.showErrorMessage(result?.message ?? "The Memory Lens server is not running.");
      }
      tree.refresh();
    }),
    vscode.commands.registerCommand("memlens.rejectSkill", async (arg?: unknown) => {
      const name = nameOf(arg);
      if (!name) {
        return;
      }
      const sure = await vscode.window.showWarningMessage(`Reject and delete the extracted skill "${name}"?`, { modal: true }, "Reject");
      if (sure !== "Reject") {
        return;
      }
      const result = await client.request<InboxActionResult>(INBOX_REJECT, { name, uri: tree.folderUri() });
      if (!result?.ok) {
        void vscode.window.showErrorMessage(result?.message ?? "The Memory Lens server is not running.");
      }
      tree.refresh();
    }),
  );
}
