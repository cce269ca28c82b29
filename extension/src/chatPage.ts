// The Chat view's page: the HTML that loads the webview script (media/chat/chat.js, built from
// extension/webview/) under a nonce'd Content-Security-Policy, and the check of what the page
// posts back (anything else is ignored).
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { APPROVAL_OUTCOMES, ApprovalOutcome, FromWebview } from "./chatProtocol";

export function isFromWebview(message: unknown): message is FromWebview {
  if (typeof message !== "object" || message === null) {
    return false;
  }
  const m = message as Record<string, unknown>;
  switch (m.type) {
    case "ready":
    case "cancel":
    case "setApiKey":
    case "chooseModel":
    case "chooseApprovalMode":
      return true;
    case "send":
      return typeof m.text === "string";
    case "openFile":
      return typeof m.path === "string";
    case "approval":
      return typeof m.requestId === "number" && APPROVAL_OUTCOMES.includes(m.outcome as ApprovalOutcome);
    default:
      return false;
  }
}

/** The page: media/chat/chat.css and chat.js from `root`, nothing else allowed. */
export function chatPageHtml(webview: vscode.Webview, root: vscode.Uri): string {
  const nonce = crypto.randomBytes(18).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(root, "chat.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(root, "chat.css"));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" nonce="${nonce}" href="${style.toString()}">
<title>Memory Lens Chat</title>
</head>
<body>
<div id="app" aria-label="Memory Lens Chat"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
