#!/usr/bin/env node
// Gemini CLI 0.43.0's own memory loader, driven from its npm bundle
// (docs/reference.md "Conformance with the real agents"): the same loadSettings -> loadCliConfig ->
// config.initialize() path its `skills list` command takes, then the memory the config holds,
// printed as JSON. No model server, no prompt: fast enough for a differential fuzzer.
//
//   node gemini043_loader.mjs [--bundle DIR] [--jit PATH]...      one run for process.cwd()
//   node gemini043_loader.mjs [--bundle DIR] --serve              JSON lines on stdin:
//        {"cwd": DIR, "home": DIR, "jit": [PATH, ...], "trustEnv": BOOL}  ->  one JSON line
//        per request; trustEnv false (default true) runs it without GEMINI_CLI_TRUST_WORKSPACE,
//        so HOME/.gemini/trustedFolders.json and the folder-trust setting decide
//
// HOME (and GEMINI_CLI_HOME, trust variables) come from the environment in the one-shot form;
// --serve sets HOME per request. The settings are the files Gemini CLI reads
// (HOME/.gemini/settings.json, the workspace's .gemini/settings.json).
//
// Output: {cwd, home, mode, memoryContent, flattened, systemInstructionMemory, sessionMemory,
//          fileCount, filePaths, jit: [{target, context}]}
//
// The functions are not exported by the bundle: a module-load hook appends an export line to
// the bundle's main module as Node loads it (the files on disk stay untouched).
import { register } from "node:module";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import os from "node:os";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const opts = { bundle: process.env.MEMLENS_GEMINI043_BUNDLE, serve: false, jit: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--bundle") opts.bundle = argv[++i];
    else if (a === "--serve") opts.serve = true;
    else if (a === "--jit") opts.jit.push(argv[++i]);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.bundle) {
    const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
    opts.bundle = path.join(
      cache, "memlens", "agents", "gemini-0.43.0", "node_modules", "@google", "gemini-cli", "bundle",
    );
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

// gemini.js imports its main module dynamically: `import("./gemini-XXXXXXXX.js")`.
const entry = readFileSync(path.join(opts.bundle, "gemini.js"), "utf8");
const mainName = /import\("\.\/(gemini-[A-Z0-9]+\.js)"\)/.exec(entry)?.[1];
if (!mainName) throw new Error(`no main module import found in ${opts.bundle}/gemini.js`);
const mainUrl = pathToFileURL(path.join(opts.bundle, mainName)).href;

// The settings loader caches by folder (stale in --serve, where a tree is rebuilt at the same
// path), and the user settings path is a module constant computed from HOME at import: the
// chunk that defines them also exports its uncached worker and a function that recomputes
// the path for the current HOME (built from the constant's own initialiser).
const hooks = `
let target;
export async function initialize(data) { target = data.target; }
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (result.format !== "module" || !url.startsWith("file:")) return result;
  let source = String(result.source);
  if (url === target) {
    source += "\\nexport { loadCliConfig as __memlensLoadCliConfig };\\n";
  }
  if (source.includes("\\nfunction _doLoadSettings(")) {
    const path = /\\nvar USER_SETTINGS_PATH = (.*);\\n/.exec(source)[1];
    const dir = /\\nvar USER_SETTINGS_DIR = (.*);\\n/.exec(source)[1];
    source += "\\nexport { _doLoadSettings as __memlensLoadSettings };\\n" +
      "export function __memlensRehome() { USER_SETTINGS_PATH = " + path +
      "; USER_SETTINGS_DIR = " + dir + "; }\\n";
  }
  if (source.includes("\\nfunction resetTrustedFoldersForTesting(")) {
    source += "\\nexport { resetTrustedFoldersForTesting as __memlensResetTrust };\\n";
  }
  result.source = source;
  return result;
}`;
register("data:text/javascript," + encodeURIComponent(hooks), { data: { target: mainUrl } });

// flattenMemory (what /memory show prints) is exported by one of the core chunks.
const flattenChunk = readdirSync(opts.bundle).find(
  (name) => name.startsWith("chunk-") &&
    readFileSync(path.join(opts.bundle, name), "utf8").includes("\nfunction flattenMemory("),
);

// The chunk the main module takes a name from.
const mainSource = readFileSync(path.join(opts.bundle, mainName), "utf8");
function chunkProviding(name) {
  const block = [...mainSource.matchAll(/import \{([^}]*)\} from "\.\/(chunk-[A-Z0-9]+\.js)"/g)]
    .find((m) => new RegExp(`\\b${name}\\b`).test(m[1]));
  if (!block) throw new Error(`${mainName} imports no ${name}`);
  return pathToFileURL(path.join(opts.bundle, block[2])).href;
}

