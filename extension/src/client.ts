// The language client: starts `python -m memlens serve`, forwards settings, restarts on
// relevant setting changes, and shows its state in a language status item.
import * as vscode from "vscode";
import {
  DocumentDiagnosticRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { chooseInterpreter, ensureServerPython } from "./python";

export const RESTART_SETTINGS = ["memlens.python", "memlens.home"];

export function memlensSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("memlens");
  const names = [
    "contextFileNames",
    "jitContext",
    "discoveryMaxDirs",
    "memoryBoundaryMarkers",
    "importFormat",
    "includeDirectories",
    "extensionContextFiles",
    "respectGitIgnore",
    "respectGeminiIgnore",
    "maxContextChars",
    "maxIndexedFolders",
    "allowBroadWorkspace",
    "memoryManager",
  ];
  const settings: Record<string, unknown> = { trusted: vscode.workspace.isTrusted };
  for (const name of names) {
    const inspected = config.inspect(name);
    // Only values the user set: the rest come from Gemini CLI's own settings files.
    const value = inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
    if (value !== undefined) {
      settings[name] = value;
    }
  }
  const chat: Record<string, unknown> = {};
  for (const name of ["model", "baseUrl", "approvalMode", "stallTimeoutMs"]) {
    const inspected = config.inspect(`chat.${name}`);
    const value = inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
    if (value !== undefined && value !== "") {
      chat[name] = value;
    }
  }
  if (Object.keys(chat).length > 0) {
    settings.chat = chat;
  }
  const home = config.get<string>("home", "").trim();
  if (home && vscode.workspace.isTrusted) {
    settings.home = home;
  }
  return settings;
}

export class MemlensClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  private readonly status: vscode.LanguageStatusItem;
  private readonly listeners: Array<(client: LanguageClient) => void> = [];
  private repullTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.OutputChannel,
  ) {
    this.status = vscode.languages.createLanguageStatusItem("memlens.status", { language: "markdown" });
    this.status.name = "Memory Lens";
    this.status.command = { title: "Show Logs", command: "memlens.showLogs" };
    this.setStatus("starting", vscode.LanguageStatusSeverity.Information, true);
  }

  /** Called with every (re)started client, to attach notification handlers. */
  onStarted(listener: (client: LanguageClient) => void): void {
    this.listeners.push(listener);
  }

  private setStatus(text: string, severity: vscode.LanguageStatusSeverity, busy = false): void {
    this.status.text = `Memory Lens: ${text}`;
    this.status.severity = severity;
    this.status.busy = busy;
  }

  async start(): Promise<void> {
    let python: string;
    try {
      const chosen = await chooseInterpreter();
      this.log.appendLine(`Python: ${chosen.command} (${chosen.source})`);
      python = await ensureServerPython(this.context, chosen, this.log);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.appendLine(`Cannot start the server: ${message}`);
      this.setStatus("no Python", vscode.LanguageStatusSeverity.Error);
      const pick = await vscode.window.showErrorMessage(
        `Memory Lens needs Python 3.11+ to run its server: ${message}`,
        "Choose Interpreter",
        "Show Logs",
      );
      if (pick === "Choose Interpreter") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "memlens.python");
      } else if (pick === "Show Logs") {
        this.log.show();
      }
      return;
    }
    const serverOptions: ServerOptions = {
      command: python,
      args: ["-m", "memlens", "serve"],
      options: { env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file: opening any file may load subfolder memory just in time.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // Hovers link to these commands only (the merged context, VS Code's trust editor).
      markdown: { isTrusted: { enabledCommands: ["memlens.showMergedContext", "workbench.trust.manage"] } },
      initializationOptions: { memlens: memlensSettings() },
      middleware: {
        // The server pushes diagnostics for open files and also answers pulls (per document
        // and for the workspace). VS Code keeps pushed and pulled diagnostics in two
        // collections, so every problem of an open file would be shown and counted twice.
        // The pull model wins; a push only says "this file's diagnostics changed": pull again.
        handleDiagnostics: (uri, diagnostics, next) => {
          if (!this.repullDiagnostics()) {
            next(uri, diagnostics);
          }
        },
      },
    };
    const client = new LanguageClient("memlens", "Memory Lens", serverOptions, clientOptions);
    client.onDidChangeState((event) => {
      if (event.newState === State.Running) {
        this.setStatus("ready", vscode.LanguageStatusSeverity.Information);
      } else if (event.newState === State.Stopped) {
        this.setStatus("stopped", vscode.LanguageStatusSeverity.Warning);
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.setStatus("failed", vscode.LanguageStatusSeverity.Error);
      this.log.appendLine(`Server failed to start: ${String(error)}`);
      return;
    }
    for (const listener of this.listeners) {
      listener(client);
    }
  }

  /**
   * Re-pulls the diagnostics of the open documents (what a `workspace/diagnostic/refresh`
   * from the server would do), coalescing a burst of pushes. False when the server does not
   * answer pulls, so pushed diagnostics are the only ones.
   */
  private repullDiagnostics(): boolean {
    const client = this.client;
    const document = vscode.workspace.textDocuments.find((doc) => doc.uri.scheme === "file");
    const provider = document && client?.getFeature(DocumentDiagnosticRequest.method)?.getProvider(document);
    if (!provider) {
      return false;
    }
    if (this.repullTimer) {
      clearTimeout(this.repullTimer);
    }
    this.repullTimer = setTimeout(() => {
      this.repullTimer = undefined;
      if (this.client === client && client?.state === State.Running) {
        provider.onDidChangeDiagnosticsEmitter.fire();
      }
    }, 50);
    return true;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.stop().catch(() => undefined);
    }
  }

  async restart(): Promise<void> {
    this.setStatus("restarting", vscode.LanguageStatusSeverity.Information, true);
    await this.stop();
    await this.start();
  }

  /** Send the settings the user set (not VS Code's defaults, which would hide Gemini CLI's). */
  async sendSettings(): Promise<void> {
    if (this.client && this.client.state === State.Running) {
      await this.client.sendNotification("workspace/didChangeConfiguration", {
        settings: { memlens: memlensSettings() },
      });
    }
  }

  async request<T>(method: string, params: unknown): Promise<T | undefined> {
    if (!this.client || this.client.state !== State.Running) {
      return undefined;
    }
    return this.client.sendRequest<T>(method, params);
  }

  dispose(): void {
    this.status.dispose();
    void this.stop();
  }
}
