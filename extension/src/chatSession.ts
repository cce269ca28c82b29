// The chat session the Chat view shows, as the extension sees it: which session it is, its
// turn (send, stop, end), the server's events for it, and the replay log that lets a re-created
// webview show the transcript again. It only forwards: the chat runs in the language server.
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { State } from "vscode-languageclient/node";
import {
  CHAT_CANCEL,
  CHAT_HISTORY,
  CHAT_SEND,
  CHAT_SESSIONS,
  CancelResult,
  ChatEvent,
  HistoryResult,
  SendResult,
  SessionSummary,
  SessionsResult,
  ToWebview,
} from "./chatProtocol";
import { MemlensClient } from "./client";
import { requestUri } from "./folders";

const SESSION_STATE_KEY = "memlens.chat.sessionId";
/** Past this many replayable messages the replay log is dropped and history is reloaded instead. */
const MAX_REPLAY = 20000;

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ChatSession {
  private sessionId: string;
  /** Whether the replay log holds the current session's history from the server. */
  private historyLoaded = false;
  /** Messages for the current session, replayed to a webview that (re)loads. */
  private replay: ToWebview[] = [];
  private sessions: SessionSummary[] = [];
  /** The session whose turn is running, if any. */
  private running: string | undefined;
  /** Counts turns, so a turn ended by force is not ended again when its request returns. */
  private turn = 0;
  // The uri each session was started with: it stays in that folder (lsp/chat.py).
  private readonly sessionUris = new Map<string, string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: MemlensClient,
    /** Sends a message to the webview, if one is ready. */
    private readonly deliver: (message: ToWebview) => void,
    /** Denies the approvals still waiting in a session whose turn ends. */
    private readonly denyApprovals: (sessionId: string, reason: string) => void,
  ) {
    this.sessionId = context.workspaceState.get<string>(SESSION_STATE_KEY) ?? crypto.randomUUID();
  }

  /** The session shown. */
  get shown(): string {
    return this.sessionId;
  }

  /** Whether a turn runs. */
  get turnRunning(): boolean {
    return Boolean(this.running);
  }

  /** The workspace's recorded chats, as last listed. */
  get recorded(): SessionSummary[] {
    return this.sessions;
  }

  /** Whether the shown session's history should be read from the server (none loaded, no turn). */
  needsHistory(): boolean {
    return !this.historyLoaded && !this.running;
  }

  /** What a webview that (re)loads is sent: the transcript so far, or an empty one. */
  replayMessages(): ToWebview[] {
    return this.replay.length > 0 ? this.replay : [{ type: "reset", sessionId: this.sessionId, messages: [] }];
  }

  serverRunning(): boolean {
    return this.client.client?.state === State.Running;
  }

  async refreshSessions(): Promise<void> {
    try {
      const result = await this.client.request<SessionsResult>(CHAT_SESSIONS, {});
      if (result) {
        this.sessions = result.sessions;
      }
    } catch (error) {
      this.client.log.appendLine(`Chat: cannot list sessions (${errorText(error)}).`);
    }
  }

  /** Sends a message to the webview and, if it belongs to the transcript, keeps it for replay. */
  post(message: ToWebview): void {
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
    this.deliver(message);
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
  async loadSession(sessionId: string): Promise<void> {
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

  newChat(): void {
    this.setSession(crypto.randomUUID());
    this.historyLoaded = true;
    this.replay = [];
    this.post({ type: "reset", sessionId: this.sessionId, messages: [] });
  }

  async send(text: string): Promise<void> {
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
    this.denyApprovals(ended.sessionId, "the turn ended");
    this.post(ended);
  }

  async cancel(): Promise<void> {
    const sessionId = this.running;
    if (!sessionId) {
      return;
    }
    const turn = this.turn;
    this.denyApprovals(sessionId, "stopped");
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

  onEvent(event: ChatEvent): void {
    if (typeof event !== "object" || event === null || typeof event.kind !== "string") {
      return;
    }
    if (event.sessionId !== this.sessionId) {
      return; // a session that is not shown (its history is read when it is picked)
    }
    this.post({ type: "event", event });
  }
}
