// "Verify What My Agents Read" (issue 20): memlens/verify runs each installed agent (Gemini
// CLI, Claude Code, Codex) offline on a copy of a workspace folder, against a local recording
// model on 127.0.0.1, and compares what it sent with Memory Lens's prediction. The server
// reports progress while the agents run; the answer is a one-line notification per run and,
// on demand (or at once when something differs), a read-only document with the diffs.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { chooseFolder } from "./folders";
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
// How long a request may take before its progress notification shows (see withQuietProgress).
const QUIET_MS = 500;

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
  // The user chose to go without a sandbox: the one line they read says so too.
  const unsandboxed = ran.some((a) => a.isolation && a.isolation !== "sandbox") ? " (run without a sandbox)" : "";
  return `${result.identical ? "Identical" : "Not identical"}${unsandboxed}: ${parts.join(", ")}`;
}

/** The modal's detail where no sandbox can run: what the sandbox would do, why there is none,
 * the risk of going without (docs/security.md, memlens verify's layers), and the folder. The
 * extension host runs where the language server and the agents run, so its platform is
 * theirs. */
export function noSandboxDetail(folder: string, platform: string = process.platform): string {
  const why =
    platform === "linux"
      ? "Here bubblewrap is missing or user namespaces are refused (to get it: apt-get install " +
        "bubblewrap, with user namespaces allowed)."
      : "Bubblewrap runs on Linux only: there is none on this system.";
  return (
    "Memory Lens runs your agents on a copy of this folder, normally inside a sandbox " +
    `(bubblewrap: no network, your HOME hidden, only the copy writable). ${why}\n\n` +
    "Without a sandbox the agents run as you: the copy's hooks and servers are still removed, " +
    "but a repository's files could make your agents run commands as you. Run them only on a " +
    "folder you trust.\n\n" +
    `Folder: ${folder}`
  );
}

/** `request` with the progress notification, shown only once it has taken longer than a
 * moment: the server refuses at once where no sandbox can run, and a "running your agents"
 * notification (VS Code keeps one for at least 0.8 s) would stay beside the modal that asks
 * whether to run them at all. */
async function withQuietProgress<T>(request: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = await Promise.race([
    request.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), QUIET_MS);
    }),
  ]);
  clearTimeout(timer);
  if (settled) {
    return request;
  }
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Memory Lens: running your agents offline…" },
    () => request,
  );
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
      if (!vscode.workspace.workspaceFolders?.length) {
        void vscode.window.showWarningMessage("Open a folder first: Memory Lens verifies what your agents read there.");
        return;
      }
      // The active editor's folder; in a multi-root window without one, the user picks.
      const folder = await chooseFolder("Verify what your agents read in…");
      if (!folder) {
        return;
      }
      const params: VerifyParams = { folder: folder.uri.fsPath, agents: [], unsandboxed: false };
      const run = () => withQuietProgress(client.request<VerifyResult>(VERIFY, params));
      let result: VerifyResult | undefined;
      try {
        result = await run();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (!message.includes(NO_SANDBOX)) {
          void vscode.window.showErrorMessage(`Memory Lens could not verify: ${message}`);
          return;
        }
        // No bubblewrap here: the user decides, told what the risk is, in a modal. The text is
        // the editor's own (the server's names the CLI's flag, which means nothing here).
        const picked = await vscode.window.showWarningMessage(
          "No sandbox can run your agents here.",
          { modal: true, detail: noSandboxDetail(folder.uri.fsPath) },
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
