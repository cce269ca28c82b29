// The transcript: the scrolling conversation (user messages, the agent's turns with their
// streamed text, thoughts and memory chips) and the key prompt and welcome shown in it. Tool
// cards and approvals (toolCards.ts) are appended to a turn through appendToTurn.
import type { MemoryFile } from "../src/chatProtocol";
import { basename, button, h, renderMarkdown } from "./dom";
import { vscode } from "./host";

// Without a key the composer's button is "Set Gemini API Key" (pinned like the input, so it is
// never scrolled or cut off); the explanation sits at the top of the transcript.
export const keyState = h(
  "section",
  { id: "key-state", class: "key-state", hidden: true, "aria-labelledby": "key-state-title" },
  h("h2", { id: "key-state-title" }, "Set your Gemini API key"),
  h(
    "p",
    {},
    "The chat agent talks to Gemini with your key, kept in VS Code's secret storage and sent only to the Memory Lens server (GEMINI_API_KEY in the environment works too). Set it with the button below or the key in this view's title.",
  ),
);

export const emptyState = h(
  "div",
  { class: "empty-state" },
  h("h2", {}, "Memory Lens Chat"),
  h("p", {}, "Ask about this workspace. The agent reads exactly the memory shown in the Memory view; files it touches may load more, shown as “memory loaded” chips."),
);
export const messages = h("main", {
  id: "messages",
  class: "messages",
  role: "log",
  "aria-live": "polite",
  "aria-label": "Conversation",
  tabindex: "0",
});

interface TextSegment {
  element: HTMLElement;
  text: string;
  scheduled: boolean;
}

export interface Turn {
  element: HTMLElement;
  text?: TextSegment;
  thought?: { element: HTMLDetailsElement; body: HTMLElement };
  pending?: HTMLElement;
  ended: boolean;
}

let turn: Turn | undefined;

/** The last turn shown, ended or not. */
export function lastTurn(): Turn | undefined {
  return turn;
}

// ------------------------------------------------------------------ layout updates
function nearBottom(): boolean {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 48;
}

/** Makes a change and, if the transcript was scrolled to its end, keeps it there. */
export function follow<T>(change: () => T): T {
  const stick = nearBottom();
  const result = change();
  if (stick) {
    messages.scrollTop = messages.scrollHeight;
  }
  return result;
}

// ------------------------------------------------------------------ messages and turns
/** Empties the transcript (the key prompt and the welcome stay). */
export function resetTranscript(): void {
  messages.replaceChildren(keyState, emptyState);
  turn = undefined;
}

export function addUserMessage(text: string): void {
  emptyState.remove();
  follow(() => messages.append(h("div", { class: "message user" }, h("div", { class: "bubble", "aria-label": "You" }, text))));
}

export function startTurn(pending: boolean): Turn {
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

export function currentTurn(): Turn {
  return turn && !turn.ended ? turn : startTurn(false);
}

/** Appends to the current turn, above the "working" dots. */
export function appendToTurn(target: Turn, node: Node): void {
  follow(() => {
    if (target.pending && target.pending.parentElement === target.element) {
      target.element.insertBefore(node, target.pending);
    } else {
      target.element.append(node);
    }
  });
}

export function closeSegments(target: Turn): void {
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

export function appendText(chunk: string): void {
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

export function appendThought(chunk: string): void {
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

export function endTurn(target: Turn | undefined): void {
  if (!target) {
    return;
  }
  closeSegments(target);
  target.pending?.remove();
  target.pending = undefined;
  target.ended = true;
}

export function systemLine(text: string, kind = "info"): HTMLElement {
  return h("div", { class: `system-line ${kind}` }, text);
}

// ------------------------------------------------------------------ memory chips
export function onMemoryLoaded(files: MemoryFile[]): void {
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
