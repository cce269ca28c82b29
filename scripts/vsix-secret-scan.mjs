// Scans every file of a staged extension folder for secrets and .env files with vsce's own
// rules (its secretLint module: @secretlint's recommended preset and no-dotenv, as `vsce
// package` runs them), in batches of BATCH files, each batch in a process of its own.
//
//   node scripts/vsix-secret-scan.mjs FOLDER
//
// Why not let vsce do it: vsce 3.9 scans all files in one secretlint engine, whose profiler
// looks through every earlier performance mark for each new one, so the scan grows with the
// square of the file count: most of the 421 s `vsce package` took for the 3,549 files of our
// package on a loaded machine (a CPU profile: @secretlint/profiler 51 %, perf.measure 17 %).
// In batches it is linear; scripts/package-vsix.sh runs this, then vsce with its own scan off.
// Exit 0: nothing found; 1: a secret or a .env file (each printed as vsce prints them); 2: the
// scan could not run.
import { spawn } from "node:child_process";
import { readdirSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const BATCH = 250;
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const secretLint = require(join(here, "..", "node_modules", "@vscode", "vsce", "out", "secretLint.js"));

if (process.argv[2] === "--batch") {
  // a child: scan the files listed in argv[3] (one per line), print the results as JSON
  const { readFileSync } = await import("node:fs");
  const files = readFileSync(process.argv[3], "utf8").split("\n").filter(Boolean);
  const result = await secretLint.lintFiles(files, true, true);
  process.stdout.write(JSON.stringify(result.ok ? [] : result.results));
  process.exit(0);
}

const folder = process.argv[2];
if (!folder) {
  console.error("usage: node scripts/vsix-secret-scan.mjs FOLDER");
  process.exit(2);
}
const files = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") walk(path);
    } else if (!/\.(jpg|jpeg|png|gif|svg)$/i.test(entry.name)) {  // as vsce skips them
      files.push(resolve(path));
    }
  }
};
walk(folder);

const started = Date.now();
const scratch = mkdtempSync(join(tmpdir(), "memlens-secret-scan-"));
const batches = [];
for (let i = 0; i < files.length; i += BATCH) batches.push(files.slice(i, i + BATCH));
const runBatch = (batch, index) => new Promise((done, fail) => {
  const list = join(scratch, `batch-${index}.txt`);
  writeFileSync(list, batch.join("\n"));
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--batch", list],
    { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk) => { out += chunk; });
  child.on("error", fail);
  child.on("close", (code) => {
    if (code !== 0) fail(new Error(`the scan of batch ${index + 1} exited ${code}`));
    else done(JSON.parse(out || "[]"));
  });
});
const found = [];
let next = 0;
const worker = async () => {
  while (next < batches.length) {
    const index = next++;
    found.push(...await runBatch(batches[index], index));
  }
};
try {
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), batches.length) }, worker));
} catch (error) {
  console.error(`vsix-secret-scan: ${error.message}`);
  process.exit(2);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (found.length > 0) {
  console.error("vsix-secret-scan: the package would contain secrets or .env files; remove them " +
    "(or add them to .vscodeignore) before packaging:");
  for (const result of found) console.error(secretLint.prettyPrintLintResult(result));
  process.exit(1);
}
console.log(`vsix-secret-scan: ${files.length} files, no secrets and no .env files ` +
  `(${batches.length} batches, ${seconds} s)`);
