// Add Memory: a fact and where it goes (Gemini CLI's global or project memory, or Claude Code's
// auto memory: then a type too; the pick names the real file, from the server), then the
// change in VS Code's diff editor (the current file vs a read-only virtual document holding
// the proposed text) with Save / Cancel in the editor title and in a notification. Nothing is
// written until Save; the server writes (and re-reads the file) exactly as save_memory does.
// A Claude Code memory folder that the repository's own settings chose (autoMemoryDirectory in
// the workspace's .claude/settings.json) is written only after a modal names it and the user
// answers "Write there"; the server refuses it otherwise (docs/security.md).
import * as path from "node:path";
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { requestUri } from "./folders";
import { ADD_MEMORY, AddMemoryParams, AddMemoryResult } from "./protocol";

export const PROPOSED_SCHEME = "memlens-proposed";

type Decision = "save" | "cancel";

/** The proposed texts, by the URI the diff editor shows on its right (and empty "current"
 * texts for a file that does not exist yet, on its left). */
class ProposedContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}

const WRITE_THERE = "Write there";

/** The settings file that chose the folder, as short as it can be said (relative to its
 * workspace folder): the picker's row is one line, and an absolute path pushed the words that
 * matter ("you will be asked to confirm") out of view. The modal names it in full. */
function settingsName(chosenIn: string | null | undefined): string {
  if (!chosenIn) {
    return "project settings";
  }
  return path.isAbsolute(chosenIn) ? vscode.workspace.asRelativePath(chosenIn) : chosenIn;
}

/** The modal for a Claude Code memory folder the repository chose: the folder the user
 * confirmed (to send back as `confirmedFolder`), or undefined. */
async function confirmRepositoryFolder(result: AddMemoryResult): Promise<string | undefined> {
  const folder = result.memoryFolder;
  if (!folder) {
    return undefined;
  }
  const pick = await vscode.window.showWarningMessage(
    `The repository chose where Claude Code's memory is written: ${folder}`,
    {
      modal: true,
      detail:
        `This folder is named by autoMemoryDirectory in ${result.chosenIn ?? "the project settings"}, ` +
        "a settings file inside the workspace (a cloned repository can commit it), not by your own " +
        "settings. Memory Lens writes MEMORY.md and a topic file there only if you say so.",
    },
    WRITE_THERE,
  );
  return pick === WRITE_THERE ? folder : undefined;
}

