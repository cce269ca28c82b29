// Command palette entries. Every answer comes from the server; nothing here knows memory rules.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { Dialect, MergedContextProvider, referencesArguments, showContextDocument } from "./mergedContext";
import { ADD_MEMORY, AddMemoryResult, LIST, ListResponse, REFRESH } from "./protocol";

export const API_KEY_SECRET = "memlens.geminiApiKey";

function activeOrWorkspaceUri(arg?: unknown): vscode.Uri | undefined {
  if (typeof arg === "string") {
    return vscode.Uri.parse(arg);
  }
  if (arg instanceof vscode.Uri) {
    return arg;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.uri.scheme === "file") {
    return editor.document.uri;
  }
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

export function registerCommands(
  context: vscode.ExtensionContext,
  client: MemlensClient,
  merged: MergedContextProvider,
  afterRefresh: () => void,
): void {
  const register = (id: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));

  register("memlens.showMergedContext", async (arg?: unknown) => {
    const source = activeOrWorkspaceUri(arg);
    if (!source) {
      void vscode.window.showWarningMessage("Memory Lens: open a folder first.");
      return;
    }
    merged.refreshAll();
    await showContextDocument(MergedContextProvider.uriFor(source));
  });

  register("memlens.showAgentContext", async (arg?: unknown) => {
    const source = activeOrWorkspaceUri(arg);
    if (!source) {
      void vscode.window.showWarningMessage("Memory Lens: open a folder first.");
      return;
    }
    const picks: Array<vscode.QuickPickItem & { dialect: Dialect }> = [
      { label: "Gemini CLI", description: "GEMINI.md hierarchy, @imports, JIT", dialect: "gemini" },
      { label: "Claude Code", description: "CLAUDE.md tiers, includes, rules scoped by paths:", dialect: "claude" },
      { label: "AGENTS.md agents", description: "the nearest AGENTS.md", dialect: "agents" },
    ];
    const pick = await vscode.window.showQuickPick(picks, {
      title: `What each agent reads for ${vscode.workspace.asRelativePath(source)}`,
      placeHolder: "Choose an agent",
    });
    if (!pick) {
      return;
    }
    await showContextDocument(MergedContextProvider.uriFor(source, pick.dialect));
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
    const source = activeOrWorkspaceUri();
    if (!source) {
      return;
    }
    const result = await client.request<ListResponse>(LIST, { uri: source.toString() });
    if (!result) {
      return;
    }
    const items = result.files.map((file) => ({
      label: path.basename(file.path),
      description: `${file.tier}${file.chars === null ? " · not readable" : ` · ${file.chars.toLocaleString()} chars`}`,
      detail: file.path,
      file,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: `Memory files in load order (${result.mode} mode)`,
      matchOnDetail: true,
    });
    if (picked) {
      await vscode.window.showTextDocument(vscode.Uri.file(picked.file.path));
    }
  });

  register("memlens.addMemory", async () => {
    const fact = await vscode.window.showInputBox({
      title: "Add Memory",
      prompt: "A fact the agent should remember",
      placeHolder: "e.g. Run the tests with `make test`",
    });
    if (!fact) {
      return;
    }
    const scope = await vscode.window.showQuickPick(
      [
        { label: "Global", description: "~/.gemini/GEMINI.md, loaded in every workspace", value: "global" },
        { label: "Project (private)", description: "your private memory for this project", value: "project" },
      ],
      { title: "Where should it be saved?" },
    );
    if (!scope) {
      return;
    }
    const preview = await client.request<AddMemoryResult>(ADD_MEMORY, { fact, scope: scope.value, preview: true });
    if (!preview) {
      void vscode.window.showErrorMessage("Memory Lens: the server is not running.");
      return;
    }
    if (!preview.success) {
      void vscode.window.showErrorMessage(`Memory Lens: ${preview.message}`);
      return;
    }
    if (preview.managed) {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Memory manager: routing your memory…" },
        () => client.request<AddMemoryResult>(ADD_MEMORY, { fact, scope: scope.value }),
      );
      if (result?.success) {
        void vscode.window.showInformationMessage(`Memory Lens: ${result.message}`);
        afterRefresh();
      } else {
        void vscode.window.showErrorMessage(`Memory Lens: ${result?.message ?? "the server is not running."}`);
      }
      return;
    }
    const choice = await vscode.window.showInformationMessage(
      `Save this memory ${preview.description}?`,
      { modal: true, detail: preview.diff ?? "" },
      "Save",
    );
    if (choice !== "Save") {
      return;
    }
    const saved = await client.request<AddMemoryResult>(ADD_MEMORY, { fact, scope: scope.value });
    if (saved?.success) {
      void vscode.window.showInformationMessage(`Memory Lens: ${saved.message}`, "Open File").then((pick) => {
        if (pick) {
          void vscode.window.showTextDocument(vscode.Uri.file(saved.path));
        }
      });
      afterRefresh();
    } else {
      void vscode.window.showErrorMessage(`Memory Lens: ${saved?.message ?? "the server is not running."}`);
    }
  });

  register("memlens.setApiKey", async () => {
    const key = await vscode.window.showInputBox({
      title: "Gemini API Key",
      prompt: "Stored in VS Code's secret storage, never in settings",
      password: true,
      ignoreFocusOut: true,
    });
    if (key) {
      await context.secrets.store(API_KEY_SECRET, key.trim());
      void vscode.window.showInformationMessage("Memory Lens: Gemini API key saved.");
    }
  });

  register("memlens.openSkillsInbox", async () => {
    await vscode.commands.executeCommand("memlens.skills.focus");
  });

  register("memlens.extractSkills", async () => {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Memory Lens: extracting skills from past chats…" },
      () => client.request<{ status: string; created: string[]; message: string }>("memlens/skills/extract", {}),
    );
    if (!result) {
      void vscode.window.showErrorMessage("Memory Lens: the server is not running.");
    } else if (result.status !== "done") {
      void vscode.window.showErrorMessage(`Memory Lens: ${result.message}`);
    } else {
      const created = result.created.length ? `New in the inbox: ${result.created.join(", ")}.` : "No new skill.";
      void vscode.window.showInformationMessage(`Memory Lens: ${created} ${result.message}`, "Open Skills Inbox").then((pick) => {
        if (pick) {
          void vscode.commands.executeCommand("memlens.openSkillsInbox");
        }
      });
      afterRefresh();
    }
  });

  register("memlens.restartServer", async () => {
    await client.restart();
    afterRefresh();
  });

  register("memlens.showLogs", () => client.log.show());
}
