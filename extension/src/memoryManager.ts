// Answers the memory manager's requests: approvals of its edits (a modal with the diff) and
// its questions to the user (a quick pick of its suggestions, or free text).
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ASK_USER, AskUserParams, AskUserReply, MEMORY_APPROVE } from "./protocol";
import type { ApprovalRequest, ApprovalResponse } from "./chatProtocol";

export function registerMemoryManagerHandlers(client: LanguageClient): void {
  client.onRequest(MEMORY_APPROVE, async (request: ApprovalRequest): Promise<ApprovalResponse> => {
    const choice = await vscode.window.showInformationMessage(
      `Memory manager: ${request.title}`,
      { modal: true, detail: request.diff ?? JSON.stringify(request.args, null, 2) },
      "Approve",
      "Approve All",
    );
    if (choice === "Approve") {
      return { outcome: "approve" };
    }
    return choice === "Approve All" ? { outcome: "approveAlways" } : { outcome: "deny" };
  });

  client.onRequest(ASK_USER, async (request: AskUserParams): Promise<AskUserReply> => {
    const options = request.options ?? [];
    if (options.length > 0) {
      const other = "Something else…";
      const picked = await vscode.window.showQuickPick([...options, other], {
        title: "Memory manager asks",
        placeHolder: request.question,
        ignoreFocusOut: true,
      });
      if (picked && picked !== other) {
        return { answer: picked };
      }
      if (!picked) {
        return { answer: null };
      }
    }
    const typed = await vscode.window.showInputBox({
      title: "Memory manager asks",
      prompt: request.question,
      ignoreFocusOut: true,
    });
    return { answer: typed ?? null };
  });
}
