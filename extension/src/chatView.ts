// The Chat view. The chat issue fills it; here it is a working empty state with a strict
// content security policy and VS Code's theme colours.
import * as crypto from "node:crypto";
import * as vscode from "vscode";

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = "memlens.chat";

  constructor(private readonly secrets: vscode.SecretStorage) {}

  async resolveWebviewView(view: vscode.WebviewView): Promise<void> {
    view.webview.options = { enableScripts: true, localResourceRoots: [] };
    const hasKey = Boolean(process.env.GEMINI_API_KEY) || Boolean(await this.secrets.get("memlens.geminiApiKey"));
    view.webview.html = this.html(hasKey);
    view.webview.onDidReceiveMessage(async (message: { type?: string }) => {
      if (message.type === "setApiKey") {
        await vscode.commands.executeCommand("memlens.setApiKey");
        view.webview.html = this.html(true);
      }
    });
  }

  private html(hasKey: boolean): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const body = hasKey
      ? `<p>Chat with an agent that uses exactly this workspace's memory is coming in the next release.</p>`
      : `<p>Set your Gemini API key to chat with an agent that uses this workspace's memory.</p>
         <button id="set-key">Set Gemini API Key</button>`;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
  body { color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 12px; }
  h2 { font-weight: 600; font-size: 1.1em; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 6px 12px; cursor: pointer; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  p { color: var(--vscode-descriptionForeground); }
</style>
</head>
<body>
  <h2>Memory Lens Chat</h2>
  ${body}
  <script nonce="${nonce}">
    const vscode = acquireVsCodeApi();
    const button = document.getElementById("set-key");
    if (button) { button.addEventListener("click", () => vscode.postMessage({ type: "setApiKey" })); }
  </script>
</body>
</html>`;
  }
}
