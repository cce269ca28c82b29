// The footer pinned under the transcript: the error banner (with Retry), the server's state,
// the composer (input, Send / Stop, or "Set Gemini API Key" without a key) and the status line.
// updateControls() makes all of it (and the transcript's key prompt) match the panel's state.
import { approvalModeLabel } from "../src/chatProtocol";
import { button, h } from "./dom";
import { vscode } from "./host";
import { panel } from "./state";
import { emptyState, keyState, messages } from "./transcript";

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

export const bannerText = h("span", { class: "banner-text" });
const retryButton = button("Retry", { class: "secondary", "aria-label": "Send the last message again" }, () => {
  if (panel.lastUserText && !panel.running) {
    send(panel.lastUserText);
  }
});
const dismissButton = button("Dismiss", { class: "secondary", "aria-label": "Dismiss the error" }, () => hideBanner());
export const banner = h("div", { id: "error-banner", class: "banner", role: "alert", hidden: true }, bannerText, retryButton, dismissButton);

const setKeyButton = button("Set Gemini API Key", { id: "set-key", hidden: true, "aria-label": "Set your Gemini API key" }, () =>
  vscode.postMessage({ type: "setApiKey" }),
);
const serverState = h("div", { id: "server-state", class: "server-state", hidden: true, role: "status" });

const inputHint = h("span", { id: "chat-input-hint", class: "visually-hidden" }, "Enter sends, Shift+Enter starts a new line.");
export const input = h("textarea", {
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
export const footer = h("footer", { class: "footer" }, banner, serverState, composer, statusLine);

// ------------------------------------------------------------------ layout updates
export function updateControls(): void {
  const status = panel.status;
  const running = panel.running;
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
  retryButton.hidden = running || !retryButton.dataset.retryable || !panel.lastUserText;
  statusLine.hidden = !status?.model && !status?.approvalMode;
  modelLabel.textContent = status?.model ?? "";
  modelLabel.setAttribute("aria-label", `Model: ${status?.model ?? "unknown"}. Change the model setting`);
  const mode = approvalModeLabel(status?.approvalMode);
  approvalLabel.textContent = mode ?? "";
  approvalLabel.dataset.mode = status?.approvalMode ?? "";
  approvalLabel.setAttribute("aria-label", `Approval mode: ${mode ?? "unknown"}. Change it`);
}

export function showBanner(message: string, retryable = false): void {
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
  if (!panel.running && !input.disabled) {
    input.focus();
  }
}

// ------------------------------------------------------------------ user actions
function send(text: string): void {
  if (!text.trim() || panel.running || !(panel.status?.hasApiKey ?? true)) {
    return;
  }
  vscode.postMessage({ type: "send", text });
  input.value = "";
  // Until the extension echoes the message back: no second send, focus kept off the input.
  panel.running = true;
  messages.focus({ preventScroll: true });
  updateControls();
}

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send(input.value);
  }
});
