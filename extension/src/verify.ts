// "Verify What My Agents Read" (issue 20): memlens/verify runs each installed agent (Gemini
// CLI, Claude Code, Codex) offline on a copy of a workspace folder, against a local recording
// model on 127.0.0.1, and compares what it sent with Memory Lens's prediction. The server
// reports progress while the agents run; the answer is a one-line notification per run and,
// on demand (or at once when something differs), a read-only document with the diffs.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { AgentVerification, VerifyParams, VerifyResult } from "./generated/protocol";

export const VERIFY = "memlens/verify";
export const VERIFY_SCHEME = "memlens-verify";
const RESTRICTED =
  "Restricted Mode: Memory Lens runs your agents only in a trusted workspace, since they run on " +
  "the folder's own files (sandboxed, its hooks and servers removed). Nothing was run.";
// The server's refusal where no sandbox can run (memlens.verify.run.NO_SANDBOX).
const NO_SANDBOX = "no sandbox can run here";
const RUN_UNSANDBOXED = "Run Without a Sandbox";
const MANAGE_TRUST = "Manage Workspace Trust";

/** The report document: one section per agent, each differing payload as a unified diff. */
export function verifyReport(result: VerifyResult): string {
  const lines = [`Memory Lens: what your agents read in ${result.path}`, ""];
  for (const agent of result.agents) {
    lines.push(`${agent.label}: ${agent.message}${where(agent)}`);
    for (const payload of agent.payloads) {
      lines.push(`  ${payload.name}: ${payload.identical ? "identical" : "differs"}`);
    }
    for (const note of agent.notes) {
      lines.push(`  note: ${note}`);
    }
    for (const payload of agent.payloads.filter((p) => !p.identical)) {
      lines.push("", payload.diff.trimEnd());
    }
    lines.push("");
  }
  return lines.join("\n");
}

function where(agent: AgentVerification): string {
  if (!agent.isolation) {
    return "";
  }
  const offline =
    agent.isolation === "sandbox"
      ? "sandboxed: no network, HOME hidden, only the copy writable"
      : agent.isolation === "network-namespace"
        ? "UNSANDBOXED: network cut, nothing else"
        : "UNSANDBOXED: offline flags, model on 127.0.0.1";
  return ` (${offline}${agent.read ? `, read ${agent.read}` : ""})`;
}

export function summary(result: VerifyResult): string {
  const ran = result.agents.filter((a) => a.status === "identical" || a.status === "differs");
  if (ran.length === 0) {
    return `Memory Lens could not verify: ${result.agents.map((a) => a.message).join("; ")}`;
  }
  const parts = result.agents.map((a) => `${a.label} ${a.status === "identical" ? "identical" : a.status === "differs" ? "differs" : a.status}`);
  return `${result.identical ? "Identical" : "Not identical"}: ${parts.join(", ")}`;
}

export function registerVerify(context: vscode.ExtensionContext, client: MemlensClient): void {
  const reports = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => reports.get(uri.path) ?? "",
  };
  context.subscriptions.push(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(VERIFY_SCHEME, provider),
    vscode.commands.registerCommand("memlens.verifyAgents", async () => {
      if (!vscode.workspace.isTrusted) {
        // Offered in the palette all the same (a command disabled there is simply missing):
        // the answer says why it does not run and how to change that. The server refuses an
        // untrusted folder too.
        const picked = await vscode.window.showWarningMessage(RESTRICTED, MANAGE_TRUST);
        if (picked === MANAGE_TRUST) {
          await vscode.commands.executeCommand("workbench.trust.manage");
        }
        return;
      }
      const folders = vscode.workspace.workspaceFolders ?? [];
      if (folders.length === 0) {
        void vscode.window.showWarningMessage("Open a folder first: Memory Lens verifies what your agents read there.");
        return;
      }
      const folder =
        folders.length === 1
          ? folders[0]
          : await vscode.window.showWorkspaceFolderPick({ placeHolder: "Verify what your agents read in…" });
      if (!folder) {
        return;
      }
      const params: VerifyParams = { folder: folder.uri.fsPath, agents: [], unsandboxed: false };
      const run = () =>
        vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: "Memory Lens: running your agents offline…",
          },
          () => client.request<VerifyResult>(VERIFY, params),
        );
      let result: VerifyResult | undefined;
      try {
        result = await run();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (!message.includes(NO_SANDBOX)) {
          void vscode.window.showErrorMessage(`Memory Lens could not verify: ${message}`);
          return;
        }
        // No bubblewrap here: the user decides, told what the risk is, in a modal.
        const picked = await vscode.window.showWarningMessage(
          `Memory Lens found no sandbox to run your agents in: ${message.replace(/: --unsafe.*$/, "")}.`,
          { modal: true, detail: `Folder: ${folder.uri.fsPath}` },
          RUN_UNSANDBOXED,
        );
        if (picked !== RUN_UNSANDBOXED) {
          return;
        }
        params.unsandboxed = true;
        try {
          result = await run();
        } catch (again) {
          void vscode.window.showErrorMessage(
            `Memory Lens could not verify: ${again instanceof Error ? again.message : String(again)}`,
          );
          return;
        }
      }
      if (!result) {
        return;
      }
      const uri = vscode.Uri.from({ scheme: VERIFY_SCHEME, path: `/${folder.name} — verification.diff` });
      reports.set(uri.path, verifyReport(result));
      changed.fire(uri);
      const show = async () => {
        const document = await vscode.workspace.openTextDocument(uri);
        await vscode.languages.setTextDocumentLanguage(document, "diff");
        await vscode.window.showTextDocument(document, { preview: true });
      };
      if (!result.identical && result.agents.some((a) => a.status === "differs")) {
        await show();
        void vscode.window.showWarningMessage(summary(result));
        return;
      }
      const notify = result.identical ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
      const picked = await notify(summary(result), "Show Report");
      if (picked === "Show Report") {
        await show();
      }
    }),
  );
}
