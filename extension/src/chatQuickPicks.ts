// The quick picks of the Chat view's title bar: "Chat History…" (the recorded chats) and
// "Chat Approval Mode…". They only ask; the view acts on the answer.
import * as vscode from "vscode";
import { APPROVAL_MODES, SessionSummary, approvalModeLabel } from "./chatProtocol";

/** "5 minutes ago" for a session's `updated` (ISO 8601, or seconds / milliseconds since the epoch). */
export function relativeTime(updated: string | number): string {
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

/** What the user picked in "Chat History…": a new chat, or a recorded session. */
export type ChatPick = { newChat?: boolean; sessionId?: string };

/** The recorded chats (the one shown marked), after "New Chat"; undefined on Escape. */
export async function pickChat(
  sessions: SessionSummary[],
  shownSessionId: string,
  serverRunning: boolean,
): Promise<ChatPick | undefined> {
  type Item = vscode.QuickPickItem & ChatPick;
  const items: Item[] = [
    { label: "$(add) New Chat", description: "start an empty chat", newChat: true, alwaysShow: true },
  ];
  if (sessions.length > 0) {
    items.push({ label: "Recent chats", kind: vscode.QuickPickItemKind.Separator });
  }
  for (const session of sessions) {
    const current = session.sessionId === shownSessionId;
    items.push({
      label: `${current ? "$(comment-discussion) " : ""}${session.title || "Untitled chat"}`,
      description: `${relativeTime(session.updated)}${current ? " · shown" : ""}`,
      detail: `${session.messageCount} message${session.messageCount === 1 ? "" : "s"}`,
      sessionId: session.sessionId,
    });
  }
  return vscode.window.showQuickPick(items, {
    title: "Chat History",
    placeHolder: sessions.length
      ? "Pick a chat to continue it, or start a new one"
      : serverRunning
        ? "No recorded chats in this workspace yet"
        : "The Memory Lens server is not running: no history to show",
    matchOnDescription: true,
    matchOnDetail: true,
  });
}

/** The approval modes (the `current` one checked); the mode picked, or undefined on Escape. */
export async function pickApprovalMode(current: string): Promise<string | undefined> {
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
  return pick?.mode;
}
