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
// The markdown grammar names a grammar for fenced code in ~60 languages; the tests need none
// of them, and vscode-tmgrammar-test prints one "grammar not found" line for each it lacks.
// Those lines are counted into one; everything else it prints passes through.
const run = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const missing = new Set();
for (const [stream, text] of [[process.stdout, run.stdout], [process.stderr, run.stderr]]) {
  const kept = (text ?? "").split("\n").filter((line) => {
    const found = /^grammar not found for "([^"]+)"$/.exec(line.trim());
    if (found) missing.add(found[1]);
    return !found;
  });
  stream.write(kept.join("\n"));
}
if (missing.size > 0) {
  console.log(`(${missing.size} grammars for fenced code that the markdown grammar names are not loaded: ` +
    "code blocks in those languages stay unscoped, which these tests do not look at)");
}
if (run.error) console.error(`vscode-tmgrammar-test did not run: ${run.error.message}`);
process.exit(run.status ?? 1);
