// Runs vscode-tmgrammar-test on syntaxes/test/*.test.md with VS Code's own markdown and YAML
// grammars (taken from the cached code-server, which scripts/vscode/install.sh installs).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..", "..");
const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
const extensions = join(cache, "memlens", "code-server-4.139.1", "code-server", "node_modules",
  "code-server", "lib", "vscode", "extensions");
const markdown = join(extensions, "markdown-basics", "syntaxes", "markdown.tmLanguage.json");
const yaml = join(extensions, "yaml", "syntaxes", "yaml.tmLanguage.json");
for (const grammar of [markdown, yaml]) {
  if (!existsSync(grammar)) {
    console.error(`grammar not found: ${grammar} (run scripts/vscode/install.sh first)`);
    process.exit(2);
  }
}
const ours = readdirSync(join(root, "syntaxes")).filter((f) => f.endsWith(".tmLanguage.json"))
  .map((f) => join(root, "syntaxes", f));
const tests = readdirSync(join(root, "syntaxes", "test")).filter((f) => f.endsWith(".test.md"))
  .map((f) => join(root, "syntaxes", "test", f));
const bin = join(root, "node_modules", ".bin", "vscode-tmgrammar-test");
const args = [...[markdown, yaml, ...ours].flatMap((g) => ["-g", g]), ...tests];
const run = spawnSync(bin, args, { stdio: "inherit" });
process.exit(run.status ?? 1);
