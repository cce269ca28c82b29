// "Show changes" after a save that changes what an agent reads (issue 14): the server sends
// memlens/contextChanged (which agents, which folders, a summary); this shows the summary and
// opens VS Code's diff editor on two read-only virtual documents, the texts the agent sends
// at start before and after (memlens/contextDiff). Several changes: a quick pick first. No
// memory logic here: the server decides what changed and words the titles.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import type { ContextChangedEvent, ContextChangeEntry, ContextDiffParams, ContextDiffResult } from "./generated/protocol";

export const CONTEXT_CHANGED = "memlens/contextChanged";
export const CONTEXT_DIFF = "memlens/contextDiff";
export const DIFF_SCHEME = "memlens-context-diff";
const SHOW_CHANGES = "Show changes";

type Side = "before" | "after";

interface DiffQuery {
  agent: string;
  folder: string;
  side: Side;
  serial: number;
}

export class ContextDiffProvider implements vscode.TextDocumentContentProvider {
  /** Each change's texts, asked once for both sides (by agent, folder and serial). */
  private readonly results = new Map<string, Promise<ContextDiffResult | undefined>>();
  private serial = 0;

  constructor(private readonly client: MemlensClient) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = JSON.parse(uri.query) as DiffQuery;
    const result = await this.fetch(query);
    if (!result) {
      return "Memory Lens: the server is not running.";
    }
    return query.side === "before" ? result.before : result.after;
  }

  /** Ask the server for one change's before/after texts (a failure is shown, then thrown). */
  private fetch(query: DiffQuery): Promise<ContextDiffResult | undefined> {
    const key = `${query.serial}\n${query.agent}\n${query.folder}`;
    let result = this.results.get(key);
    if (!result) {
      const params: ContextDiffParams = { agent: query.agent, folder: query.folder };
      result = this.client.request<ContextDiffResult>(CONTEXT_DIFF, params);
      this.results.set(key, result);
    }
    return result;
  }

  /** Open the diff editor on what `change`'s agent sends at start, before ↔ after. */
  async show(change: ContextChangeEntry): Promise<void> {
    this.serial += 1;
    const base: Omit<DiffQuery, "side"> = { agent: change.agent, folder: change.folder, serial: this.serial };
    const result = await this.fetch({ ...base, side: "before" });
    if (!result) {
      return;
    }
    const name = `${change.agentLabel} in ${change.relativeFolder === "." ? "root" : change.relativeFolder}`;
    const uri = (side: Side): vscode.Uri =>
      vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${name} (${side})`, query: JSON.stringify({ ...base, side }) });
    await vscode.commands.executeCommand("vscode.diff", uri("before"), uri("after"), result.title, { preview: true });
  }

  /** The notification: the summary, and "Show changes" (a quick pick when several). */
  async changed(event: ContextChangedEvent): Promise<void> {
    const pick = await vscode.window.showInformationMessage(`Memory Lens: ${event.summary}.`, SHOW_CHANGES);
    if (pick !== SHOW_CHANGES || event.changes.length === 0) {
      return;
    }
    let change: ContextChangeEntry | undefined = event.changes[0];
    if (event.changes.length > 1) {
      const items = event.changes.map((entry) => ({
        label: `${entry.agentLabel}: ${entry.relativeFolder === "." ? "workspace folder" : `${entry.relativeFolder}/`}`,
        description: `+${entry.added} −${entry.removed} lines`,
        detail: entry.folder,
        entry,
      }));
      const chosen = await vscode.window.showQuickPick(items, {
        title: `${event.triggerName}: what changes for each agent and folder`,
        placeHolder: "Show the change in what this agent reads in this folder",
      });
      change = chosen?.entry;
    }
    if (change) {
      await this.show(change);
    }
  }
}

/** Register the document provider and the notification handler (on every client start). */
export function registerContextDiff(context: vscode.ExtensionContext, client: MemlensClient): void {
  const provider = new ContextDiffProvider(client);
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, provider));
  client.onStarted((languageClient) => {
    languageClient.onNotification(CONTEXT_CHANGED, (event: ContextChangedEvent) => void provider.changed(event));
  });
}
