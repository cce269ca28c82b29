// Status bar: memory files and characters loaded for the active editor's folder, and a short
// flash when opening a file loads memory just in time.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { JitLoadedEvent, SHOW, ShowResponse } from "./protocol";

export class MemoryStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("memlens.memory", vscode.StatusBarAlignment.Right, 100);
  private flashUntil = 0;

  constructor(private readonly client: MemlensClient) {
    this.item.name = "Memory Lens";
    this.item.command = "memlens.showMergedContext";
  }

  async update(): Promise<void> {
    if (Date.now() < this.flashUntil) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      this.item.hide();
      return;
    }
    const result = await this.client
      .request<ShowResponse>(SHOW, { uri: editor.document.uri.toString() })
      .catch(() => undefined);
    if (Date.now() < this.flashUntil) {
      // A JIT flash arrived while the server answered (opening a file sends didOpen, which
      // loads the memory, before this request): keep the flash; its end calls update() again.
      return;
    }
    if (!result) {
      // The server is (re)starting or still reading the workspace.
      this.item.text = "$(loading~spin) Memory Lens: starting…";
      this.item.tooltip = "Waiting for the Memory Lens server. If this stays, Show Logs says why.";
      this.item.command = "memlens.showLogs";
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    const summary = result.summary
      || `${result.fileCount} memory file${result.fileCount === 1 ? "" : "s"} · ${(result.chars ?? result.content.length).toLocaleString("en-US")} chars`;
    if (!result.trusted) {
      // VS Code's Restricted Mode, or (trustRules) a DO_NOT_TRUST rule of Gemini CLI's.
      const action = trustAction(result.trustRules);
      this.item.text = `$(workspace-untrusted) ${result.trustRules ? "Untrusted" : "Restricted Mode"} · ${summary}`;
      const tooltip = new vscode.MarkdownString(
        `${result.notice ?? "This folder is not trusted: its project memory is not read."}\n\n` +
          `[${action.title}](command:${action.command}?${encodeURIComponent(JSON.stringify(action.arguments ?? []))})`,
      );
      tooltip.isTrusted = { enabledCommands: [action.command] };
      this.item.tooltip = tooltip;
      this.item.command = action;
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
    } else {
      // Whose view (docs/reference.md "Which agent, which version"): the agent and version shown,
      // and why it is not verified.
      const agent = result.agentLabel ? ` · ${result.agentLabel}${result.agentNote ? " (unverified)" : ""}` : "";
      this.item.text = `${result.agentNote ? "$(warning)" : "$(book)"} ${summary}${agent}`;
      const text =
        `${summary}: what ${result.agentLabel || "the agent"} reads at start-up here` +
        `${result.agentProfile ? ` (profile ${result.agentProfile}, ${result.mode} mode)` : ` (${result.mode} mode)`}, ` +
        `each file with its imports, as the Memory view counts them. The merged context adds ` +
        `source markers (${result.content.length.toLocaleString("en-US")} chars in all); files ` +
        "loaded later, on read, are not counted here." +
        (result.tokens ? `\n\nThe same text: ${(result.bytes ?? 0).toLocaleString("en-US")} bytes (UTF-8), ~${result.tokens.toLocaleString("en-US")} tokens (Gemini CLI's estimate; Count Tokens Exactly asks the model).` : "") +
        (result.agentNote ? `\n\n${result.agentNote}. Pin a version with the memlens.agents setting.` : "") +
        "\nClick to show the merged context.";
      // Plain text (escaped) with the Agent Matrix one click away.
      const tooltip = new vscode.MarkdownString();
      tooltip.appendText(text);
      tooltip.appendMarkdown("\n\n[$(table) Which agent reads which file: Show Agent Matrix](command:memlens.showAgentMatrix)");
      tooltip.supportThemeIcons = true;
      tooltip.isTrusted = { enabledCommands: ["memlens.showAgentMatrix"] };
      this.item.tooltip = tooltip;
      this.item.command = "memlens.showMergedContext";
      this.item.backgroundColor = undefined;
    }
    this.item.show();
  }

  flash(event: JitLoadedEvent): void {
    const short = (file: { path: string }) => path.basename(path.dirname(file.path)) + "/" + path.basename(file.path);
    // A file two agents load (an AGENTS.md) counts once.
    const names = [...new Set(event.loads.flatMap((load) => load.files.map(short)))];
    this.item.text = `$(sparkle) +${names.length} memory loaded: ${names.join(", ")} (${whoLoaded(event)})`;
    this.item.show();
    this.flashUntil = Date.now() + 4000;
    setTimeout(() => {
      this.flashUntil = 0;
      void this.update();
    }, 4000);
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** Who loads the files of a jitLoaded event: "Gemini CLI", "Gemini CLI and Claude Code",
 * past two "3 agents" (the status bar is short). */
function whoLoaded(event: JitLoadedEvent): string {
  const labels = event.loads.map((load) => load.label);
  return labels.length <= 2 ? labels.join(" and ") : `${labels.length} agents`;
}

/** What changes a folder's trust: VS Code's trust editor, or the trusted folders file. */
export function trustAction(rules: string | null | undefined): vscode.Command {
  return rules
    ? { title: `Open ${path.basename(rules)}`, command: "vscode.open", arguments: [vscode.Uri.file(rules)] }
    : { title: "Manage Workspace Trust", command: "workbench.trust.manage" };
}
