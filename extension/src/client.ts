// The language client: starts `python -m memlens serve`, forwards settings, restarts on
// relevant setting changes, and shows its state in a language status item.
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  DocumentDiagnosticRequest,
  ErrorAction,
  ErrorHandler,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import type { ReadyEvent } from "./protocol";
import { chooseInterpreter, Interpreter, removeOldEnvironments, serverCommand } from "./python";

/** Sent by the server once its first index is built (lsp/lifecycle.py). */
export const READY = "memlens/ready";

/**
 * Start-up milestones (docs/reference.md "Benchmarks", the editor rows): logged, and appended as
 * JSON lines to $MEMLENS_TIMINGS_FILE when it is set (the end-to-end suite sets it and reports
 * them).
 */
const activatedAt = Date.now();
const timingsFile = process.env.MEMLENS_TIMINGS_FILE;
function mark(log: vscode.OutputChannel, event: string, detail: Record<string, unknown> = {}): void {
  const t = Date.now();
  log.appendLine(`[start-up] ${event} at +${t - activatedAt} ms after activation`);
  if (timingsFile) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const line = JSON.stringify({ event, t, sinceActivation: t - activatedAt, folder, pid: process.pid, ...detail });
    fs.appendFile(timingsFile, `${line}\n`, () => undefined);
  }
}

