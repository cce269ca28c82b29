// The Chat panel's webview script (bundled by esbuild into media/chat/chat.js, an iife).
// It renders what the extension sends (extension/src/chatView.ts) and posts the user's actions
// back; it never talks to the server itself. Markdown from the model is rendered by markdown-it
// (raw HTML off) and sanitised by DOMPurify before it reaches the DOM; everything else is set
// with textContent. No inline handlers, no eval: the CSP allows only this nonce'd script.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import type {
  ApprovalOutcome,
  ApprovalRequest,
  ChatEvent,
  ChatViewStatus,
  FromWebview,
  HistoryMessage,
  MemoryFile,
  ToWebview,
  TurnStatus,
} from "../src/chatProtocol";
import { approvalModeLabel } from "../src/chatProtocol";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(md.render(text), {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
}

// ------------------------------------------------------------------ DOM helpers
type Attrs = Record<string, string | boolean | undefined>;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Node | string | undefined>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) {
      continue;
    }
    if (name === "class") {
      element.className = String(value);
    } else {
      element.setAttribute(name, value === true ? "" : value);
    }
  }
  for (const child of children) {
    if (child !== undefined) {
      element.append(child);
    }
  }
  return element;
}

function button(label: string, attrs: Attrs, onClick: () => void): HTMLButtonElement {
  const element = h("button", { type: "button", ...attrs }, label);
  element.addEventListener("click", onClick);
  return element;
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function basename(file: string): string {
  const parts = file.split(/[\\/]/).filter(Boolean);
  return parts.slice(-2).join("/") || file;
}

function argsSummary(args: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(args ?? {})) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}: ${truncate((text ?? "").replace(/\s+/g, " "), 80)}`);
  }
  return truncate(parts.join(" · "), 200);
}

// ------------------------------------------------------------------ the page
const app = document.getElementById("app") ?? document.body;

// New chat, history, approval mode and the key are actions in the view's title bar (package.json);
// the status line under the input says which model answers and when writes wait for approval.
const modelLabel = button("", { id: "model", class: "link", title: "The model the chat uses: click to change the memlens.chat.model setting" }, () =>
  vscode.postMessage({ type: "chooseModel" }),
);
const approvalLabel = button(
  "",
  { id: "approval-mode", class: "link", title: "When the agent's writes wait for your approval: click to change" },
  () => vscode.postMessage({ type: "chooseApprovalMode" }),
);
const statusLine = h(
  "div",
  { id: "status-line", class: "status-line", role: "status", "aria-label": "Chat model and approval mode" },
  h("span", { class: "status-item" }, h("span", { class: "status-name" }, "Model"), modelLabel),
  h("span", { class: "status-item" }, h("span", { class: "status-name" }, "Writes"), approvalLabel),
);

const bannerText = h("span", { class: "banner-text" });
const retryButton = button("Retry", { class: "secondary", "aria-label": "Send the last message again" }, () => {
  if (lastUserText && !running) {
    send(lastUserText);
  }
});
const dismissButton = button("Dismiss", { class: "secondary", "aria-label": "Dismiss the error" }, () => hideBanner());
const banner = h("div", { id: "error-banner", class: "banner", role: "alert", hidden: true }, bannerText, retryButton, dismissButton);

// Without a key the composer's button is "Set Gemini API Key" (pinned like the input, so it is
// never scrolled or cut off); the explanation sits at the top of the transcript.
const setKeyButton = button("Set Gemini API Key", { id: "set-key", hidden: true, "aria-label": "Set your Gemini API key" }, () =>
  vscode.postMessage({ type: "setApiKey" }),
);
const keyState = h(
  "section",
  { id: "key-state", class: "key-state", hidden: true, "aria-labelledby": "key-state-title" },
  h("h2", { id: "key-state-title" }, "Set your Gemini API key"),
  h(
    "p",
    {},
    "The chat agent talks to Gemini with your key, kept in VS Code's secret storage and sent only to the Memory Lens server (GEMINI_API_KEY in the environment works too). Set it with the button below or the key in this view's title.",
  ),
);
const serverState = h("div", { id: "server-state", class: "server-state", hidden: true, role: "status" });

const emptyState = h(
  "div",
  { class: "empty-state" },
  h("h2", {}, "Memory Lens Chat"),
  h("p", {}, "Ask about this workspace. The agent reads exactly the memory shown in the Memory view; files it touches may load more, shown as “memory loaded” chips."),
);
const messages = h("main", {
  id: "messages",
  class: "messages",
  role: "log",
  "aria-live": "polite",
  "aria-label": "Conversation",
  tabindex: "0",
});

const inputHint = h("span", { id: "chat-input-hint", class: "visually-hidden" }, "Enter sends, Shift+Enter starts a new line.");
const input = h("textarea", {
  id: "chat-input",
  rows: "2",
  placeholder: "Ask about this workspace…",
  title: "Enter sends, Shift+Enter starts a new line",
  "aria-label": "Message to the agent",
  "aria-describedby": "chat-input-hint",
});
const sendButton = button("Send", { id: "send", "aria-label": "Send message" }, () => send(input.value));
const stopButton = button("Stop", { id: "stop", class: "stop", hidden: true, "aria-label": "Stop the running turn" }, () =>
  vscode.postMessage({ type: "cancel" }),
);
const composer = h(
  "div",
  { class: "composer" },
  inputHint,
  input,
  h("div", { class: "composer-buttons" }, sendButton, stopButton, setKeyButton),
);
// The transcript scrolls; everything below it is pinned to the bottom of the view.
const footer = h("footer", { class: "footer" }, banner, serverState, composer, statusLine);

app.append(messages, footer);

// ------------------------------------------------------------------ state
let status: ChatViewStatus | undefined;
let currentSessionId = "";
let running = false;
let lastUserText: string | undefined;

interface TextSegment {
  element: HTMLElement;
  text: string;
  scheduled: boolean;
}

interface Turn {
  element: HTMLElement;
  text?: TextSegment;
  thought?: { element: HTMLDetailsElement; body: HTMLElement };
  pending?: HTMLElement;
  ended: boolean;
}

interface ToolCard {
  element: HTMLElement;
  status: HTMLElement;
  body: HTMLElement;
}

let turn: Turn | undefined;
const toolCards = new Map<string, ToolCard>();
const approvals = new Map<number, { element: HTMLElement; buttons: HTMLButtonElement[]; result: HTMLElement }>();

// ------------------------------------------------------------------ layout updates
function nearBottom(): boolean {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 48;
}

function follow<T>(change: () => T): T {
  const stick = nearBottom();
  const result = change();
  if (stick) {
    messages.scrollTop = messages.scrollHeight;
  }
  return result;
}

function updateControls(): void {
  const hasKey = status?.hasApiKey ?? true;
  if (keyState.hidden && !hasKey && !messages.querySelector(".message")) {
    messages.scrollTop = 0; // the key prompt just showed: from its start
  }
  keyState.hidden = hasKey;
  serverState.hidden = !status || status.server === "running";
  serverState.textContent =
    status?.server === "starting"
      ? "Starting the Memory Lens server…"
      : "The Memory Lens server is not running. If it does not start, run “Memory Lens: Restart Server” or check its logs.";
  messages.setAttribute("aria-busy", running ? "true" : "false");
  emptyState.hidden = !hasKey;
  setKeyButton.hidden = hasKey;
  input.disabled = running || !hasKey;
  input.placeholder = hasKey
    ? running
      ? "The agent is answering…"
      : "Ask about this workspace…"
    : "Set your Gemini API key to chat";
  sendButton.hidden = running || !hasKey;
  stopButton.hidden = !running;
  retryButton.hidden = running || !retryButton.dataset.retryable || !lastUserText;
  statusLine.hidden = !status?.model && !status?.approvalMode;
  modelLabel.textContent = status?.model ?? "";
  modelLabel.setAttribute("aria-label", `Model: ${status?.model ?? "unknown"}. Change the model setting`);
  const mode = approvalModeLabel(status?.approvalMode);
  approvalLabel.textContent = mode ?? "";
  approvalLabel.dataset.mode = status?.approvalMode ?? "";
  approvalLabel.setAttribute("aria-label", `Approval mode: ${mode ?? "unknown"}. Change it`);
}

function showBanner(message: string, retryable = false): void {
  bannerText.textContent = message;
  if (retryable) {
    retryButton.dataset.retryable = "1";
  } else {
    delete retryButton.dataset.retryable;
  }
  banner.hidden = false;
  updateControls();
}

function hideBanner(): void {
  banner.hidden = true;
  delete retryButton.dataset.retryable;
  if (!running && !input.disabled) {
    input.focus();
  }
}

// ------------------------------------------------------------------ the transcript
function clearTranscript(): void {
  messages.replaceChildren(keyState, emptyState);
  toolCards.clear();
  approvals.clear();
  turn = undefined;
}

function addUserMessage(text: string): void {
  emptyState.remove();
  follow(() => messages.append(h("div", { class: "message user" }, h("div", { class: "bubble", "aria-label": "You" }, text))));
}

function startTurn(pending: boolean): Turn {
  emptyState.remove();
  const element = h("div", { class: "message model", "aria-label": "Agent" });
  const next: Turn = { element, ended: false };
  if (pending) {
    next.pending = h("div", { class: "pending", role: "status", "aria-label": "The agent is working" }, h("span"), h("span"), h("span"));
    element.append(next.pending);
  }
  follow(() => messages.append(element));
  turn = next;
  return next;
}

function currentTurn(): Turn {
  return turn && !turn.ended ? turn : startTurn(false);
}

/** Appends to the current turn, above the "working" dots. */
function appendToTurn(target: Turn, node: Node): void {
  follow(() => {
    if (target.pending && target.pending.parentElement === target.element) {
      target.element.insertBefore(node, target.pending);
    } else {
      target.element.append(node);
    }
  });
}

function closeSegments(target: Turn): void {
  if (target.text) {
    flushText(target.text);
  }
  target.text = undefined;
  target.thought = undefined;
}

function flushText(segment: TextSegment): void {
  segment.scheduled = false;
  follow(() => {
    segment.element.innerHTML = renderMarkdown(segment.text);
  });
}

function appendText(chunk: string): void {
  const target = currentTurn();
  target.thought = undefined;
  if (!target.text) {
    const element = h("div", { class: "bubble markdown" });
    target.text = { element, text: "", scheduled: false };
    appendToTurn(target, element);
  }
  const segment = target.text;
  segment.text += chunk;
  if (!segment.scheduled) {
    segment.scheduled = true;
    requestAnimationFrame(() => {
      if (segment.scheduled) {
        flushText(segment);
      }
    });
  }
}

function appendThought(chunk: string): void {
  const target = currentTurn();
  if (target.text) {
    closeSegments(target);
  }
  if (!target.thought) {
    const body = h("div", { class: "thought-body" });
    const element = h("details", { class: "thought" }, h("summary", {}, "Thinking"), body);
    target.thought = { element, body };
    appendToTurn(target, element);
  }
  const thought = target.thought;
  follow(() => thought.body.append(chunk));
}

function endTurn(target: Turn | undefined): void {
  if (!target) {
    return;
  }
  closeSegments(target);
  target.pending?.remove();
  target.pending = undefined;
  target.ended = true;
}

function systemLine(text: string, kind = "info"): HTMLElement {
  return h("div", { class: `system-line ${kind}` }, text);
}

// ------------------------------------------------------------------ tool cards
const STATUS_TEXT: Record<string, string> = {
  running: "running",
  waiting: "waiting for approval",
  approved: "approved",
  denied: "denied",
  ok: "done",
  failed: "failed",
};

function setCardStatus(card: ToolCard, state: keyof typeof STATUS_TEXT): void {
  card.status.textContent = STATUS_TEXT[state];
  card.status.className = `tool-status ${state}`;
  card.element.dataset.status = state;
}

function makeToolCard(sessionId: string, callId: string, tool: string, args: Record<string, unknown>): ToolCard {
  const status = h("span", { class: "tool-status" });
  const body = h("div", { class: "tool-body" });
  const element = h(
    "section",
    { class: "tool-card", "data-call-id": callId, "data-tool": tool, "aria-label": `Tool call ${tool}`, tabindex: "-1" },
    h("div", { class: "tool-header" }, h("span", { class: "tool-icon", "aria-hidden": "true" }, "⚙"), h("span", { class: "tool-name" }, tool), status),
  );
  const summary = argsSummary(args);
  if (summary) {
    element.append(h("div", { class: "tool-args", title: summary }, summary));
  }
  if (args && Object.keys(args).length > 0) {
    element.append(
      h("details", { class: "tool-args-full" }, h("summary", {}, "Arguments"), h("pre", {}, JSON.stringify(args, null, 2))),
    );
  }
  element.append(body);
  const card: ToolCard = { element, status, body };
  toolCards.set(`${sessionId}\u0000${callId}`, card);
  return card;
}

function onToolCall(event: Extract<ChatEvent, { kind: "toolCall" }>): void {
  const target = currentTurn();
  closeSegments(target);
  const card = makeToolCard(event.sessionId, event.callId, event.tool, event.args);
  setCardStatus(card, event.needsApproval ? "waiting" : "running");
  appendToTurn(target, card.element);
}

function onToolResult(event: Extract<ChatEvent, { kind: "toolResult" }>): void {
  let card = toolCards.get(`${event.sessionId}\u0000${event.callId}`);
  if (!card) {
    const target = currentTurn();
    closeSegments(target);
    card = makeToolCard(event.sessionId, event.callId, event.tool, {});
    appendToTurn(target, card.element);
  }
  const denied = card.element.dataset.status === "denied";
  setCardStatus(card, denied ? "denied" : event.ok ? "ok" : "failed");
  const resultCard = card;
  follow(() => {
    resultCard.body.append(h("div", { class: `tool-result ${event.ok ? "ok" : "failed"}` }, event.summary));
    if (event.output) {
      resultCard.body.append(h("details", { class: "tool-output" }, h("summary", {}, "Output"), h("pre", {}, event.output)));
    }
  });
}

function renderDiff(diff: string): HTMLElement {
  const pre = h("pre", { class: "diff", "aria-label": "Proposed change (unified diff)" });
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    let kind = "context";
    if (line.startsWith("+++") || line.startsWith("---")) {
      kind = "header";
    } else if (line.startsWith("@@")) {
      kind = "hunk";
    } else if (line.startsWith("+")) {
      kind = "add";
    } else if (line.startsWith("-")) {
      kind = "del";
    }
    pre.append(h("span", { class: `diff-line ${kind}` }, line + "\n"));
  }
  return pre;
}

const OUTCOME_TEXT: Record<ApprovalOutcome, string> = {
  approve: "Approved",
  approveAlways: "Approved (always, for this session)",
  deny: "Denied",
};

function onApprove(requestId: number, request: ApprovalRequest): void {
  let card = toolCards.get(`${request.sessionId}\u0000${request.callId}`);
  if (!card) {
    const target = currentTurn();
    closeSegments(target);
    card = makeToolCard(request.sessionId, request.callId, request.tool, request.args);
    appendToTurn(target, card.element);
  }
  setCardStatus(card, "waiting");
  const choose = (outcome: ApprovalOutcome) => {
    vscode.postMessage({ type: "approval", requestId, outcome });
    decide(requestId, outcome);
  };
  const buttons = [
    button("Approve", { class: "approve", "data-outcome": "approve", "aria-label": `Approve ${request.tool}` }, () => choose("approve")),
    button(
      "Always",
      {
        class: "secondary",
        "data-outcome": "approveAlways",
        title: `Approve ${request.tool} now and for the rest of this chat`,
        "aria-label": `Always approve ${request.tool} in this chat`,
      },
      () => choose("approveAlways"),
    ),
    button("Deny", { class: "secondary deny", "data-outcome": "deny", "aria-label": `Deny ${request.tool}` }, () => choose("deny")),
  ];
  const result = h("span", { class: "approval-result", role: "status" });
  const element = h(
    "div",
    { class: "approval", "data-request-id": String(requestId), role: "group", "aria-label": `Approval for ${request.tool}` },
    h("div", { class: "approval-title" }, request.title || `Allow ${request.tool}?`),
    request.diff ? renderDiff(request.diff) : undefined,
    h("div", { class: "approval-buttons" }, ...buttons, result),
  );
  approvals.set(requestId, { element, buttons, result });
  const approvalCard = card;
  follow(() => approvalCard.body.append(element));
  approvalCard.element.scrollIntoView({ block: "nearest" });
  if (!document.activeElement || document.activeElement === document.body || document.activeElement === messages) {
    approvalCard.element.focus({ preventScroll: true });
  }
}

function decide(requestId: number, outcome: ApprovalOutcome, reason?: string): void {
  const approval = approvals.get(requestId);
  if (!approval || approval.element.dataset.decided) {
    return;
  }
  approval.element.dataset.decided = outcome;
  for (const item of approval.buttons) {
    item.remove();
  }
  approval.result.textContent = reason ? `${OUTCOME_TEXT[outcome]} (${reason})` : OUTCOME_TEXT[outcome];
  approval.result.className = `approval-result ${outcome === "deny" ? "denied" : "approved"}`;
  const card = approval.element.closest<HTMLElement>(".tool-card");
  if (card && card.dataset.status === "waiting") {
    const status = card.querySelector<HTMLElement>(".tool-status");
    if (status) {
      setCardStatus({ element: card, status, body: card }, outcome === "deny" ? "denied" : "approved");
    }
  }
}

// ------------------------------------------------------------------ memory chips
function onMemoryLoaded(files: MemoryFile[]): void {
  const target = currentTurn();
  closeSegments(target);
  const row = h("div", { class: "chips", role: "group", "aria-label": "Memory loaded just in time" }, h("span", { class: "chips-label" }, "Memory loaded"));
  for (const file of files) {
    row.append(
      button(
        basename(file.path),
        {
          class: "chip",
          title: `${file.path} · ${file.chars.toLocaleString()} chars`,
          "aria-label": `Open memory file ${file.path}`,
        },
        () => vscode.postMessage({ type: "openFile", path: file.path }),
      ),
    );
  }
  appendToTurn(target, row);
}

// ------------------------------------------------------------------ events from the extension
function onEvent(event: ChatEvent): void {
  if (currentSessionId && event.sessionId !== currentSessionId) {
    return;
  }
  switch (event.kind) {
    case "text":
      appendText(event.text);
      break;
    case "thought":
      appendThought(event.text);
      break;
    case "toolCall":
      onToolCall(event);
      break;
    case "toolResult":
      onToolResult(event);
      break;
    case "memoryLoaded":
      onMemoryLoaded(event.files);
      break;
    case "error": {
      const target = currentTurn();
      closeSegments(target);
      appendToTurn(target, systemLine(event.message, "error"));
      showBanner(event.message, event.retryable);
      break;
    }
    case "done": {
      const target = currentTurn();
      closeSegments(target);
      if (event.reason === "cancelled") {
        appendToTurn(target, systemLine("Stopped."));
      } else if (event.reason === "maxTurns") {
        appendToTurn(target, systemLine("Stopped: the agent reached its limit of model turns for one message."));
      }
      endTurn(target);
      break;
    }
  }
}

function onTurnEnded(turnStatus: TurnStatus, message: string | undefined): void {
  running = false;
  const target = turn;
  if (target && !target.ended) {
    if (turnStatus === "cancelled") {
      appendToTurn(target, systemLine("Stopped."));
    }
    endTurn(target);
  }
  if (turnStatus === "error" && message && !(banner.hidden === false && bannerText.textContent === message)) {
    showBanner(message, false);
  }
  updateControls();
  if (document.activeElement === messages || document.activeElement === document.body || !document.activeElement) {
    input.focus();
  }
}

function loadHistory(history: HistoryMessage[]): void {
  clearTranscript();
  for (const message of history) {
    if (message.role === "user") {
      addUserMessage(message.text);
    } else {
      const target = startTurn(false);
      const element = h("div", { class: "bubble markdown" });
      element.innerHTML = renderMarkdown(message.text);
      target.element.append(element);
      target.ended = true;
    }
  }
  // A chat opens at its end; an empty one at its top (the key prompt, if shown, starts there).
  messages.scrollTop = history.length ? messages.scrollHeight : 0;
}

function onMessage(message: ToWebview): void {
  switch (message.type) {
    case "status":
      status = message.status;
      break;
    case "reset":
      currentSessionId = message.sessionId;
      running = false;
      banner.hidden = true;
      loadHistory(message.messages);
      break;
    case "userMessage":
      currentSessionId = message.sessionId;
      running = true;
      lastUserText = message.text;
      banner.hidden = true;
      endTurn(turn);
      addUserMessage(message.text);
      startTurn(true);
      break;
    case "event":
      onEvent(message.event);
      break;
    case "turnEnded":
      onTurnEnded(message.status, message.message);
      break;
    case "approve":
      onApprove(message.requestId, message.request);
      break;
    case "approvalResolved":
      decide(message.requestId, message.outcome, message.reason);
      break;
    case "notice":
      showBanner(message.message);
      break;
  }
  updateControls();
}

// ------------------------------------------------------------------ user actions
function send(text: string): void {
  if (!text.trim() || running || !(status?.hasApiKey ?? true)) {
    return;
  }
  vscode.postMessage({ type: "send", text });
  input.value = "";
  // Until the extension echoes the message back: no second send, focus kept off the input.
  running = true;
  messages.focus({ preventScroll: true });
  updateControls();
}

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send(input.value);
  }
});

window.addEventListener("message", (event: MessageEvent) => {
  const data: unknown = event.data;
  if (typeof data === "object" && data !== null && typeof (data as { type?: unknown }).type === "string") {
    onMessage(data as ToWebview);
  }
});

clearTranscript();
updateControls();
vscode.postMessage({ type: "ready" });
