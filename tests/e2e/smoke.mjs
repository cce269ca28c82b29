// Smoke test of the real VS Code: the workbench loads, the explorer lists the workspace, a
// file opens from the explorer with a click; screenshot in artifacts/e2e/smoke.png.
//
//   MEMLENS_VSCODE_URL=http://127.0.0.1:8080/?folder=... \
//   MEMLENS_WORKSPACE=examples/demo \            (optional: checks the names and content)
//   NODE_PATH=<cache>/playwright/node_modules <cache node 24> tests/e2e/smoke.mjs
//
// MEMLENS_SMOKE_FILE (default GEMINI.md) is the top-level file to open; MEMLENS_SMOKE_EXPECT a
// comma list of top-level names to wait for (default: the workspace's visible top level);
// MEMLENS_SMOKE_LANGUAGE the language mode the status bar must show for it (default Markdown
// for a .md file: proves the extension host runs; empty to skip).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { launch, openWorkbench, openFromExplorer, waitForLanguageMode, screenshot, log, TIMEOUT } from './lib/vscode.mjs';

const url = process.env.MEMLENS_VSCODE_URL;
if (!url) {
  console.error('smoke: set MEMLENS_VSCODE_URL to the code-server URL (scripts/vscode/start.sh prints it)');
  process.exit(2);
}
const workspace = process.env.MEMLENS_WORKSPACE ? path.resolve(process.env.MEMLENS_WORKSPACE) : null;
const file = process.env.MEMLENS_SMOKE_FILE || 'GEMINI.md';
let expect = (process.env.MEMLENS_SMOKE_EXPECT || '').split(',').map((s) => s.trim()).filter(Boolean);
let contains;
if (workspace) {
  if (!expect.length) {
    // VS Code's explorer hides nothing but its files.exclude defaults (.git and the like).
    expect = readdirSync(workspace).filter((n) => !['.git', '.svn', '.hg', '.DS_Store', 'Thumbs.db'].includes(n));
  }
  const p = path.join(workspace, file);
  if (existsSync(p)) {
    contains = readFileSync(p, 'utf8').split('\n').map((l) => l.trim()).find((l) => l.length >= 4);
    if (contains) contains = contains.slice(0, 40);
  }
}
if (!expect.includes(file)) expect.push(file);
const language = process.env.MEMLENS_SMOKE_LANGUAGE ?? (file.endsWith('.md') ? 'Markdown' : '');

// A stuck step still ends the run, with a screenshot of where it stood.
const WATCHDOG_MS = Math.max(3 * TIMEOUT, 300_000);
let session;
const watchdog = setTimeout(async () => {
  console.error(`smoke: FAILED: no result after ${WATCHDOG_MS / 1000} s`);
  if (session) await screenshot(session.page, 'smoke-failure').catch(() => {});
  process.exit(1);
}, WATCHDOG_MS);

let step = 'launch chromium';
const t0 = performance.now();
try {
  session = await launch('smoke');
  const { page } = session;
  log(`chromium up in ${((performance.now() - t0) / 1000).toFixed(1)} s; opening ${url}`);

  step = `wait for the workbench and the explorer (${expect.join(', ')})`;
  const t1 = performance.now();
  await openWorkbench(page, url, { expect });
  log(`workbench with explorer in ${((performance.now() - t1) / 1000).toFixed(1)} s`);

  step = `open ${file} from the explorer${contains ? ` and see "${contains}"` : ''}`;
  const t2 = performance.now();
  await openFromExplorer(page, file, { contains });
  log(`${file} open in ${((performance.now() - t2) / 1000).toFixed(1)} s`);

  if (language) {
    step = `wait for the language mode "${language}" (extension host)`;
    const t3 = performance.now();
    await waitForLanguageMode(page, language);
    log(`language mode ${language} in ${((performance.now() - t3) / 1000).toFixed(1)} s`);
  }

  step = 'screenshot';
  const shot = await screenshot(page, 'smoke');
  log(`screenshot: ${shot}`);
  await session.close();
  clearTimeout(watchdog);
  log(`smoke: OK in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  process.exit(0);
} catch (e) {
  console.error(`smoke: FAILED at step "${step}": ${e.message.split('\n')[0]}`);
  if (session) {
    const shot = await screenshot(session.page, 'smoke-failure').catch(() => null);
    if (shot) console.error(`smoke: screenshot of the failure: ${shot}`);
    await session.close();
  }
  process.exit(1);
}
