// Command palette entries. Every answer comes from the server; nothing here knows memory rules.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { registerAddMemory } from "./addMemory";
import { chooseFolder, requestUri } from "./folders";
import {
  MAX_CONTEXT_COLUMNS, MergedContextProvider, referencesArguments, showContextDocument, showContextDocumentsSideBySide,
} from "./mergedContext";
import {
  AGENTS, AgentChoice, AgentsResponse, Dialect, EXTRACT_SKILLS, ExtractResult, LIST, EditorListResult, AgentListedFile, REFRESH,
} from "./protocol";

export const API_KEY_SECRET = "memlens.geminiApiKey";

/** What a command is about: its argument, else the active file when a workspace folder holds
 * it, else a folder: the window's only one, or in a multi-root window the one the user picks
 * (never the first: the server refuses to guess). */
async function activeOrWorkspaceUri(placeHolder: string, arg?: unknown): Promise<vscode.Uri | undefined> {
  if (typeof arg === "string") {
    return vscode.Uri.parse(arg);
  }
  if (arg instanceof vscode.Uri) {
    return arg;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(editor.document.uri)) {
    return editor.document.uri;
  }
  return (await chooseFolder(placeHolder))?.uri;
}

/** "Open a folder first." where none is open (a dismissed folder pick says nothing). */
function noFolder(): void {
  if (!vscode.workspace.workspaceFolders?.length) {
    void vscode.window.showWarningMessage("Open a folder first.");
  }
}

