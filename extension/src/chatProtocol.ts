// Shapes of the chat's messages: the server's custom LSP messages (docs/chat-protocol.md, mirrors
// of the pydantic models in memlens/agent) and the messages between the Chat webview and the
// extension. Types, constants and small pure helpers only: the webview bundle imports this
// file too.

// ------------------------------------------------------------------ LSP methods
export const CHAT_SEND = "memlens/chat/send";
export const CHAT_CANCEL = "memlens/chat/cancel";
export const CHAT_SESSIONS = "memlens/chat/sessions";
export const CHAT_HISTORY = "memlens/chat/history";
export const CHAT_STATUS = "memlens/chat/status";
export const SET_API_KEY = "memlens/setApiKey";
/** Server → client notification. */
export const CHAT_EVENT = "memlens/chat/event";
/** Server → client request. */
export const CHAT_APPROVE = "memlens/chat/approve";

// ------------------------------------------------------------------ client → server
export interface ChatSendParams {
  sessionId: string;
  text: string;
}

export type TurnStatus = "done" | "cancelled" | "error";

export interface ChatSendResult {
  sessionId: string;
  status: TurnStatus;
  message?: string | null;
}

export interface ChatCancelResult {
  cancelled: boolean;
}

export interface ChatSessionSummary {
  sessionId: string;
  title: string;
  /** ISO 8601 (a number is read as seconds or milliseconds since the epoch). */
  updated: string | number;
  messageCount: number;
}

export interface ChatSessionsResult {
  sessions: ChatSessionSummary[];
}

export interface ChatHistoryMessage {
  role: "user" | "model";
  text: string;
}

export interface ChatHistoryResult {
  sessionId: string;
  messages: ChatHistoryMessage[];
}

export interface ChatStatusResult {
  hasApiKey: boolean;
  model: string;
  approvalMode: string;
  baseUrl?: string | null;
}

export interface SetApiKeyResult {
  hasApiKey: boolean;
}

// ------------------------------------------------------------------ server → client
export interface MemoryFile {
  path: string;
  chars: number;
}

export type DoneReason = "stop" | "cancelled" | "error" | "maxTurns";

export type ChatEvent =
  | { sessionId: string; kind: "text"; text: string }
  | { sessionId: string; kind: "thought"; text: string }
  | { sessionId: string; kind: "toolCall"; callId: string; tool: string; args: Record<string, unknown>; needsApproval: boolean }
  | { sessionId: string; kind: "toolResult"; callId: string; tool: string; ok: boolean; summary: string; output?: string | null }
  | { sessionId: string; kind: "memoryLoaded"; files: MemoryFile[] }
  | { sessionId: string; kind: "error"; message: string; retryable: boolean }
  | { sessionId: string; kind: "done"; reason: DoneReason };

export type ChatEventKind = ChatEvent["kind"];

export interface ApproveParams {
  sessionId: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  diff?: string | null;
  title?: string | null;
}

export type ApprovalOutcome = "approve" | "approveAlways" | "deny";

export interface ApproveResult {
  outcome: ApprovalOutcome;
  modifiedArgs?: Record<string, unknown>;
}

// ------------------------------------------------------------------ extension ↔ webview
/** What the panel needs to know about the server and the key. */
export interface ChatViewStatus {
  server: "running" | "starting" | "stopped";
  hasApiKey: boolean;
  model?: string;
  approvalMode?: string;
}

/** Approval modes the user can pick (the `memlens.chat.approvalMode` setting), in order. */
export const APPROVAL_MODES: ReadonlyArray<{ mode: string; label: string; detail: string }> = [
  { mode: "manual", label: "Ask before every write", detail: "Every file edit and memory save waits for your approval." },
  { mode: "autoEdit", label: "Apply file edits", detail: "write_file and replace run without asking; memory saves still ask." },
];

/** A short, readable name of an approval mode (the server may report one the setting lacks). */
export function approvalModeLabel(mode: string | undefined): string | undefined {
  if (!mode) {
    return undefined;
  }
  if (mode === "deny") {
    return "Refuse every write";
  }
  return APPROVAL_MODES.find((item) => item.mode === mode)?.label ?? mode;
}

/** Extension → webview. */
export type ToWebview =
  | { type: "status"; status: ChatViewStatus }
  /** Clear the transcript and show this session (its history from the server). */
  | { type: "reset"; sessionId: string; messages: ChatHistoryMessage[] }
  /** The user's message was sent: a turn runs until "turnEnded". */
  | { type: "userMessage"; sessionId: string; text: string }
  | { type: "event"; event: ChatEvent }
  | { type: "turnEnded"; sessionId: string; status: TurnStatus; message?: string }
  | { type: "approve"; requestId: number; request: ApproveParams }
  | { type: "approvalResolved"; requestId: number; outcome: ApprovalOutcome; reason?: string }
  /** A problem on the extension's side (server not running, request failed). */
  | { type: "notice"; message: string };

/** Webview → extension. */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "cancel" }
  | { type: "approval"; requestId: number; outcome: ApprovalOutcome }
  | { type: "openFile"; path: string }
  | { type: "setApiKey" }
  /** The status line's model: opens the setting. */
  | { type: "chooseModel" }
  /** The status line's approval mode: the quick pick. */
  | { type: "chooseApprovalMode" };

export const APPROVAL_OUTCOMES: readonly ApprovalOutcome[] = ["approve", "approveAlways", "deny"];
