// Tool cards and approvals: one card per tool call in the agent's turn (its arguments, status
// and result), and in it the approval the extension asks for (the proposed diff and Approve /
// Always / Deny). The user's choice is posted to the extension at once; the extension's
// `approvalResolved` settles an approval the user did not answer (stopped, cancelled).
import type { ApprovalOutcome, ApprovalRequest, ChatEvent } from "../src/chatProtocol";
import { button, h, truncate } from "./dom";
import { vscode } from "./host";
import { appendToTurn, closeSegments, currentTurn, follow, messages } from "./transcript";

interface ToolCard {
  element: HTMLElement;
  status: HTMLElement;
  body: HTMLElement;
}

const toolCards = new Map<string, ToolCard>();
const approvals = new Map<number, { element: HTMLElement; buttons: HTMLButtonElement[]; result: HTMLElement }>();

/** Forgets the cards and approvals of a transcript that is cleared. */
export function clearToolCards(): void {
  toolCards.clear();
  approvals.clear();
}

function argsSummary(args: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(args ?? {})) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}: ${truncate((text ?? "").replace(/\s+/g, " "), 80)}`);
  }
  return truncate(parts.join(" · "), 200);
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

export function onToolCall(event: Extract<ChatEvent, { kind: "toolCall" }>): void {
  const target = currentTurn();
  closeSegments(target);
  const card = makeToolCard(event.sessionId, event.callId, event.tool, event.args);
  setCardStatus(card, event.needsApproval ? "waiting" : "running");
  appendToTurn(target, card.element);
}

export function onToolResult(event: Extract<ChatEvent, { kind: "toolResult" }>): void {
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

// ------------------------------------------------------------------ approvals
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

export function onApprove(requestId: number, request: ApprovalRequest): void {
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

export function decide(requestId: number, outcome: ApprovalOutcome, reason?: string): void {
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
