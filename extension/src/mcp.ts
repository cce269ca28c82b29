// `memlens mcp` (docs/mcp.md) registered with VS Code's MCP support, so chat in agent mode
// gets its tools without set-up: the interpreter and the bundled server the language server
// uses (python.ts), started in the first workspace folder (VS Code gives every folder as a
// root). Only in a trusted workspace: the server reads the repository's files, and an
// untrusted workspace's memlens.python is not ours to run.
import * as vscode from "vscode";
import { chooseInterpreter, serverCommand } from "./python";

/** The provider's id, as contributes.mcpServerDefinitionProviders in package.json names it. */
export const MCP_PROVIDER_ID = "memlens.mcp";
export const MCP_SERVER_LABEL = "Memory Lens";

/** Whether the running editor has the API (engines ^1.138 has it; a fork may not). */
function hasMcpApi(): boolean {
  return typeof (vscode.lm as Partial<typeof vscode.lm> | undefined)?.registerMcpServerDefinitionProvider === "function";
}

/** The server VS Code should start, or none (untrusted, or no folder open). */
export async function memlensMcpServer(
  context: vscode.ExtensionContext,
): Promise<vscode.McpStdioServerDefinition | undefined> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
  if (!vscode.workspace.isTrusted || !folder) {
    return undefined;
  }
  const server = serverCommand(context, await chooseInterpreter(), "mcp");
  const version = (context.extension.packageJSON as { version?: string }).version;
  const definition = new vscode.McpStdioServerDefinition(MCP_SERVER_LABEL, server.command, server.args, server.extraEnv, version);
  definition.cwd = folder.uri;
  return definition;
}

export function registerMcpServer(context: vscode.ExtensionContext, log: vscode.OutputChannel): void {
  if (!hasMcpApi()) {
    log.appendLine("[mcp] this editor has no MCP server API: set memlens mcp up by hand (docs/mcp.md)");
    return;
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: async () => {
      const server = await memlensMcpServer(context);
      log.appendLine(
        server
          ? `[mcp] offered to VS Code: ${server.command} ${server.args.join(" ")} in ${server.cwd?.fsPath ?? ""}`
          : "[mcp] not offered to VS Code: the workspace is not trusted or has no folder",
      );
      return server ? [server] : [];
    },
    // Asked again at start: the interpreter or the folders may have changed since.
    resolveMcpServerDefinition: async () => memlensMcpServer(context),
  };
  context.subscriptions.push(
    changed,
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider),
    vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("memlens.python")) {
        changed.fire();
      }
    }),
  );
  log.appendLine(`[mcp] registered with VS Code's MCP support (provider ${MCP_PROVIDER_ID})`);
}
