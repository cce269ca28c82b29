// Choosing the Python interpreter that runs the server, and the private environment that is
// created on first use when that interpreter lacks the `memlens` package.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export interface Interpreter {
  command: string;
  source: string;
}

function run(command: string, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} ${args.join(" ")}: ${stderr.trim() || error.message}`));
      } else {
        resolve(stdout);
      }
    });
  });
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

async function hasServer(python: string): Promise<boolean> {
  try {
    await run(python, ["-c", "import memlens.lsp.server"], 30_000);
    return true;
  } catch {
    return false;
  }
}

async function supportsMemlens(python: string): Promise<void> {
  const version = await run(python, ["-c", "import sys; print(sys.version_info >= (3, 11))"], 30_000);
  if (version.trim() !== "True") {
    throw new Error(`${python} is older than Python 3.11, which Memory Lens needs`);
  }
}

/**
 * An interpreter that can run `python -m memlens serve`: the chosen one when it has the
 * package, else a private virtual environment in the extension's storage, created from the
 * chosen interpreter and the server bundled in the extension (with a progress notification).
 */
export async function ensureServerPython(
  context: vscode.ExtensionContext,
  chosen: Interpreter,
  log: vscode.OutputChannel,
): Promise<string> {
  if (await hasServer(chosen.command)) {
    return chosen.command;
  }
  await supportsMemlens(chosen.command);
  const venv = path.join(context.globalStorageUri.fsPath, `venv-${context.extension.packageJSON.version}`);
  const venvPython = path.join(venv, "bin", "python");
  if (fs.existsSync(venvPython) && (await hasServer(venvPython))) {
    return venvPython;
  }
  await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: "Memory Lens: installing its language server (first run)",
      cancellable: false,
    },
    async (progress) => {
      fs.mkdirSync(path.dirname(venv), { recursive: true });
      progress.report({ message: `creating a private environment with ${chosen.command}` });
      log.appendLine(`Creating ${venv} with ${chosen.command}`);
      await run(chosen.command, ["-m", "venv", venv]);
      progress.report({ message: "installing the memlens package and its dependencies" });
      const output = await run(venvPython, ["-m", "pip", "install", "--disable-pip-version-check", context.extensionPath], 600_000);
      log.appendLine(output);
    },
  );
  return venvPython;
}
