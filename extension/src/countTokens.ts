// "Count exactly" (issue 14): memlens/countTokens asks the model itself (the Gemini API's
// countTokens, through the server with the chat's key) how many tokens the memory the line-1
// code lens measures takes, beside Gemini CLI's estimate. No counting happens here.
import * as vscode from "vscode";
import { MemlensClient } from "./client";
import { CountTokensResponse } from "./generated/protocol";

export const COUNT_TOKENS = "memlens/countTokens";

export function registerCountTokens(context: vscode.ExtensionContext, client: MemlensClient): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("memlens.countTokens", async (arg?: unknown) => {
      const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
      if (!uri) {
        void vscode.window.showWarningMessage("Open a memory file first.");
        return;
      }
      try {
        const result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Window, title: "Counting tokens with the model…" },
          () => client.request<CountTokensResponse>(COUNT_TOKENS, { uri: uri.toString() }),
        );
        if (!result) {
          return;
        }
        if (result.error || result.tokens === null || result.tokens === undefined) {
          // The model was not asked (no API key, the API failed): say why, offer the key.
          const message = result.error ?? "The model did not answer.";
          const action = message.includes("API key") ? "Set Gemini API Key" : undefined;
          const picked = await vscode.window.showErrorMessage(message, ...(action ? [action] : []));
          if (picked === action && action) {
            await vscode.commands.executeCommand("memlens.setApiKey");
          }
          return;
        }
        const n = (value: number) => value.toLocaleString("en-US");
        // The figures first, so a one-line notification toast shows them; the README says what
        // each means.
        void vscode.window.showInformationMessage(
          `Tokens: ${n(result.tokens)} exact, ~${n(result.estimate)} estimated by Gemini CLI (${result.model})`,
        );
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const action = message.includes("API key") ? "Set Gemini API Key" : undefined;
        const picked = await vscode.window.showErrorMessage(message, ...(action ? [action] : []));
        if (picked === action && action) {
          await vscode.commands.executeCommand("memlens.setApiKey");
        }
      }
    }),
  );
}