export function registerCommands(
  context: vscode.ExtensionContext,
  client: MemlensClient,
  merged: MergedContextProvider,
  afterRefresh: () => void,
  onRestart?: () => void,
): void {
  const register = (id: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));

  register("memlens.showMergedContext", async (arg?: unknown) => {
    const source = await activeOrWorkspaceUri("Show the merged context of…", arg);
    if (!source) {
      noFolder();
      return;
    }
    merged.refreshAll();
    await showContextDocument(MergedContextProvider.uriFor(source));
  });

  register("memlens.showAgentContext", async (arg?: unknown) => {
    const source = await activeOrWorkspaceUri("Show what each agent reads in…", arg);
    if (!source) {
      noFolder();
      return;
    }
    // The server says which agents are in use (pinned by memlens.agents, else found on PATH)
    // and which profile serves each; the chosen ones can open side by side.
    const answer = await client.request<AgentsResponse>(AGENTS, { uri: source.toString() }).catch(() => undefined);
    const agents = answer?.agents ?? [];
    const chosen = agents.filter((agent) => agent.chosen);
    type Pick = vscode.QuickPickItem & { dialects?: Dialect[] };
    const describe = (agent: AgentChoice): string =>
      agent.basis === "convention" ? "a convention, not a verified agent"
        : agent.basis === "sources" ? "read from its sources, not verified"
        : `${agent.profile}${agent.verified ? "" : " · unverified"}${agent.chosen ? "" : " · not detected"}${agent.hasFiles ? " · files here" : ""}`;
    // Side by side is always offered: the server says which agents (the chosen ones and
    // every one whose files the folder holds; every agent when that is only one).
    const together = (answer?.sideBySide ?? [])
      .map((id) => agents.find((agent) => agent.agent === id))
      .filter((agent): agent is AgentChoice => agent !== undefined);
    const picks: Pick[] = [];
    if (together.length > 1) {
      picks.push({
        label: "$(split-horizontal) Side by side",
        description: together.slice(0, MAX_CONTEXT_COLUMNS).map((agent) => agent.label).join(" · ")
          + (together.length > MAX_CONTEXT_COLUMNS ? ` (+${together.length - MAX_CONTEXT_COLUMNS} as tabs)` : ""),
        dialects: together.map((agent) => agent.agent),
      });
    }
    for (const [i, agent] of agents.entries()) {
      if (i === chosen.length && chosen.length > 0) {
        picks.push({ label: "Other agents", kind: vscode.QuickPickItemKind.Separator });
      }
      picks.push({ label: agent.label, description: describe(agent), detail: agent.note ?? undefined, dialects: [agent.agent] });
    }
    const pick = await vscode.window.showQuickPick(picks, {
      title: `What each agent reads for ${vscode.workspace.asRelativePath(source)}`,
      placeHolder: "Choose an agent, or all of yours side by side",
    });
    if (!pick?.dialects) {
      return;
    }
    const uris = pick.dialects.map((dialect) => MergedContextProvider.uriFor(source, dialect));
    if (uris.length === 1) {
      await showContextDocument(uris[0]);
    } else {
      await showContextDocumentsSideBySide(uris);
    }
  });

  // The "imported by N" code lens: the server sends JSON (a URI string, a position, LSP
  // locations); VS Code's editor.action.showReferences wants its own types.
  register("memlens.showReferences", async (uri?: unknown, position?: unknown, locations?: unknown) => {
    const args = referencesArguments(uri, position, locations);
    if (!args) {
      client.log.appendLine(`memlens.showReferences: unexpected arguments ${JSON.stringify([uri, position, locations])}`);
      return;
    }
    await vscode.commands.executeCommand("editor.action.showReferences", ...args);
  });

  // "Open both side by side" (an instruction-conflict's code action): the server says which
  // two files and lines; the client only opens them.
  register("memlens.openSideBySide", async (left?: unknown, leftLine?: unknown, right?: unknown, rightLine?: unknown) => {
    if (typeof left !== "string" || typeof right !== "string" || typeof leftLine !== "number" || typeof rightLine !== "number") {
      client.log.appendLine(`memlens.openSideBySide: unexpected arguments ${JSON.stringify([left, leftLine, right, rightLine])}`);
      return;
    }
    const open = async (uri: string, line: number, viewColumn: vscode.ViewColumn) => {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      const at = new vscode.Range(line, 0, line, 0);
      await vscode.window.showTextDocument(document, { viewColumn, selection: at, preview: false });
    };
    await open(left, leftLine, vscode.ViewColumn.One);
    await open(right, rightLine, vscode.ViewColumn.Beside);
  });

  register("memlens.refresh", async () => {
    await vscode.window.withProgress(
      { location: { viewId: "memlens.memory" }, title: "Refreshing memory" },
      async () => {
        await client.request(REFRESH, {});
      },
    );
    merged.refreshAll();
    afterRefresh();
  });

  register("memlens.listMemoryFiles", async () => {
    const source = await activeOrWorkspaceUri("List the memory files of…");
    if (!source) {
      noFolder();
      return;
    }
    const result = await client.request<EditorListResult>(LIST, { uri: source.toString() });
    if (!result) {
      return;
    }
    // Each agent shown for the folder under its own heading, its files in the order it reads
    // them, under its own label for each ("global", "rule (paths: …)", "AGENTS.md").
    const items: Array<vscode.QuickPickItem & { file?: AgentListedFile }> = [];
    for (const agent of result.agents) {
      items.push({ label: agent.label, kind: vscode.QuickPickItemKind.Separator });
      if (agent.files.length === 0) {
        items.push({ label: "$(circle-slash) nothing read here", description: agent.label });
      }
      for (const file of agent.files) {
        items.push({
          label: path.basename(file.path),
          description: `${file.tier}${file.chars === null || file.chars === undefined ? "" : ` · ${file.chars.toLocaleString()} chars`}`,
          detail: file.path,
          file,
        });
      }
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage("No agent in use here reads a memory file in this folder.");
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: "Memory files each agent reads here, in load order",
      matchOnDetail: true,
    });
    if (picked?.file) {
      await vscode.window.showTextDocument(vscode.Uri.file(picked.file.path));
    }
  });

  registerAddMemory(context, client, afterRefresh);

  register("memlens.setApiKey", async () => {
    const key = await vscode.window.showInputBox({
      title: "Gemini API Key",
      prompt: "Stored in VS Code's secret storage, never in settings",
      password: true,
      ignoreFocusOut: true,
    });
    if (key) {
      await context.secrets.store(API_KEY_SECRET, key.trim());
      void vscode.window.showInformationMessage("Gemini API key saved.");
    }
  });

  register("memlens.openSkillsInbox", async () => {
    await vscode.commands.executeCommand("memlens.skills.focus");
  });

  register("memlens.extractSkills", async () => {
    // Skills are extracted from one folder's past chats: the active editor's, or the picked one.
    const uri = await requestUri("Extract skills from the past chats of…");
    if (uri === undefined && (vscode.workspace.workspaceFolders ?? []).length > 1) {
      return;
    }
    let result: ExtractResult | undefined;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Extracting skills from past chats…" },
        () => client.request<ExtractResult>(EXTRACT_SKILLS, { uri }),
      );
    } catch (error) {
      // The request could not be done (an extraction already running, no workspace folder):
      // the server's message says why.
      void vscode.window.showErrorMessage(`Extract Skills: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (!result) {
      void vscode.window.showErrorMessage("The Memory Lens server is not running.", "Show Logs").then((pick) => {
        if (pick) {
          void vscode.commands.executeCommand("memlens.showLogs");
        }
      });
    } else if (result.status === "no-key") {
      // The one fix: offer it where the key is missing.
      const pick = await vscode.window.showWarningMessage(result.message, "Set Gemini API Key");
      if (pick) {
        await vscode.commands.executeCommand("memlens.setApiKey");
      }
    } else if (result.status !== "done") {
      void vscode.window.showErrorMessage(result.message);
    } else {
      const created = result.created.length ? `New in the inbox: ${result.created.join(", ")}.` : "No new skill.";
      void vscode.window.showInformationMessage(`${created} ${result.message}`, "Open Skills Inbox").then((pick) => {
        if (pick) {
          void vscode.commands.executeCommand("memlens.openSkillsInbox");
        }
      });
      afterRefresh();
    }
  });

  register("memlens.restartServer", async () => {
    const restarting = client.restart();
    // The client is stopped synchronously at first: the views say "starting…" meanwhile.
    onRestart?.();
    await restarting;
    afterRefresh();
  });
  register("memlens.showLogs", () => client.log.show());
}
