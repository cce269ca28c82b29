// "Show Merged Context": a read-only virtual document with exactly what `memlens show` prints
// for a folder; the lines naming a source file (`--- Context from: <path> ---`, …) link to it.
// The server says where each file's path is written (memlens/show `links`): nothing here
// reads the rendered text. Every context view opens in one editor group, replacing the
// previous one in a preview tab, with the `memlens-context` language (plain text whose
// source markers are coloured: syntaxes/memlens-context.tmLanguage.json), not markdown.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { Dialect, SHOW, ShowParams, ShowResponse, SourceLink } from "./protocol";

export const SCHEME = "memlens-merged";
export const LANGUAGE = "memlens-context";

/** The view of the file's own agent, else the chosen agent's (the server decides). */
const MERGED_TITLE = "/Merged Context.md";
const TITLES: Record<Dialect, string> = {
  gemini: "/Gemini CLI Context.md",
  claude: "/Claude Code Context.md",
  agents: "/AGENTS.md Context.md",
  codex: "/Codex Context.md",
  copilot: "/GitHub Copilot CLI Context.md",
  "vscode-chat": "/VS Code Chat Context.md",
  cursor: "/Cursor Context.md",
  antigravity: "/Antigravity CLI Context.md",
  opencode: "/OpenCode Context.md",
  pi: "/pi Context.md",
};

export class MergedContextProvider implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();
  /** Where each document's last content names its source files, from the server. */
  private readonly links = new Map<string, SourceLink[]>();

  constructor(private readonly client: MemlensClient) {}

  /** The virtual document for the folder holding `source`. */
  static uriFor(source: vscode.Uri, dialect?: Dialect): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: dialect ? TITLES[dialect] : MERGED_TITLE, query: source.toString() });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    this.open.add(uri.toString());
    this.links.delete(uri.toString());
    // "Merged Context.md" lets the server pick: the file's own agent, else the chosen one.
    const dialect = (Object.keys(TITLES) as Dialect[]).find((d) => TITLES[d] === uri.path);
    const params: ShowParams = { uri: uri.query, ...(dialect ? { dialect } : {}) };
    const result = await this.client.request<ShowResponse>(SHOW, params);
    if (!result) {
      return "Memory Lens: the server is not running.";
    }
    if (!result.content) {
      return "Memory Lens: no memory files are loaded for this folder.";
    }
    this.links.set(uri.toString(), result.links);
    return result.content + "\n";
  }

  /** The line of the document at `uri` where the server says `path`'s text starts. */
  lineOf(uri: vscode.Uri, path: string): number | undefined {
    return this.links.get(uri.toString())?.find((link) => link.path === path)?.line;
  }

  refreshAll(): void {
    for (const uri of this.open) {
      this.changed.fire(vscode.Uri.parse(uri));
    }
  }

  provideDocumentLinks(document: vscode.TextDocument): vscode.DocumentLink[] {
    return (this.links.get(document.uri.toString()) ?? [])
      .filter((link) => link.line < document.lineCount)
      .map((link) => new vscode.DocumentLink(
        new vscode.Range(link.line, link.start, link.line, link.end),
        vscode.Uri.file(link.path),
      ));
  }
}

const isContextTab = (tab: vscode.Tab): boolean =>
  tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === SCHEME;

/**
 * Where a context document opens: the group already showing one (the active group first);
 * else, when the editor is split, the group beside the active one (right, else left); else
 * beside the active editor (a second group, once). Never a third column.
 */
function contextColumn(): vscode.ViewColumn {
  const { activeTabGroup, all } = vscode.window.tabGroups;
  const showing = [activeTabGroup, ...all].find((group) => group.tabs.some(isContextTab));
  if (showing) {
    return showing.viewColumn;
  }
  const at = all.indexOf(activeTabGroup);
  const other = all[at + 1] ?? (at > 0 ? all[at - 1] : undefined);
  return other?.viewColumn ?? vscode.ViewColumn.Beside;
}

/**
 * Shows a context document as a preview tab where contextColumn() says, and closes the other
 * context tabs (they are read-only views, reopened by their commands): one context tab, in
 * one group, however many times the commands run.
 */
