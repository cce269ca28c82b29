// Memory Lens: a thin shell over the memlens language server.
import * as path from "node:path";
import * as vscode from "vscode";
import { registerChatView } from "./chatView";
import { MemlensClient, RESTART_SETTINGS } from "./client";
import { registerCommands } from "./commands";
import { registerContextDiff } from "./contextDiff";
import { registerCountTokens } from "./countTokens";
import { registerVerify } from "./verify";
import { registerMatrixView } from "./matrixView";
import { registerMcpServer } from "./mcp";
import { registerMemoryManagerHandlers } from "./memoryManager";
import { MemoryTreeProvider } from "./memoryTree";
import { MergedContextProvider, SCHEME } from "./mergedContext";
import { JIT_LOADED, JitLoadedEvent } from "./protocol";
import { registerSkillCommands, SkillsTreeProvider } from "./skillsTree";
import { MemoryStatusBar } from "./statusBar";

let client: MemlensClient | undefined;
/** How long an on-read notice waits for its file's editor tab (a peek never gets one). */
const TAB_GRACE_MS = 3000;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Memory Lens");
  context.subscriptions.push(log);
  client = new MemlensClient(context, log);
  context.subscriptions.push(client);

  const memoryTree = new MemoryTreeProvider(client);
  const skillsTree = new SkillsTreeProvider(client);
  const merged = new MergedContextProvider(client);
  const statusBar = new MemoryStatusBar(client);
  const memoryView = vscode.window.createTreeView("memlens.memory", { treeDataProvider: memoryTree, showCollapseAll: true });
  memoryTree.attach(memoryView);
  const skillsView = vscode.window.createTreeView("memlens.skills", { treeDataProvider: skillsTree });
  skillsTree.attach(skillsView);
  context.subscriptions.push(
    statusBar,
    memoryView,
    skillsView,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, merged),
    vscode.languages.registerDocumentLinkProvider({ scheme: SCHEME }, merged),
  );

  const refreshViews = (): void => {
    memoryTree.refresh();
    skillsTree.refresh();
    merged.refreshAll();
    void statusBar.update();
  };
  registerCommands(context, client, merged, refreshViews, () => {
    memoryTree.starting();
    void statusBar.update();
  });
  registerSkillCommands(context, client, skillsTree);
  registerChatView(context, client);
  registerContextDiff(context, client);
  registerCountTokens(context, client);
  registerVerify(context, client);
  registerMatrixView(context, client, merged);
  registerMcpServer(context, log);

  client.onStarted((languageClient) => {
    registerMemoryManagerHandlers(languageClient);
    languageClient.onNotification(JIT_LOADED, (event: JitLoadedEvent) => {
      statusBar.flash(event);
      memoryTree.refresh();
      if (vscode.workspace.getConfiguration("memlens").get<boolean>("notifyJit", true)) {
        void notifyIfOpenedByUser(event);
      }
    });
    refreshViews();
  });

  /** The on-read notice, only for a file the user has in an editor tab: VS Code opens
   * documents for other reasons too (another extension, a diff, a search), and a toast about
   * a file nobody opened is noise. The tab may appear after the document: watched for a while. */
  /** Whether `inTab` becomes true within `ms`: re-asked on each change of the tabs, since on a
   * busy machine the tab can appear well after the server's notification. */
  function tabAppears(inTab: () => boolean, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (found: boolean): void => {
        clearTimeout(timer);
        watcher.dispose();
        resolve(found);
      };
      const watcher = vscode.window.tabGroups.onDidChangeTabs(() => { if (inTab()) done(true); });
      const timer = setTimeout(() => done(inTab()), ms);
    });
  }

  async function notifyIfOpenedByUser(event: JitLoadedEvent): Promise<void> {
    const inTab = (): boolean => vscode.window.tabGroups.all.some((group) => group.tabs.some((tab) =>
      (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === event.uri)
      || (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === event.uri)));
    if (!inTab() && !(await tabAppears(inTab, TAB_GRACE_MS))) {
      log.appendLine(`on-read notice not shown: ${event.uri} is in no editor tab`);
      return;
    }
    // Every agent shown that loads something on this read, each under its own name, in the
    // server's order: "Gemini CLI loaded services/api/GEMINI.md", "Claude Code loaded
    // api/CLAUDE.md (api/ is read)".
    const said = event.loads.map((load) => `${load.label} loaded ${load.files.map((file) =>
      vscode.workspace.asRelativePath(file.path) + (file.reason ? ` (${file.reason})` : "")).join(", ")}`);
    const opened = path.basename(vscode.Uri.parse(event.uri).fsPath);
    const notice = said.length === 1
      ? `Opening ${opened}, ${said[0]} just in time.`
      : `Opening ${opened}, just in time: ${said.join("; ")}.`;
    void vscode.window
      .showInformationMessage(notice, "Show Merged Context")
      .then((pick) => {
        if (pick) {
          void vscode.commands.executeCommand("memlens.showMergedContext", event.uri);
        }
      });
  }

  let restartTimer: NodeJS.Timeout | undefined;
  context.subscriptions.push(
    vscode.languages.onDidChangeDiagnostics(() => memoryTree.refresh(500)),
    vscode.window.onDidChangeActiveTextEditor(() => void statusBar.update()),
    vscode.workspace.onDidSaveTextDocument(() => {
      merged.refreshAll();
      void statusBar.update();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void client?.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_SETTINGS.some((name) => event.affectsConfiguration(name))) {
        if (restartTimer) {
          clearTimeout(restartTimer);
        }
        restartTimer = setTimeout(() => void client?.restart().then(refreshViews), 750);
      } else if (event.affectsConfiguration("memlens")) {
        void client?.sendSettings().then(() => setTimeout(refreshViews, 300));
      }
    }),
  );

  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
