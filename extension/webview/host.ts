// The webview's one channel to the extension (extension/src/chatView.ts). VS Code lets a webview
// acquire its API once, so every module that posts a message imports it from here.
import type { FromWebview } from "../src/chatProtocol";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export const vscode = acquireVsCodeApi();