export async function showContextDocument(uri: vscode.Uri): Promise<vscode.TextEditor> {
  let document = await vscode.workspace.openTextDocument(uri);
  if (document.languageId !== LANGUAGE) {
    document = await vscode.languages.setTextDocumentLanguage(document, LANGUAGE);
  }
  const editor = await vscode.window.showTextDocument(document, { preview: true, viewColumn: contextColumn() });
  const stale = vscode.window.tabGroups.all.flatMap((group) => group.tabs)
    .filter((tab) => isContextTab(tab) && (tab.input as vscode.TabInputText).uri.toString() !== uri.toString());
  if (stale.length > 0) {
    await vscode.window.tabGroups.close(stale, true);
  }
  return editor;
}

/**
 * At most this many context columns open side by side, beside the file: with eight agents, a
 * column each left about twelve characters a line at 1440 px, and three left about twenty at
 * 1280 px with the sidebar open; two leave about forty. The agents past it (the server lists
 * the ones in use first) open as tabs in the last column, a click away.
 */
export const MAX_CONTEXT_COLUMNS = 2;

/**
 * Shows several context documents side by side (one agent each): the first beside the active
 * editor, each next one beside the previous, up to MAX_CONTEXT_COLUMNS; the rest as tabs in
 * the last of those columns. The other context tabs are closed first; the first agent's
 * column has the focus.
 */
export async function showContextDocumentsSideBySide(uris: vscode.Uri[]): Promise<void> {
  const stale = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter(isContextTab);
  if (stale.length > 0) {
    await vscode.window.tabGroups.close(stale, true);
  }
  let last: vscode.ViewColumn | undefined;
  const opened: vscode.TextEditor[] = [];
  for (const [i, uri] of uris.entries()) {
    let document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== LANGUAGE) {
      document = await vscode.languages.setTextDocumentLanguage(document, LANGUAGE);
    }
    const column = i < MAX_CONTEXT_COLUMNS || last === undefined ? vscode.ViewColumn.Beside : last;
    const editor = await vscode.window.showTextDocument(document, {
      preview: false, viewColumn: column, preserveFocus: i >= MAX_CONTEXT_COLUMNS,
    });
    last = editor.viewColumn ?? last;
    opened.push(editor);
  }
  if (uris.length > MAX_CONTEXT_COLUMNS) {
    // The last column shows its first agent, not the last tab opened into it.
    const lastColumnFirst = opened[MAX_CONTEXT_COLUMNS - 1];
    await vscode.window.showTextDocument(lastColumnFirst.document, { viewColumn: lastColumnFirst.viewColumn, preserveFocus: true });
  }
  if (opened.length > 0) {
    await vscode.window.showTextDocument(opened[0].document, { viewColumn: opened[0].viewColumn });
  }
}

interface JsonPosition {
  line: number;
  character: number;
}
interface JsonLocation {
  uri: string;
  range: { start: JsonPosition; end: JsonPosition };
}

const isPosition = (value: unknown): value is JsonPosition =>
  typeof value === "object" && value !== null
  && typeof (value as JsonPosition).line === "number" && typeof (value as JsonPosition).character === "number";

const isLocation = (value: unknown): value is JsonLocation =>
  typeof value === "object" && value !== null && typeof (value as JsonLocation).uri === "string"
  && isPosition((value as JsonLocation).range?.start) && isPosition((value as JsonLocation).range?.end);

const toPosition = (p: JsonPosition) => new vscode.Position(p.line, p.character);

/**
 * The arguments of `editor.action.showReferences` (a Uri, a Position, Locations) from the
 * JSON the server puts in its "imported by N" code lens; undefined when they are not that.
 */
export function referencesArguments(
  uri: unknown,
  position: unknown,
  locations: unknown,
): [vscode.Uri, vscode.Position, vscode.Location[]] | undefined {
  if (typeof uri !== "string" || !isPosition(position) || !Array.isArray(locations) || !locations.every(isLocation)) {
    return undefined;
  }
  return [
    vscode.Uri.parse(uri),
    toPosition(position),
    locations.map((l) => new vscode.Location(vscode.Uri.parse(l.uri), new vscode.Range(toPosition(l.range.start), toPosition(l.range.end)))),
  ];
}
