// The Chat panel's webview script (bundled by esbuild into media/chat/chat.js, an iife).
// It renders what the extension sends (extension/src/chatView.ts) and posts the user's actions
// back; it never talks to the server itself. Markdown from the model is rendered by markdown-it
// (raw HTML off) and sanitised by DOMPurify before it reaches the DOM; everything else is set
// with textContent. No inline handlers, no eval: the CSP allows only this nonce'd script.
// This entry point builds the page and dispatches the extension's messages; the parts are
// transcript.ts (the conversation), toolCards.ts (tool calls and approvals) and composer.ts
// (the footer: banner, input, status line).
import type { ChatEvent, HistoryMessage, ToWebview, TurnStatus } from "../src/chatProtocol";
import { banner, bannerText, footer, input, showBanner, updateControls } from "./composer";
import { h, renderMarkdown } from "./dom";
import { vscode } from "./host";
import { panel } from "./state";
import { clearToolCards, decide, onApprove, onToolCall, onToolResult } from "./toolCards";
import {
  addUserMessage,
  appendText,
  appendThought,
  appendToTurn,
  closeSegments,
  currentTurn,
  endTurn,
  lastTurn,
  messages,
  onMemoryLoaded,
  resetTranscript,
  startTurn,
  systemLine,
} from "./transcript";

// ------------------------------------------------------------------ the page
const app = document.getElementById("app") ?? document.body;
app.append(messages, footer);

let currentSessionId = "";

function clearTranscript(): void {
  resetTranscript();
  clearToolCards();
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
  panel.running = false;
  const target = lastTurn();
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
      panel.status = message.status;
      break;
    case "reset":
      currentSessionId = message.sessionId;
      panel.running = false;
      banner.hidden = true;
      loadHistory(message.messages);
      break;
    case "userMessage":
      currentSessionId = message.sessionId;
      panel.running = true;
      panel.lastUserText = message.text;
      banner.hidden = true;
      endTurn(lastTurn());
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

window.addEventListener("message", (event: MessageEvent) => {
  const data: unknown = event.data;
  if (typeof data === "object" && data !== null && typeof (data as { type?: unknown }).type === "string") {
    onMessage(data as ToWebview);
  }
});

clearTranscript();
updateControls();
vscode.postMessage({ type: "ready" });
