// The Chat view: a webview (media/chat/chat.js, built from extension/webview/chat.ts) bridged to
// the chat agent in the language server (docs/chat-protocol.md). The webview only talks to this
// provider; this provider only talks LSP. No chat logic lives here: it forwards, remembers what
// it showed (so a re-created webview can replay it) and asks the user for approvals.
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient, State, Trace } from "vscode-languageclient/node";
import {
  APPROVAL_MODES,
  APPROVAL_OUTCOMES,
  ApiKeyResult,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalResponse,
  CHAT_APPROVE,
  CHAT_CANCEL,
  CHAT_EVENT,
  CHAT_HISTORY,
  CHAT_SEND,
  CHAT_SESSIONS,
  CHAT_STATUS,
  CancelResult,
  ChatEvent,
  ChatStatus,
  ChatViewStatus,
  FromWebview,
  HistoryResult,
  SET_API_KEY,
  SendResult,
  SessionSummary,
  SessionsResult,
  ToWebview,
  approvalModeLabel,
} from "./chatProtocol";
import { MemlensClient } from "./client";
import { requestUri } from "./folders";
import { API_KEY_SECRET } from "./commands";

const SESSION_STATE_KEY = "memlens.chat.sessionId";
/** Past this many replayable messages the replay log is dropped and history is reloaded instead. */
const MAX_REPLAY = 20000;

interface PendingApproval {
  sessionId: string;
  resolve: (result: ApprovalResponse) => void;
}

