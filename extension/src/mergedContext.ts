// "Show Merged Context": a read-only virtual document with exactly what `memlens show` prints
// for a folder; its `--- Context from: <path> ---` lines link to the files.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { SHOW, ShowResponse } from "./protocol";

export const SCHEME = "memlens-merged";
// Source lines: Gemini CLI's `--- Context from: <path> ---`, Claude Code's
// `Contents of <path> (<kind>):`, and the AGENTS.md view's `--- <path> ---`.
const CONTEXT_LINES = [
  /^--- (?:End of )?Context from: (\/.+) ---$/,
  /^Contents of (\/.+?) \([^()]*\):$/,
  /^--- (\/.+) ---$/,
];

export type Dialect = "gemini" | "claude" | "agents";
const TITLES: Record<Dialect, string> = {
  gemini: "/Merged Context.md",
  claude: "/Claude Code Context.md",
  agents: "/AGENTS.md Context.md",
};

export class MergedContextProvider implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();

  constructor(private readonly client: MemlensClient) {}

  /** The virtual document for the folder holding `source`. */
  static uriFor(source: vscode.Uri, dialect?: Dialect): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: TITLES[dialect ?? "gemini"], query: source.toString() });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    this.open.add(uri.toString());
    // "Merged Context.md" lets the server pick the view of the file's own dialect.
    const dialect = (Object.keys(TITLES) as Dialect[]).find((d) => d !== "gemini" && TITLES[d] === uri.path);
    const result = await this.client.request<ShowResponse>(SHOW, { uri: uri.query, ...(dialect ? { dialect } : {}) });
    if (!result) {
      return "Memory Lens: the server is not running.";
    }
    if (!result.content) {
      return "Memory Lens: no memory files are loaded for this folder.";
    }
    return result.content + "\n";
  }

  refreshAll(): void {
    for (const uri of this.open) {
      this.changed.fire(vscode.Uri.parse(uri));
    }
  }

  provideDocumentLinks(document: vscode.TextDocument): vscode.DocumentLink[] {
    const links: vscode.DocumentLink[] = [];
    for (let line = 0; line < document.lineCount; line++) {
      const text = document.lineAt(line).text;
      const match = CONTEXT_LINES.map((pattern) => pattern.exec(text)).find((found) => found !== null);
      if (match) {
        const start = text.indexOf(match[1]);
        const range = new vscode.Range(line, start, line, start + match[1].length);
        links.push(new vscode.DocumentLink(range, vscode.Uri.file(match[1])));
      }
    }
    return links;
  }
}