function spawnFailure(python: Interpreter, error: NodeJS.ErrnoException): string {
  if (error.code === "ENOENT") {
    return `Memory Lens could not find the Python interpreter "${python.command}" (${python.source}). Install CPython 3.11–3.14 or set the setting memlens.python to the path of one.`;
  }
  return `Memory Lens could not run "${python.command}" (${python.source}): ${error.message}. Set the setting memlens.python to the path of a CPython 3.11–3.14 interpreter.`;
}

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
    "agents",
    "budget",
  ];
  // VS Code's trust is the window's, one answer for every folder: the server's per-folder
  // `folderTrust` option has nothing to carry here.
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
  // Where the key goes (baseUrl) and whether writes wait for the user (approvalMode) are the
  // user's alone: a repository's .vscode/settings.json may set them (even in a trusted window),
  // so only the user settings' value is read (issue 23; the settings are application-scoped).
  const userOnly = new Set(["baseUrl", "approvalMode"]);
  for (const name of ["model", "baseUrl", "approvalMode", "stallTimeoutMs"]) {
    const inspected = config.inspect(`chat.${name}`);
    const value = userOnly.has(name)
      ? inspected?.globalValue
      : (inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue);
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

/** Opens the memlens.python setting where it can be set (machine-scoped: in a remote window,
 * such as code-server, only the Remote tab shows it). */
export async function openPythonSetting(): Promise<void> {
  const command = vscode.env.remoteName ? "workbench.action.openRemoteSettings" : "workbench.action.openSettings";
  await vscode.commands.executeCommand(command, { query: "memlens.python" });
}

/** The language client, minus its own "couldn't create connection to server" notification:
 * MemlensClient.start() says what went wrong and what to do instead. */
class QuietStartClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
    super.error(message, data, message.endsWith("couldn't create connection to server.") ? false : showNotification);
  }
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
    mark(log, "activate");
    const firstDiagnostic = vscode.languages.onDidChangeDiagnostics((event) => {
      for (const uri of event.uris) {
        if (vscode.languages.getDiagnostics(uri).some((d) => d.source === "memlens")) {
          mark(log, "firstDiagnostic", { file: path.basename(uri.fsPath) });
          firstDiagnostic.dispose();
          return;
        }
      }
    });
    context.subscriptions.push(firstDiagnostic);
    if (timingsFile) {
      // When the first memory file was open, to tell the server's time from the user's.
      const isMemory = (doc: vscode.TextDocument): boolean =>
        doc.uri.scheme === "file" && /^(GEMINI|AGENTS|CLAUDE)\.md$/.test(path.basename(doc.uri.fsPath));
      const open = vscode.workspace.textDocuments.find(isMemory);
      if (open) {
        mark(log, "opened", { file: path.basename(open.uri.fsPath) });
      } else {
        const opened = vscode.workspace.onDidOpenTextDocument((doc) => {
          if (isMemory(doc)) {
            mark(log, "opened", { file: path.basename(doc.uri.fsPath) });
            opened.dispose();
          }
        });
        context.subscriptions.push(opened);
      }
    }
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
    removeOldEnvironments(this.context);
    const chosen = await chooseInterpreter();
    const server = serverCommand(this.context, chosen);
    this.log.appendLine(`Python: ${chosen.command} (${chosen.source})`);
    // One process: the server itself, started through the bundled launcher. It reports what
    // is wrong (a "memlens-cannot-start:" line) when the interpreter cannot run it.
    let cannotStart: string | undefined;
    let exited = false;
    let closed: Promise<void> = Promise.resolve();
    const serverOptions: ServerOptions = () =>
      new Promise<ChildProcess>((resolve, reject) => {
        mark(this.log, "spawn");
        exited = false;
        const child = spawn(server.command, server.args, { env: server.env, stdio: "pipe" });
        child.once("exit", () => {
          exited = true;
        });
        // "close": the process ended and its stderr has been read to the end.
        closed = new Promise((done) => child.once("close", () => done()));
        let stderr = "";
        child.stderr.on("data", (data: Buffer) => {
          stderr = (stderr + data.toString()).slice(-8000);
          const found = /^memlens-cannot-start: (.*)$/m.exec(stderr);
          if (found) {
            cannotStart = found[1];
          }
        });
        child.once("spawn", () => resolve(child));
        child.once("error", (error) => reject(new Error(spawnFailure(chosen, error))));
      });
    let fallback: ErrorHandler | undefined;
    // A server that fails while starting (the launcher's "cannot start", a crash on import: the
    // first sign is often EPIPE on writing `initialize`, before its stderr is read): no
    // restarts and none of the client's own notifications; start() below says what to do.
    const errorHandler: ErrorHandler = {
      error: (error, message, count) =>
        cannotStart || !started
          ? { action: ErrorAction.Shutdown, handled: true }
          : fallback!.error(error, message, count),
      closed: () =>
        cannotStart || !started ? { action: CloseAction.DoNotRestart, handled: true } : fallback!.closed(),
    };
    let started = false;
    const clientOptions: LanguageClientOptions = {
      // Every file: opening any file may load subfolder memory just in time.
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // Hovers link to these commands only (the merged context, VS Code's trust editor).
      markdown: { isTrusted: { enabledCommands: ["memlens.showMergedContext", "workbench.trust.manage"] } },
      errorHandler,
      // Initialisation failed: stop, without the client's bare error text; start() reports.
      initializationFailedHandler: () => false,
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
    const client = new QuietStartClient("memlens", "Memory Lens", serverOptions, clientOptions);
    fallback = client.createDefaultErrorHandler();
    client.onDidChangeState((event) => {
      if (event.newState === State.Running) {
        this.setStatus("indexing…", vscode.LanguageStatusSeverity.Information, true);
      } else if (event.newState === State.Stopped) {
        this.setStatus(cannotStart ? "cannot start" : "stopped", vscode.LanguageStatusSeverity.Warning);
      }
    });
    client.onNotification(READY, (info: ReadyEvent) => {
      mark(this.log, "ready", { ...info });
      if (this.client === client) {
        this.setStatus("ready", vscode.LanguageStatusSeverity.Information);
      }
    });
    this.client = client;
    try {
      await client.start();
      started = true;
      mark(this.log, "initialized");
    } catch (error) {
      // Wait for the process's last words: the launcher's line comes on stderr, read to the
      // end at "close". A process that exited closes at once; one still running gets 3 s, and a
      // busy machine 10 s at most (a child holding stderr open must not hang the report).
      await Promise.race([closed, new Promise((done) => setTimeout(done, exited ? 10_000 : 3000))]);
      const message =
        cannotStart ??
        (exited
          ? `The Memory Lens server (${chosen.command}) exited while starting: ${error instanceof Error ? error.message : String(error)}. See the logs; setting memlens.python to a CPython 3.11–3.14 may help.`
          : error instanceof Error
            ? error.message
            : String(error));
      this.setStatus("cannot start", vscode.LanguageStatusSeverity.Error);
      this.log.appendLine(`Server failed to start: ${message}`);
      void vscode.window.showErrorMessage(message, "Choose Interpreter", "Show Logs").then(async (pick) => {
        if (pick === "Choose Interpreter") {
          await openPythonSetting();
        } else if (pick === "Show Logs") {
          this.log.show();
        }
      });
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
