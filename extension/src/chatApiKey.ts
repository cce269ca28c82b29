// Hands the Gemini API key from VS Code's SecretStorage to the language server, never logged.
import * as vscode from "vscode";
import { State, Trace } from "vscode-languageclient/node";
import { ApiKeyResult, SET_API_KEY } from "./chatProtocol";
import { MemlensClient } from "./client";
import { API_KEY_SECRET } from "./commands";

/**
 * Sends the key from SecretStorage (if any) to the server. The key is never logged: the
 * request is sent with the client's message trace off, whatever `memlens.trace.server` says.
 */
export async function sendApiKey(client: MemlensClient, secrets: vscode.SecretStorage): Promise<void> {
  const languageClient = client.client;
  if (!languageClient || languageClient.state !== State.Running) {
    return;
  }
  const key = await secrets.get(API_KEY_SECRET);
  if (!key) {
    return;
  }
  const traceSetting = vscode.workspace.getConfiguration("memlens").get<unknown>("trace.server", "off");
  const traced =
    (typeof traceSetting === "string" && traceSetting !== "off") ||
    (typeof traceSetting === "object" && traceSetting !== null);
  try {
    if (traced) {
      await languageClient.setTrace(Trace.Off);
    }
    await languageClient.sendRequest<ApiKeyResult>(SET_API_KEY, { key });
  } catch (error) {
    // The error comes from the server and never carries the request's parameters.
    const reason = error instanceof Error ? error.message : String(error);
    client.log.appendLine(`Chat: the server did not take the API key (${reason}).`);
  } finally {
    if (traced) {
      const verbosity =
        typeof traceSetting === "string"
          ? traceSetting
          : vscode.workspace.getConfiguration("memlens").get<string>("trace.server.verbosity", "off");
      await languageClient.setTrace(Trace.fromString(verbosity)).catch(() => undefined);
    }
  }
}
