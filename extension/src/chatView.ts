// The Chat view: a webview (media/chat/chat.js, built from extension/webview/) bridged to the
// chat agent in the language server (docs/chat-protocol.md). The webview only talks to this
// provider; this provider only talks LSP. No chat logic lives here: it forwards, remembers what
// it showed (so a re-created webview can replay it) and asks the user for approvals. The parts:
// chatSession.ts (the shown session, its turns and the replay log), chatApprovals.ts (approvals
// waiting for the user), chatPage.ts (the page and what it may post), chatQuickPicks.ts (the
// title bar's pickers) and chatApiKey.ts (the key, handed to the server unlogged).
import * as vscode from "vscode";
import { LanguageClient, State } from "vscode-languageclient/node";
import {
  CHAT_APPROVE,
  CHAT_EVENT,
  CHAT_STATUS,
  ApprovalRequest,
  ChatEvent,
  ChatStatus,
  ChatViewStatus,
  FromWebview,
  ToWebview,
} from "./chatProtocol";
import { sendApiKey } from "./chatApiKey";
import { ChatApprovals } from "./chatApprovals";
import { chatPageHtml, isFromWebview } from "./chatPage";
import { pickApprovalMode, pickChat } from "./chatQuickPicks";
import { ChatSession, errorText } from "./chatSession";
import { MemlensClient } from "./client";
import { API_KEY_SECRET } from "./commands";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "memlens.chat";

  private view: vscode.WebviewView | undefined;
  private ready = false;
  private status: ChatViewStatus | undefined;
  private readonly session: ChatSession;
  private readonly approvals: ChatApprovals;
  private readonly disposables: vscode.Disposable[] = [];
  private clientDisposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: MemlensClient,
  ) {
    this.session = new ChatSession(
      context,
      client,
      (message) => this.deliver(message),
      (sessionId, reason) => this.approvals.denyWhere((which) => which === sessionId, reason),
    );
    this.approvals = new ChatApprovals(
      (message) => this.post(message),
      () => this.reveal(),
    );
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
    this.approvals.denyWhere(() => true, "the server restarted");
    this.clientDisposables = [
      languageClient.onNotification(CHAT_EVENT, (event: ChatEvent) => this.session.onEvent(event)),
      languageClient.onRequest(CHAT_APPROVE, (params: ApprovalRequest, token: vscode.CancellationToken) =>
        this.approvals.ask(params, token),
      ),
      languageClient.onDidChangeState((event) => {
        if (event.newState !== State.Starting) {
          void this.refreshStatus();
        }
      }),
    ];
    void (async () => {
      await this.sendApiKey();
      await Promise.all([this.refreshStatus(), this.session.refreshSessions()]);
      if (this.session.needsHistory()) {
        await this.session.loadSession(this.session.shown);
      }
    })();
  }

  private sendApiKey(): Promise<void> {
    return sendApiKey(this.client, this.context.secrets);
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

  // ---------------------------------------------------------------- commands (the view's title bar)

  /** Tells the user that a running turn must be stopped first; true when one runs. */
  private busy(what: string): boolean {
    if (!this.session.turnRunning) {
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
    this.session.newChat();
    await this.reveal();
  }

  /** "Chat History…": the workspace's recorded chats in a quick pick; the one picked is shown. */
  async historyCommand(): Promise<void> {
    if (this.busy("switching chats")) {
      return;
    }
    await this.session.refreshSessions();
    const pick = await pickChat(this.session.recorded, this.session.shown, this.session.serverRunning());
    if (!pick) {
      return; // Escape
    }
    if (this.busy("switching chats")) {
      return;
    }
    if (pick.newChat) {
      this.session.newChat();
    } else if (pick.sessionId && pick.sessionId !== this.session.shown) {
      await this.session.loadSession(pick.sessionId);
    }
    await this.reveal();
  }

  /** "Chat Approval Mode…": when the agent's writes wait for the user (`memlens.chat.approvalMode`). */
  async chooseApprovalMode(): Promise<void> {
    const config = vscode.workspace.getConfiguration("memlens");
    const current =
      this.status?.approvalMode ?? config.inspect<string>("chat.approvalMode")?.globalValue ?? "manual";
    const mode = await pickApprovalMode(current);
    if (!mode || mode === current) {
      return;
    }
    // The user's settings only (an application setting: a workspace cannot set it).
    try {
      await config.update("chat.approvalMode", mode, vscode.ConfigurationTarget.Global);
    } catch (error) {
      void vscode.window.showErrorMessage(`Cannot change the chat's approval mode: ${errorText(error)}`);
      return;
    }
    await this.client.sendSettings();
    await this.refreshStatus();
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

  /** Sends a message to the webview; the transcript's messages are kept for replay. */
  private post(message: ToWebview): void {
    this.session.post(message);
  }

  private deliver(message: ToWebview): void {
    if (this.view && this.ready) {
      void this.view.webview.postMessage(message);
    }
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    const root = vscode.Uri.joinPath(this.context.extensionUri, "media", "chat");
    this.view = view;
    this.ready = false;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [root] };
    view.webview.html = chatPageHtml(view.webview, root);
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
        await this.session.send(message.text);
        return;
      case "cancel":
        await this.session.cancel();
        return;
      case "approval":
        this.approvals.resolve(message.requestId, message.outcome);
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
      ...this.session.replayMessages(),
    ];
    for (const message of replay) {
      void view.webview.postMessage(message);
    }
    await this.refreshStatus();
    if (this.session.needsHistory() && this.session.serverRunning()) {
      await this.session.loadSession(this.session.shown);
    }
  }

  private async openFile(file: string): Promise<void> {
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    } catch (error) {
      this.post({ type: "notice", message: `Cannot open ${file}: ${errorText(error)}` });
    }
  }

  dispose(): void {
    this.approvals.denyWhere(() => true, "the extension stopped");
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