/** "5 minutes ago" for a session's `updated` (ISO 8601, or seconds / milliseconds since the epoch). */
function relativeTime(updated: string | number): string {
  const when = typeof updated === "number" ? (updated < 1e12 ? updated * 1000 : updated) : Date.parse(updated);
  if (Number.isNaN(when)) {
    return String(updated);
  }
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  const steps: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ["second", 60],
    ["minute", 60],
    ["hour", 24],
    ["day", 7],
    ["week", 4.35],
    ["month", 12],
    ["year", Infinity],
  ];
  let value = (when - Date.now()) / 1000;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) {
      return format.format(Math.round(value), unit);
    }
    value /= size;
  }
  return String(updated);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isFromWebview(message: unknown): message is FromWebview {
  if (typeof message !== "object" || message === null) {
    return false;
  }
  const m = message as Record<string, unknown>;
  switch (m.type) {
    case "ready":
    case "cancel":
    case "setApiKey":
    case "chooseModel":
    case "chooseApprovalMode":
      return true;
    case "send":
      return typeof m.text === "string";
    case "openFile":
      return typeof m.path === "string";
    case "approval":
      return typeof m.requestId === "number" && APPROVAL_OUTCOMES.includes(m.outcome as ApprovalOutcome);
    default:
      return false;
  }
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "memlens.chat";

  private view: vscode.WebviewView | undefined;
  private ready = false;
  private sessionId: string;
  /** Whether the replay log holds the current session's history from the server. */
  private historyLoaded = false;
  /** Messages for the current session, replayed to a webview that (re)loads. */
  private replay: ToWebview[] = [];
  private sessions: SessionSummary[] = [];
  private status: ChatViewStatus | undefined;
  /** The session whose turn is running, if any. */
  private running: string | undefined;
  /** Counts turns, so a turn ended by force is not ended again when its request returns. */
  private turn = 0;
  private readonly pending = new Map<number, PendingApproval>();
  // The uri each session was started with: it stays in that folder (lsp/chat.py).
  private readonly sessionUris = new Map<string, string>();
  private nextRequestId = 1;
  private readonly disposables: vscode.Disposable[] = [];
  private clientDisposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: MemlensClient,
  ) {
    this.sessionId = context.workspaceState.get<string>(SESSION_STATE_KEY) ?? crypto.randomUUID();
    this.disposables.push(
      context.secrets.onDidChange((event) => {
        if (event.key === API_KEY_SECRET) {
          void this.sendApiKey().then(() => this.refreshStatus());
        }
      }),
    );
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("memlens.chat")) {
          // extension.ts sends the new settings to the server; ask for its status after that.
          setTimeout(() => void this.refreshStatus(), 400);
        }
      }),
    );
    client.onStarted((languageClient) => this.attach(languageClient));
  }

  // ---------------------------------------------------------------- the language client

  /** Hooks a (re)started client: events, approvals, the API key, then the panel's state. */
  private attach(languageClient: LanguageClient): void {
    for (const disposable of this.clientDisposables) {
      disposable.dispose();
    }
    // Approvals asked by a previous server can no longer be answered.
    this.resolveApprovals(() => true, "the server restarted");
    this.clientDisposables = [
      languageClient.onNotification(CHAT_EVENT, (event: ChatEvent) => this.onEvent(event)),
      languageClient.onRequest(CHAT_APPROVE, (params: ApprovalRequest, token: vscode.CancellationToken) =>
        this.approve(params, token),
      ),
      languageClient.onDidChangeState((event) => {
        if (event.newState !== State.Starting) {
          void this.refreshStatus();
        }
      }),
    ];
    void (async () => {
      await this.sendApiKey();
      await Promise.all([this.refreshStatus(), this.refreshSessions()]);
      if (!this.historyLoaded && !this.running) {
        await this.loadSession(this.sessionId);
      }
    })();
  }

  /**
   * Sends the key from SecretStorage (if any) to the server. The key is never logged: the
   * request is sent with the client's message trace off, whatever `memlens.trace.server` says.
   */
  private async sendApiKey(): Promise<void> {
    const languageClient = this.client.client;
    if (!languageClient || languageClient.state !== State.Running) {
      return;
    }
    const key = await this.context.secrets.get(API_KEY_SECRET);
    if (!key) {
      return;
    }
    const traceSetting = vscode.workspace.getConfiguration("memlens").get<unknown>("trace.server", "off");
    const traced =
      (typeof traceSetting === "string" && traceSetting !== "off") ||
      (typeof traceSetting === "object" && traceSetting !== null);
    try {
      if (traced) {
        await languageClient.setTrace(Trace.Off);
      }
      await languageClient.sendRequest<ApiKeyResult>(SET_API_KEY, { key });
    } catch (error) {
      // The error comes from the server and never carries the request's parameters.
      this.client.log.appendLine(`Chat: the server did not take the API key (${errorText(error)}).`);
    } finally {
      if (traced) {
        const verbosity =
          typeof traceSetting === "string"
            ? traceSetting
            : vscode.workspace.getConfiguration("memlens").get<string>("trace.server.verbosity", "off");
        await languageClient.setTrace(Trace.fromString(verbosity)).catch(() => undefined);
      }
    }
  }

  private serverRunning(): boolean {
    return this.client.client?.state === State.Running;
  }

  private serverState(): ChatViewStatus["server"] {
    const state = this.client.client?.state;
    return state === State.Running ? "running" : state === State.Starting ? "starting" : "stopped";
  }

  private async refreshStatus(): Promise<void> {
    const fromEnvironment = Boolean(process.env.GEMINI_API_KEY);
    let server: ChatStatus | undefined;
    try {
      server = await this.client.request<ChatStatus>(CHAT_STATUS, {});
    } catch {
      server = undefined;
    }
    let hasApiKey: boolean;
    if (server) {
      hasApiKey = server.hasApiKey || fromEnvironment;
    } else {
      // No answer (server starting or stopped): the key it will get.
      hasApiKey = fromEnvironment || Boolean(await this.context.secrets.get(API_KEY_SECRET));
    }
    this.status = {
      server: this.serverState(),
      hasApiKey,
      model: server?.model,
      approvalMode: server?.approvalMode,
    };
    this.post({ type: "status", status: this.status });
  }

  private async refreshSessions(): Promise<void> {
    try {
      const result = await this.client.request<SessionsResult>(CHAT_SESSIONS, {});
      if (result) {
        this.sessions = result.sessions;
      }
    } catch (error) {
      this.client.log.appendLine(`Chat: cannot list sessions (${errorText(error)}).`);
    }
  }

  // ---------------------------------------------------------------- sessions and turns

  private setRunning(sessionId: string | undefined): void {
    this.running = sessionId;
  }

  private setSession(sessionId: string): void {
    this.sessionId = sessionId;
    void this.context.workspaceState.update(SESSION_STATE_KEY, sessionId);
  }

  /** Shows a session: its history from the server, then what happens in it. */
  private async loadSession(sessionId: string): Promise<void> {
    this.setSession(sessionId);
    let messages: HistoryResult["messages"] = [];
    let loaded = false;
    try {
      const result = await this.client.request<HistoryResult>(CHAT_HISTORY, { sessionId });
      if (result) {
        messages = result.messages;
        loaded = true;
      }
    } catch (error) {
      this.client.log.appendLine(`Chat: cannot read the history of ${sessionId} (${errorText(error)}).`);
      loaded = true; // an unknown (new) session: nothing to show
    }
    if (this.sessionId !== sessionId) {
      return; // another session was picked meanwhile
    }
    this.historyLoaded = loaded;
    this.replay = [];
    this.post({ type: "reset", sessionId, messages });
  }

  private newChat(): void {
    this.setSession(crypto.randomUUID());
    this.historyLoaded = true;
    this.replay = [];
    this.post({ type: "reset", sessionId: this.sessionId, messages: [] });
  }

  private async send(text: string): Promise<void> {
    const trimmed = text.trim();
    if (!trimmed || this.running) {
      return;
    }
    const sessionId = this.sessionId;
    const turn = ++this.turn;
    this.setRunning(sessionId);
    this.post({ type: "userMessage", sessionId, text: trimmed });
    let ended: ToWebview & { type: "turnEnded" };
    try {
      // A session stays in the folder it started in; a new one works in the active editor's
      // folder, or the one the user picks in a multi-root window (the server refuses to guess).
      const uri = this.sessionUris.get(sessionId) ?? (await requestUri("Chat about the memory of…"));
      if (uri === undefined && (vscode.workspace.workspaceFolders ?? []).length > 1) {
        throw new Error("No folder chosen: a chat works in one workspace folder. Open a file there, or choose one.");
      }
      if (uri !== undefined) {
        this.sessionUris.set(sessionId, uri);
      }
      const result = await this.client.request<SendResult>(CHAT_SEND, { sessionId, text: trimmed, uri });
      ended = result
        ? { type: "turnEnded", sessionId, status: result.status, message: result.message ?? undefined }
        : {
            type: "turnEnded",
            sessionId,
            status: "error",
            message: this.serverRunning()
              ? "The Memory Lens server stopped during this turn."
              : "The Memory Lens server is not running. Run “Memory Lens: Restart Server”.",
          };
    } catch (error) {
      ended = { type: "turnEnded", sessionId, status: "error", message: errorText(error) };
    }
    if (this.turn === turn && this.running) {
      this.endTurn(ended);
    }
    await this.refreshSessions();
  }

  private endTurn(ended: ToWebview & { type: "turnEnded" }): void {
    this.setRunning(undefined);
    this.resolveApprovals((approval) => approval.sessionId === ended.sessionId, "the turn ended");
    this.post(ended);
  }

  private async cancel(): Promise<void> {
    const sessionId = this.running;
    if (!sessionId) {
      return;
    }
    const turn = this.turn;
    this.resolveApprovals((approval) => approval.sessionId === sessionId, "stopped");
    let stopped = false;
    try {
      stopped = (await this.client.request<CancelResult>(CHAT_CANCEL, { sessionId }))?.cancelled ?? false;
    } catch (error) {
      this.client.log.appendLine(`Chat: cancel failed (${errorText(error)}).`);
    }
    // The server answers `send` when the turn stops. If it has no turn to stop, or does not
    // answer soon, the panel is not left waiting: the turn ends here.
    setTimeout(
      () => {
        if (this.turn === turn && this.running === sessionId) {
          this.endTurn({ type: "turnEnded", sessionId, status: "cancelled" });
        }
      },
      stopped ? 10000 : 1500,
    );
  }

  private onEvent(event: ChatEvent): void {
    if (typeof event !== "object" || event === null || typeof event.kind !== "string") {
      return;
    }
    if (event.sessionId !== this.sessionId) {
      return; // a session that is not shown (its history is read when it is picked)
    }
    this.post({ type: "event", event });
  }

  // ---------------------------------------------------------------- commands (the view's title bar)

  /** Tells the user that a running turn must be stopped first; true when one runs. */
  private busy(what: string): boolean {
    if (!this.running) {
      return false;
    }
    void vscode.window.showInformationMessage(`A chat turn is running: stop it before ${what}.`);
    return true;
  }

  /** "New Chat": an empty transcript with a new session id (the old one stays in the history). */
  async newChatCommand(): Promise<void> {
    if (this.busy("starting a new chat")) {
      return;
    }
    this.newChat();
    await this.reveal();
  }

  /** "Chat History…": the workspace's recorded chats in a quick pick; the one picked is shown. */
  async historyCommand(): Promise<void> {
    if (this.busy("switching chats")) {
      return;
    }
    await this.refreshSessions();
    type Item = vscode.QuickPickItem & { sessionId?: string; newChat?: boolean };
    const items: Item[] = [
      { label: "$(add) New Chat", description: "start an empty chat", newChat: true, alwaysShow: true },
    ];
    if (this.sessions.length > 0) {
      items.push({ label: "Recent chats", kind: vscode.QuickPickItemKind.Separator });
    }
    for (const session of this.sessions) {
      const current = session.sessionId === this.sessionId;
      items.push({
        label: `${current ? "$(comment-discussion) " : ""}${session.title || "Untitled chat"}`,
        description: `${relativeTime(session.updated)}${current ? " · shown" : ""}`,
        detail: `${session.messageCount} message${session.messageCount === 1 ? "" : "s"}`,
        sessionId: session.sessionId,
      });
    }
    const pick = await vscode.window.showQuickPick(items, {
      title: "Chat History",
      placeHolder: this.sessions.length
        ? "Pick a chat to continue it, or start a new one"
        : this.serverRunning()
          ? "No recorded chats in this workspace yet"
          : "The Memory Lens server is not running: no history to show",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) {
      return; // Escape
    }
    if (this.busy("switching chats")) {
      return;
    }
    if (pick.newChat) {
      this.newChat();
    } else if (pick.sessionId && pick.sessionId !== this.sessionId) {
      await this.loadSession(pick.sessionId);
    }
    await this.reveal();
  }

  /** "Chat Approval Mode…": when the agent's writes wait for the user (`memlens.chat.approvalMode`). */
  async chooseApprovalMode(): Promise<void> {
    const config = vscode.workspace.getConfiguration("memlens");
    const current =
      this.status?.approvalMode ?? config.inspect<string>("chat.approvalMode")?.globalValue ?? "manual";
    type Item = vscode.QuickPickItem & { mode: string };
    const items: Item[] = APPROVAL_MODES.map((item) => ({
      label: `${item.mode === current ? "$(check) " : "$(blank) "}${item.label}`,
      description: item.mode,
      detail: item.detail,
      mode: item.mode,
    }));
    const pick = await vscode.window.showQuickPick(items, {
      title: "Chat Approval Mode",
      placeHolder: `When the agent's writes wait for you (now: ${approvalModeLabel(current)})`,
    });
    if (!pick || pick.mode === current) {
      return;
    }
    // The user's settings only (an application setting: a workspace cannot set it).
    try {
      await config.update("chat.approvalMode", pick.mode, vscode.ConfigurationTarget.Global);
    } catch (error) {
      void vscode.window.showErrorMessage(`Cannot change the chat's approval mode: ${errorText(error)}`);
      return;
    }
    await this.client.sendSettings();
    await this.refreshStatus();
  }

  // ---------------------------------------------------------------- approvals

  /** Answers `memlens/chat/approve`: the user decides in the panel (revealed if hidden). */
  private async approve(params: ApprovalRequest, token: vscode.CancellationToken): Promise<ApprovalResponse> {
    if (token.isCancellationRequested) {
      return { outcome: "deny" };
    }
    const requestId = this.nextRequestId++;
    const answer = new Promise<ApprovalResponse>((resolve) => {
      this.pending.set(requestId, { sessionId: params.sessionId, resolve });
    });
    const cancelled = token.onCancellationRequested(() => this.resolveApproval(requestId, "deny", "cancelled"));
    this.post({ type: "approve", requestId, request: params });
    await this.reveal();
    try {
      return await answer;
    } finally {
      cancelled.dispose();
    }
  }

  private resolveApproval(requestId: number, outcome: ApprovalOutcome, reason?: string): void {
    const approval = this.pending.get(requestId);
    if (!approval) {
      return;
    }
    this.pending.delete(requestId);
    approval.resolve({ outcome });
    this.post({ type: "approvalResolved", requestId, outcome, reason });
  }

  private resolveApprovals(which: (approval: PendingApproval) => boolean, reason: string): void {
    for (const [requestId, approval] of [...this.pending]) {
      if (which(approval)) {
        this.resolveApproval(requestId, "deny", reason);
      }
    }
  }

  private async reveal(): Promise<void> {
    if (this.view?.visible) {
      return;
    }
    if (this.view) {
      this.view.show(true);
    } else {
      await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    }
  }

  // ---------------------------------------------------------------- the webview

  /** Sends a message to the webview and, if it belongs to the transcript, keeps it for replay. */
  private post(message: ToWebview): void {
    if (message.type !== "status" && message.type !== "notice") {
      if (message.type === "reset") {
        this.replay = [];
      }
      this.replay.push(message);
      if (this.replay.length > MAX_REPLAY && !this.running) {
        // Too long to replay: the server's history says the same more briefly.
        this.replay = [];
        this.historyLoaded = false;
      }
    }
    if (this.view && this.ready) {
      void this.view.webview.postMessage(message);
    }
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    const root = vscode.Uri.joinPath(this.context.extensionUri, "media", "chat");
    this.view = view;
    this.ready = false;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [root] };
    view.webview.html = this.html(view.webview, root);
    const subscriptions = [
      view.webview.onDidReceiveMessage((message: unknown) => {
        if (isFromWebview(message)) {
          void this.onMessage(message);
        }
      }),
      view.onDidChangeVisibility(() => {
        if (view.visible) {
          void this.refreshStatus();
        }
      }),
    ];
    view.onDidDispose(() => {
      for (const subscription of subscriptions) {
        subscription.dispose();
      }
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
      }
    });
  }

  private async onMessage(message: FromWebview): Promise<void> {
    switch (message.type) {
      case "ready":
        await this.onReady();
        return;
      case "send":
        await this.send(message.text);
        return;
      case "cancel":
        await this.cancel();
        return;
      case "approval":
        this.resolveApproval(message.requestId, message.outcome);
        return;
      case "openFile":
        await this.openFile(message.path);
        return;
      case "setApiKey":
        await vscode.commands.executeCommand("memlens.setApiKey");
        return;
      case "chooseModel":
        await vscode.commands.executeCommand("workbench.action.openSettings", "memlens.chat.model");
        return;
      case "chooseApprovalMode":
        await this.chooseApprovalMode();
        return;
    }
  }

  /** A (re)loaded webview: its state, then the transcript so far. */
  private async onReady(): Promise<void> {
    const view = this.view;
    if (!view) {
      return;
    }
    this.ready = true;
    const replay: ToWebview[] = [
      ...(this.status ? [{ type: "status", status: this.status } as ToWebview] : []),
      ...(this.replay.length > 0 ? this.replay : [{ type: "reset", sessionId: this.sessionId, messages: [] } as ToWebview]),
    ];
    for (const message of replay) {
      void view.webview.postMessage(message);
    }
    await this.refreshStatus();
    if (!this.historyLoaded && !this.running && this.serverRunning()) {
      await this.loadSession(this.sessionId);
    }
  }

  private async openFile(file: string): Promise<void> {
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    } catch (error) {
      this.post({ type: "notice", message: `Cannot open ${file}: ${errorText(error)}` });
    }
  }

  private html(webview: vscode.Webview, root: vscode.Uri): string {
    const nonce = crypto.randomBytes(18).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(root, "chat.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(root, "chat.css"));
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src ${webview.cspSource} 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" nonce="${nonce}" href="${style.toString()}">
<title>Memory Lens Chat</title>
</head>
<body>
<div id="app" aria-label="Memory Lens Chat"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.resolveApprovals(() => true, "the extension stopped");
    for (const disposable of [...this.disposables, ...this.clientDisposables]) {
      disposable.dispose();
    }
  }
}

/** Registers the Chat view and its bridge to the language server. */
export function registerChatView(context: vscode.ExtensionContext, client: MemlensClient): ChatViewProvider {
  const provider = new ChatViewProvider(context, client);
  context.subscriptions.push(
    provider,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, provider, {
      // The transcript streams while the view is hidden; keep the webview rather than rebuild it.
      webviewOptions: { retainContextWhenHidden: true },
    }),
  );
  const register = (id: string, handler: () => Promise<void>) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  register("memlens.newChat", () => provider.newChatCommand());
  register("memlens.chatHistory", () => provider.historyCommand());
  register("memlens.chatApprovalMode", () => provider.chooseApprovalMode());
  return provider;
}
