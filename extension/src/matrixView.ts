// "Memory Lens: Show Agent Matrix": every memory file of a workspace folder × every agent, and
// each agent's context at start-up, in one editor panel. The folder is the active editor's (in
// a multi-root window without one, the one the user picks); the title and header name it. The server decides every cell
// (memlens/matrix, the same data as `memlens report --json`); this file only draws it.
// Click (or Enter on) a cell to open that agent's view at that file; a file's name opens the
// file. Arrow keys move between cells; the page follows the VS Code theme.
import * as crypto from "node:crypto";
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { chooseFolder } from "./folders";
import { MergedContextProvider, showContextDocument } from "./mergedContext";
import { Dialect, MATRIX, MatrixCell, MatrixResult } from "./protocol";

const ICONS: Record<string, string> = { startup: "●", "on-read": "◐", listed: "◇", "on-demand": "◌", "not-read": "○" };
const FOREIGN = "–"; // memlens/reports/report.py draws the same dash

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

type Message = { type: "openCell"; agent: string; path: string } | { type: "openFile"; path: string } | { type: "refresh" };

export function registerMatrixView(context: vscode.ExtensionContext, client: MemlensClient, merged: MergedContextProvider): void {
  let panel: vscode.WebviewPanel | undefined;
  // The folder the panel shows (its cells open that folder's agent views).
  let folder = "";

  const render = async (): Promise<void> => {
    if (!panel) {
      return;
    }
    const result = await client.request<MatrixResult>(MATRIX, { folder }).catch((error: unknown) => {
      void vscode.window.showErrorMessage(`Memory Lens: the agent matrix failed: ${String(error)}`);
      return undefined;
    });
    if (!result || !panel) {
      return;
    }
    panel.title = `Agent Matrix — ${path.basename(result.folder)}`;
    panel.webview.html = html(result);
  };

  context.subscriptions.push(vscode.commands.registerCommand("memlens.showAgentMatrix", async () => {
    const chosen = await chooseFolder("Show the agent matrix of…");
    if (!chosen) {
      if (!vscode.workspace.workspaceFolders?.length) {
        void vscode.window.showWarningMessage("Open a folder first.");
      }
      return;
    }
    folder = chosen.uri.fsPath;
    if (panel) {
      panel.reveal();
    } else {
      panel = vscode.window.createWebviewPanel("memlens.matrix", "Agent Matrix", vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [],
      });
      panel.onDidDispose(() => (panel = undefined));
      panel.webview.onDidReceiveMessage(async (message: Message) => {
        if (message.type === "openFile") {
          await vscode.window.showTextDocument(vscode.Uri.file(message.path), { preview: true });
        } else if (message.type === "openCell") {
          const uri = MergedContextProvider.uriFor(vscode.Uri.file(folder), message.agent as Dialect);
          const editor = await showContextDocument(uri);
          const line = merged.lineOf(uri, message.path);
          if (line !== undefined) {
            const range = new vscode.Range(line, 0, line, 0);
            editor.selection = new vscode.Selection(range.start, range.start);
            editor.revealRange(range, vscode.TextEditorRevealType.AtTop);
          }
        } else if (message.type === "refresh") {
          await render();
        }
      });
    }
    await render();
  }));
}

