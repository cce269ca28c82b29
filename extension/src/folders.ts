// Which workspace folder a request is about. Every request that works in a folder names it:
// in a window of several folders the server refuses one that names none, rather than guess
// (docs/reference.md, "Several workspace folders"). The folder is the active editor's; without
// one, the window's only folder; in a multi-root window without one, the folder the user picks.
import * as vscode from "vscode";

/** The workspace folder holding the active editor's file, else the window's only folder
 * (undefined: a multi-root window whose active editor is in none of its folders). */
export function activeFolder(): vscode.WorkspaceFolder | undefined {
  const document = vscode.window.activeTextEditor?.document;
  const holder = document ? vscode.workspace.getWorkspaceFolder(document.uri) : undefined;
  if (holder) {
    return holder;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  return folders.length === 1 ? folders[0] : undefined;
}

/** The folder a command works in: the one holding `resource` (when given), else
 * activeFolder(), else the one the user picks (undefined: no folder is open, or the pick was
 * dismissed). */
export async function chooseFolder(placeHolder: string, resource?: vscode.Uri): Promise<vscode.WorkspaceFolder | undefined> {
  const holder = resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
  const found = holder ?? activeFolder();
  if (found || (vscode.workspace.workspaceFolders ?? []).length < 2) {
    return found;
  }
  return vscode.window.showWorkspaceFolderPick({ placeHolder, ignoreFocusOut: true });
}

/** The `uri` a request about the active file's folder sends: the active file when a workspace
 * folder holds it (the server takes the deepest folder holding it), else the chosen folder's. */
export async function requestUri(placeHolder: string): Promise<string | undefined> {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.uri.scheme === "file" && vscode.workspace.getWorkspaceFolder(document.uri)) {
    return document.uri.toString();
  }
  return (await chooseFolder(placeHolder))?.uri.toString();
}
