// Status bar: memory files and characters loaded for the active editor's folder, and a short
// flash when opening a file loads memory just in time.
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { JitLoaded, SHOW, ShowResponse } from "./protocol";

export class MemoryStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("memlens.memory", vscode.StatusBarAlignment.Right, 100);
  private flashUntil = 0;

  constructor(private readonly client: MemlensClient) {
    this.item.name = "Memory Lens";
    this.item.command = "memlens.showMergedContext";
  }

  async update(): Promise<void> {
    if (Date.now() < this.flashUntil) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      this.item.hide();
      return;
    }
    const result = await this.client
      .request<ShowResponse>(SHOW, { uri: editor.document.uri.toString() })
      .catch(() => undefined);
    if (Date.now() < this.flashUntil) {
      // A JIT flash arrived while the server answered (opening a file sends didOpen, which
      // loads the memory, before this request): keep the flash; its end calls update() again.
      return;
    }
    if (!result) {
      this.item.hide();
      return;
    }
    this.item.text = `$(book) ${result.fileCount} memory file${result.fileCount === 1 ? "" : "s"} · ${result.content.length.toLocaleString()} chars`;
    this.item.tooltip = `Memory Lens (${result.mode} mode): what the agent reads at start-up in this workspace.\nClick to show the merged context.`;
    this.item.show();
  }

  flash(event: JitLoaded): void {
    const short = (file: { path: string }) => path.basename(path.dirname(file.path)) + "/" + path.basename(file.path);
    const claude = event.claude ?? [];
    this.item.text = event.files.length > 0
      ? `$(sparkle) +${event.files.length} memory loaded: ${event.files.map(short).join(", ")}`
      : `$(sparkle) Claude Code +${claude.length}: ${claude.map(short).join(", ")}`;
    this.item.show();
    this.flashUntil = Date.now() + 4000;
    setTimeout(() => {
      this.flashUntil = 0;
      void this.update();
    }, 4000);
  }

  dispose(): void {
    this.item.dispose();
  }
}