const cli = await import(mainUrl);
const settingsModule = await import(chunkProviding("loadSettings"));
const names = await import(chunkProviding("setGeminiMdFilename"));
const { flattenMemory } = await import(pathToFileURL(path.join(opts.bundle, flattenChunk)).href);

// The trusted folders file is read once per process and real paths are cached: the chunk
// (one of those the main module imports) that defines them also exports their reset.
const trustChunk = [...mainSource.matchAll(/from "\.\/(chunk-[A-Z0-9]+\.js)"/g)]
  .map((m) => m[1])
  .find((name) => readFileSync(path.join(opts.bundle, name), "utf8")
    .includes("\nfunction resetTrustedFoldersForTesting("));
if (!trustChunk) throw new Error(`${mainName} imports no chunk defining the trusted folders`);
const trust = await import(pathToFileURL(path.join(opts.bundle, trustChunk)).href);

async function load(cwd, jitTargets) {
  process.chdir(cwd);
  trust.__memlensResetTrust();
  // What a fresh process starts with: the user settings of this HOME, the default context
  // file name (loadCliConfig keeps the previous name when the settings name none).
  settingsModule.__memlensRehome();
  names.setGeminiMdFilename("GEMINI.md");
  const settings = settingsModule.__memlensLoadSettings(path.resolve(cwd));
  const config = await cli.__memlensLoadCliConfig(
    settings.merged, "memlens-loader", { debug: false, prompt: "memlens" }, { cwd },
  );
  await config.initialize();
  const memory = config.getUserMemory();
  const fileCount = config.getGeminiMdFileCount();
  const filePaths = config.getGeminiMdFilePaths(); // before JIT adds to the loaded set
  const manager = config.getMemoryContextManager();
  const jit = [];
  for (const target of jitTargets) {
    const roots = [...config.getWorkspaceContext().getDirectories()];
    const resolved = path.resolve(cwd, target);
    // The scripted read is read_file's: its validation refuses a file the ignore files ignore
    // (its own FileDiscoveryService, the config's filtering options) before any memory loads.
    let refused = false;
    try {
      refused = statSync(resolved).isFile()
        && config.getFileService().shouldIgnoreFile(resolved, config.getFileFilteringOptions());
    } catch {
      refused = false; // a missing target: written, not read (write_file loads its memory)
    }
    const found = manager && !refused ? await manager.discoverContext(resolved, roots) : "";
    jit.push({
      target,
      context: found ? `\n\n--- Newly Discovered Project Context ---\n${found}\n--- End Project Context ---` : "",
    });
  }
  const systemMemory = config.getSystemInstructionMemory();
  return {
    cwd,
    home: os.homedir(),
    mode: config.isJitContextEnabled() ? "jit" : "classic",
    memoryContent: memory,
    flattened: flattenMemory(memory),
    systemInstructionMemory: systemMemory,
    sessionMemory: config.getSessionMemory(),
    fileCount,
    filePaths,
    jit,
  };
}

// Gemini CLI logs through console.*; stdout must carry only the JSON.
const out = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "error", "debug"]) {
  console[name] = (...args) => process.stderr.write(args.map(String).join(" ") + "\n");
}

if (opts.serve) {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let answer;
    try {
      const request = JSON.parse(line);
      process.env.HOME = request.home;
      if (request.trustEnv === false) delete process.env.GEMINI_CLI_TRUST_WORKSPACE;
      else process.env.GEMINI_CLI_TRUST_WORKSPACE = "true";
      answer = await load(request.cwd, request.jit ?? []);
    } catch (error) {
      answer = { error: String(error?.stack ?? error) };
    }
    out(JSON.stringify(answer) + "\n");
  }
  process.exit(0);
} else {
  out(JSON.stringify(await load(process.cwd(), opts.jit)) + "\n");
  process.exit(0);
}
