// Choosing the Python interpreter that runs the server bundled in the extension.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export interface Interpreter {
  command: string;
  source: string;
}

async function activeMsPythonEnvironment(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) {
    return undefined;
  }
  try {
    const api = (await extension.activate()) as {
      environments?: { getActiveEnvironmentPath(): { path: string } };
    };
    return api.environments?.getActiveEnvironmentPath().path;
  } catch {
    return undefined;
  }
}

/** memlens.python, else $MEMLENS_PYTHON, else ms-python's active environment, else python3. */
export async function chooseInterpreter(): Promise<Interpreter> {
  const configured = vscode.workspace.getConfiguration("memlens").get<string>("python", "").trim();
  if (configured) {
    return { command: configured, source: "setting memlens.python" };
  }
  const fromEnv = process.env.MEMLENS_PYTHON?.trim();
  if (fromEnv) {
    return { command: fromEnv, source: "environment variable MEMLENS_PYTHON" };
  }
  const msPython = await activeMsPythonEnvironment();
  if (msPython) {
    return { command: msPython, source: "the Python extension's active environment" };
  }
  return { command: "python3", source: "python3 on PATH" };
}

/**
 * How to run the server bundled in this extension: `<python> <extension>/server/launch.py
 * serve` (or another `memlens` subcommand: `mcp`). The launcher puts the bundled libraries
 * (bundled/libs) ahead of the interpreter's own, so nothing is installed and nothing runs
 * before the server itself; it says what to do (one "memlens-cannot-start:" line, exit status
 * 3) when the interpreter cannot load them. Byte-code goes to the extension's global storage,
 * never into the extension's folder. `extraEnv`: what the server needs on top of the editor's
 * environment; `env`: both.
 */
export function serverCommand(
  context: vscode.ExtensionContext,
  python: Interpreter,
  subcommand: "serve" | "mcp" = "serve",
): { command: string; args: string[]; env: NodeJS.ProcessEnv; extraEnv: Record<string, string> } {
  const pycache = path.join(context.globalStorageUri.fsPath, "pycache");
  try {
    fs.mkdirSync(pycache, { recursive: true });
  } catch {
    // Unwritable storage: Python then just does not cache byte-code there.
  }
  const extraEnv = { PYTHONPYCACHEPREFIX: pycache, PYTHONUNBUFFERED: "1" };
  return {
    command: python.command,
    args: [path.join(context.extensionPath, "server", "launch.py"), subcommand],
    env: { ...process.env, ...extraEnv },
    extraEnv,
  };
}

/** Earlier versions created a private virtual environment in global storage: remove it. */
export function removeOldEnvironments(context: vscode.ExtensionContext): void {
  const storage = context.globalStorageUri.fsPath;
  fs.readdir(storage, (error, names) => {
    if (error) {
      return;
    }
    for (const name of names.filter((n) => n.startsWith("venv-"))) {
      fs.rm(path.join(storage, name), { recursive: true, force: true }, () => undefined);
    }
  });
}