function html(result: MatrixResult): string {
  const nonce = crypto.randomBytes(18).toString("base64");
  const csp = ["default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`].join("; ");
  const head = result.agents.map((agent) =>
    `<th scope="col" title="${escape(agent.why)}">${escape(agent.label)}<div class="sub">${escape(agent.why)}</div></th>`).join("");
  // A reason several cells share is said once under the table (the server numbers them).
  const reasonOf = (cell: MatrixCell): string => cell.note
    ? `<span class="why">see note ${cell.note}${cell.noteRest ? `; ${escape(cell.noteRest)}` : ""}</span>`
    : `<span class="why">${escape(cell.why)}</span>`;
  const rows = result.rows.map((row, r) => {
    const cells = result.agents.map((agent, c) => {
      const cell: MatrixCell = row.cells[agent.id] ?? { state: "not-read", word: "not read", why: "", foreign: false, noteRest: "" };
      const label = `${agent.label}: ${cell.word} — ${cell.why}${cell.cut ? ` (${cell.cut})` : ""}`;
      // Not this agent's kind of file (the server's `foreign`): a dash, the reason in the
      // tooltip, so that the cells that say something stand out in a row of ten agents.
      const body = cell.foreign
        ? `<span class="word" aria-hidden="true">${FOREIGN}</span>`
        : `<span class="word">${ICONS[cell.state] ?? ""} ${escape(cell.word)}</span>${reasonOf(cell)}${cell.cut ? `<span class="cut">✂ ${escape(cell.cut)}</span>` : ""}`;
      return `<td class="cell s-${cell.state}${cell.foreign ? " foreign" : ""}" role="gridcell" tabindex="${r === 0 && c === 0 ? 0 : -1}" data-row="${r}" data-col="${c + 1}"
        data-agent="${escape(agent.id)}" data-path="${escape(row.path)}" title="${escape(label)}" aria-label="${escape(label)}">
        ${body}</td>`;
    }).join("");
    const problems = row.problems ? ` <span class="problems">${row.problems} problem${row.problems === 1 ? "" : "s"}</span>` : "";
    return `<tr><th scope="row" class="file" role="rowheader" tabindex="-1" data-row="${r}" data-col="0" data-path="${escape(row.path)}" title="${escape(row.path)}"><a>${escape(row.relative)}</a>${problems}</th>${cells}</tr>`;
  }).join("\n");
  const scale = Math.max(1, ...result.agents.map((agent) => Math.max(agent.map.tokens, agent.map.limit ?? 0)));
  const maps = result.agents.map((agent) => {
    const segments = agent.map.segments.map((segment) =>
      `<div class="seg" data-w="${(100 * segment.tokens) / scale}" title="${escape(`${segment.relative}: ${segment.tokens.toLocaleString()} tokens`)}"></div>`).join("");
    const limit = agent.map.limit ? `<div class="limit" data-left="${(100 * agent.map.limit) / scale}" title="${escape(agent.map.limitLabel ?? "limit")}"></div>` : "";
    const cuts = agent.map.cuts.map((cut) => `<div class="cut">✂ ${escape(cut)}</div>`).join("");
    return `<section class="map"><h3>${escape(agent.label)} <span class="sub">${agent.map.tokens.toLocaleString()} tokens · ${escape(agent.map.estimator)}</span></h3>
      <div class="bar" role="img" aria-label="${escape(`${agent.label}: ${agent.map.tokens} tokens at start-up`)}">${segments}${limit}</div>${cuts}</section>`;
  }).join("\n");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px 16px; }
.legend span { margin-right: 12px; } .legend .word { display: inline; } .sub { color: var(--vscode-descriptionForeground); font-weight: normal; font-size: 0.9em; }
.wrap { overflow-x: auto; } table { border-collapse: collapse; }
th, td { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--vscode-editorWidget-background); position: sticky; top: 0; }
th.file { position: sticky; left: 0; background: var(--vscode-editor-background); font-family: var(--vscode-editor-font-family); font-weight: normal; max-width: 16em; overflow-wrap: anywhere; cursor: pointer; }
th.file a { color: var(--vscode-textLink-foreground); }
td.cell { cursor: pointer; min-width: 7em; } td.foreign { text-align: center; } td.cell:hover { background: var(--vscode-list-hoverBackground); }
td.cell:focus, th.file:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
.word { display: block; font-weight: 600; } .why { display: block; color: var(--vscode-descriptionForeground); font-size: 0.9em; }
.s-startup .word { color: var(--vscode-charts-green); } .s-on-read .word { color: var(--vscode-charts-blue); }
.s-on-demand .word { color: var(--vscode-charts-purple); } .s-listed .word { color: var(--vscode-charts-yellow); } .s-not-read .word { color: var(--vscode-descriptionForeground); font-weight: normal; }
.notes li { color: var(--vscode-descriptionForeground); margin-bottom: 4px; }
.cut, .problems { color: var(--vscode-editorWarning-foreground); font-size: 0.9em; display: block; }
.bar { position: relative; display: flex; height: 18px; border: 1px solid var(--vscode-panel-border, #8884); }
.seg { height: 100%; border-right: 1px solid var(--vscode-editor-background); }
.seg:nth-child(4n+1) { background: var(--vscode-charts-blue); } .seg:nth-child(4n+2) { background: var(--vscode-charts-green); }
.seg:nth-child(4n+3) { background: var(--vscode-charts-purple); } .seg:nth-child(4n) { background: var(--vscode-charts-yellow); }
.limit { position: absolute; top: -3px; bottom: -3px; width: 2px; background: var(--vscode-editorError-foreground); }
h3 { font-size: 1em; margin: 12px 0 4px; } h1.folder { font-size: 1.2em; margin: 12px 0 4px; }
button { font: inherit; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 2px 10px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); } button:focus { outline: 1px solid var(--vscode-focusBorder); }
</style><title>Agent Matrix</title></head>
<body>
<h1 class="folder" title="${escape(result.folder)}">${escape(path.basename(result.folder))} <span class="sub">${escape(result.folder)}</span></h1>
<p class="legend"><span class="s-startup"><span class="word">● at start-up</span></span><span class="s-on-read"><span class="word">◐ on read</span></span><span class="s-listed"><span class="word">◇ listed on read</span></span><span class="s-on-demand"><span class="word">◌ on demand</span></span><span class="s-not-read"><span class="word">○ not read</span></span><span class="s-not-read"><span class="word">${FOREIGN} not its file</span></span>
<button id="refresh">Refresh</button></p>
<div class="wrap"><table role="grid" aria-label="Which agent reads which memory file">
<thead><tr><th scope="col">File</th>${head}</tr></thead>
<tbody>${rows}</tbody></table></div>
${result.notes.length ? `<h3>Notes</h3><ol class="notes">${result.notes.map((why) => `<li>${escape(why)}</li>`).join("")}</ol>` : ""}
<h2>Context at start-up</h2>
${maps}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
// Sizes set through the CSSOM (the page's policy allows no inline style attribute).
for (const seg of document.querySelectorAll("[data-w]")) seg.style.width = seg.dataset.w + "%";
for (const mark of document.querySelectorAll("[data-left]")) mark.style.left = mark.dataset.left + "%";
const grid = document.querySelector("table");
const at = (r, c) => grid.querySelector('[data-row="' + r + '"][data-col="' + c + '"]');
function open(el) {
  if (!el) return;
  if (el.dataset.agent) vscode.postMessage({ type: "openCell", agent: el.dataset.agent, path: el.dataset.path });
  else vscode.postMessage({ type: "openFile", path: el.dataset.path });
}
grid.addEventListener("click", (e) => open(e.target.closest("[data-path]")));
grid.addEventListener("keydown", (e) => {
  const el = e.target.closest("[data-row]");
  if (!el) return;
  const r = Number(el.dataset.row), c = Number(el.dataset.col);
  const next = { ArrowRight: [r, c + 1], ArrowLeft: [r, c - 1], ArrowDown: [r + 1, c], ArrowUp: [r - 1, c] }[e.key];
  if (next) { const t = at(next[0], next[1]); if (t) { el.tabIndex = -1; t.tabIndex = 0; t.focus(); } e.preventDefault(); }
  else if (e.key === "Enter" || e.key === " ") { open(el); e.preventDefault(); }
});
document.getElementById("refresh").addEventListener("click", () => vscode.postMessage({ type: "refresh" }));
</script>
</body></html>`;
}