export function registerAddMemory(
  context: vscode.ExtensionContext,
  client: MemlensClient,
  afterRefresh: () => void,
): void {
  const proposed = new ProposedContent();
  let pending: ((decision: Decision) => void) | undefined;
  let serial = 0;
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, proposed),
    vscode.commands.registerCommand("memlens.addMemory.save", () => pending?.("save")),
    vscode.commands.registerCommand("memlens.addMemory.cancel", () => pending?.("cancel")),
  );

  const serverDown = () => void vscode.window.showErrorMessage("The Memory Lens server is not running.", "Show Logs")
    .then((pick) => pick && vscode.commands.executeCommand("memlens.showLogs"));

  context.subscriptions.push(vscode.commands.registerCommand("memlens.addMemory", async () => {
    const fact = await vscode.window.showInputBox({
      title: "Add Memory",
      prompt: "A fact the agent should remember",
      placeHolder: "e.g. Run the tests with `make test`",
    });
    if (!fact) {
      return;
    }
    // The folder of the file being edited (its project memory, its settings: file names),
    // or in a multi-root window without one, the folder the user picks.
    const uri = await requestUri("Add the memory for the folder…");
    if (uri === undefined && (vscode.workspace.workspaceFolders ?? []).length > 1) {
      return;
    }
    // Where each choice writes, as the server resolves it (HOME may not be ~): Gemini CLI's
    // two scopes, and Claude Code's auto memory (a topic file and its line in MEMORY.md).
    const previews = await Promise.all(
      [{ scope: "global" }, { scope: "project" }, { agent: "claude" }].map((choice) =>
        client.request<AddMemoryResult>(ADD_MEMORY, { fact, ...choice, preview: true, uri }).catch(() => undefined),
      ),
    );
    if (previews.some((p) => p === undefined)) {
      serverDown();
      return;
    }
    const [globalPreview, projectPreview, claudePreview] = previews as AddMemoryResult[];
    const scope = await vscode.window.showQuickPick(
      [
        { label: "Global", description: globalPreview.path, detail: "Loaded in every workspace", value: { scope: "global" } as Omit<AddMemoryParams, "fact">, preview: globalPreview },
        { label: "Project (private)", description: projectPreview.path, detail: "Your private memory for this project (outside the repository)", value: { scope: "project" } as Omit<AddMemoryParams, "fact">, preview: projectPreview },
        {
          label: "Claude Code (auto memory)",
          description: claudePreview.success
            ? claudePreview.path
            : claudePreview.needsConfirmation
              ? (claudePreview.memoryFolder ?? "")
              : "not available",
          detail: claudePreview.success
            ? `A topic file and its line in ${claudePreview.indexPath}: Claude Code reads it when relevant`
            : claudePreview.needsConfirmation
              ? `$(warning) Chosen by the repository (${settingsName(claudePreview.chosenIn)}): you will be asked to confirm`
              : claudePreview.message,
          value: { agent: "claude" } as Omit<AddMemoryParams, "fact">,
          preview: claudePreview,
        },
      ],
      { title: "Where should it be saved?" },
    );
    if (!scope) {
      return;
    }
    let preview = scope.preview;
    let params: AddMemoryParams = { fact, ...scope.value, uri };
    if (preview.needsConfirmation) {
      // The repository chose the folder: nothing is read or written there until the user says
      // so; then the server is asked again with that folder confirmed.
      const confirmedFolder = await confirmRepositoryFolder(preview);
      if (!confirmedFolder) {
        return;
      }
      params = { ...params, confirmedFolder };
      const again = await client.request<AddMemoryResult>(ADD_MEMORY, { ...params, preview: true }).catch(() => undefined);
      if (!again) {
        serverDown();
        return;
      }
      preview = again;
    }
    if (!preview.success) {
      void vscode.window.showErrorMessage(preview.message);
      return;
    }
    if (params.agent === "claude") {
      // Its type (the server lists them), then the preview again with it and the name it
      // chose, so that what is saved is what was shown.
      const kind = await vscode.window.showQuickPick(preview.memoryTypes ?? [], {
        title: `The memory's type (${preview.name})`,
        placeHolder: preview.memoryType ?? undefined,
      });
      if (!kind) {
        return;
      }
      params = { ...params, memoryType: kind, name: preview.name };
      const typed = await client.request<AddMemoryResult>(ADD_MEMORY, { ...params, preview: true }).catch(() => undefined);
      if (!typed) {
        serverDown();
        return;
      }
      if (!typed.success) {
        void vscode.window.showErrorMessage(typed.message);
        return;
      }
      preview = typed;
    }
    if (preview.managed) {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Memory manager: routing your memory…" },
        () => client.request<AddMemoryResult>(ADD_MEMORY, params),
      );
      if (!result) {
        serverDown();
      } else if (result.needsKey) {
        const pick = await vscode.window.showWarningMessage(result.message, "Set Gemini API Key");
        if (pick) {
          await vscode.commands.executeCommand("memlens.setApiKey");
        }
      } else if (result.success) {
        void vscode.window.showInformationMessage(result.message);
        afterRefresh();
      } else {
        void vscode.window.showErrorMessage(result.message);
      }
      return;
    }

    // The diff: the file as it is (an empty virtual document when it does not exist yet) vs
    // the proposed text. Both sides are read-only for this command; the file is untouched.
    const id = ++serial;
    const name = path.basename(preview.path);
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: preview.path, query: `proposed=${id}` });
    proposed.set(right, preview.proposed ?? "");
    let left = vscode.Uri.file(preview.path);
    try {
      await vscode.workspace.fs.stat(left);
    } catch {
      left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: preview.path, query: `current=${id}` });
      proposed.set(left, "");
    }
    pending?.("cancel");
    let settle: (decision: Decision) => void = () => undefined;
    const decision = new Promise<Decision>((resolve) => {
      settle = resolve;
    });
    pending = settle;
    await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ with your memory (Add Memory)`, {
      preview: true,
    });
    // A notification that goes away by itself once the choice is made (a message with buttons
    // would stay behind after Save in the editor title); its Cancel cancels. (Diff editors show
    // no code lenses by default, so the actions are in the editor title.)
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Review the memory for ${preview.path}${preview.indexLine ? ` (and its line in MEMORY.md: ${preview.indexLine})` : ""}, then Save Memory (✓) or Cancel (✕) in the editor title`,
        cancellable: true,
      },
      (_progress, token) => {
        token.onCancellationRequested(() => settle("cancel"));
        return decision;
      },
    );
    const closed = vscode.window.tabGroups.onDidChangeTabs((event) => {
      const gone = event.closed.some(
        (tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === right.toString(),
      );
      if (gone) {
        settle("cancel");
      }
    });
    const choice = await decision;
    if (pending === settle) {
      pending = undefined;
    }
    closed.dispose();
    // Close the diff editor (save or cancel), then forget the proposed text.
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === right.toString()) {
          await vscode.window.tabGroups.close(tab);
        }
      }
    }
    proposed.delete(right);
    if (left.scheme === PROPOSED_SCHEME) {
      proposed.delete(left);
    }
    if (choice !== "save") {
      return;
    }
    const saved = await client.request<AddMemoryResult>(ADD_MEMORY, params);
    if (!saved) {
      serverDown();
    } else if (saved.needsConfirmation) {
      // The settings moved the folder since it was confirmed: never written without asking.
      void vscode.window.showErrorMessage(`${saved.message} Add the memory again to choose.`);
    } else if (saved.success) {
      void vscode.window.showInformationMessage(saved.message, "Open File").then((pick) => {
        if (pick) {
          void vscode.window.showTextDocument(vscode.Uri.file(saved.path));
        }
      });
      afterRefresh();
    } else {
      void vscode.window.showErrorMessage(saved.message);
    }
  }));
}
