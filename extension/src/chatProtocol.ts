// The chat's messages: the server's custom LSP messages (docs/chat-protocol.md; their payload
// types are generated from the server's models) and the messages between the Chat webview and
// the extension. Types, constants and small pure helpers only: the webview bundle imports this
// file too.
import type {
  ApprovalRequest,
  ApprovalResponse,
  ChatEvent,
  HistoryMessage,
  SendResult,
} from "./generated/protocol";

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

// ------------------------------------------------------------------ payloads
// Generated from the server's pydantic models (scripts/gen_types.py): the server is the one
// place they are written.
export type {
  ApiKeyParams,
  ApiKeyResult,
  ApprovalRequest,
  ApprovalResponse,
  CancelResult,
  ChatEvent,
  ChatStatus,
  HistoryMessage,
  HistoryResult,
  MemoryFile,
  SendParams,
  SendResult,
  SessionParams,
  SessionSummary,
  SessionsResult,
} from "./generated/protocol";

export type TurnStatus = SendResult["status"];
export type ApprovalOutcome = ApprovalResponse["outcome"];

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
  | { type: "reset"; sessionId: string; messages: HistoryMessage[] }
  /** The user's message was sent: a turn runs until "turnEnded". */
  | { type: "userMessage"; sessionId: string; text: string }
  | { type: "event"; event: ChatEvent }
  | { type: "turnEnded"; sessionId: string; status: TurnStatus; message?: string }
  | { type: "approve"; requestId: number; request: ApprovalRequest }
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
