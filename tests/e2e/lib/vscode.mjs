// Helpers for the end-to-end tests: Debian's chromium driven by playwright-core against a
// code-server started by scripts/vscode/start.sh (docs/reference.md "Set-up in detail").
//
// playwright-core is found, in order, in $MEMLENS_PLAYWRIGHT_NODE_PATH, on NODE_PATH / a local
// node_modules, then in the cache scripts/vscode/install.sh fills.
//
// A scenario test is `await runScenario(name, async ({ page, step, cleanup }) => { ... })`: it
// opens `workbenchUrl(folder)` (one code-server serves any folder; each browser window gets its
// own extension host and language server), names each wait with step(), saves
// ARTIFACTS/<name>.png itself and gets ARTIFACTS/<name>-failure.png when it fails. Tests that
// change files work on copyWorkspace(). MEMLENS_E2E_DEBUG=1 logs more (hover attempts).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import {
  mkdtempSync, mkdirSync, rmSync, writeFileSync, appendFileSync, cpSync, realpathSync, existsSync, readFileSync,
  readdirSync,
} from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ARTIFACTS = path.resolve(process.env.MEMLENS_E2E_ARTIFACTS || path.join(REPO, 'artifacts/e2e'));

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// Generous defaults: the first workbench load on a busy 2-core machine can take a while.
export const TIMEOUT = Number(process.env.MEMLENS_E2E_TIMEOUT_MS || 120_000);

export function loadPlaywright() {
  const tried = [];
  const candidates = [];
  if (process.env.MEMLENS_PLAYWRIGHT_NODE_PATH) {
    candidates.push(path.join(process.env.MEMLENS_PLAYWRIGHT_NODE_PATH, 'playwright-core'));
  }
  candidates.push('playwright-core');
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'memlens');
  candidates.push(path.join(cache, `code-server-${process.env.MEMLENS_CODE_SERVER_VERSION || '4.139.1'}`,
    'playwright/node_modules/playwright-core'));
  for (const c of candidates) {
    try { return require(c); } catch (e) { tried.push(`${c}: ${e.code || e.message}`); }
  }
  throw new Error(`playwright-core not found (run scripts/vscode/install.sh); tried:\n  ${tried.join('\n  ')}`);
}

export function log(...args) {
  const t = ((performance.now()) / 1000).toFixed(1).padStart(6);
  console.log(`[${t} s]`, ...args);
}

// Launches headless Debian chromium with a fresh profile; returns { browser, context, page, close }.
// Page console errors and crashes go to ARTIFACTS/<name>-console.log.
export async function launch(name, { viewport = { width: 1600, height: 1000 } } = {}) {
  const { chromium } = loadPlaywright();
  const profile = mkdtempSync(path.join(tmpdir(), 'memlens-chromium-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  const consoleLog = path.join(ARTIFACTS, `${name}-console.log`);
  writeFileSync(consoleLog, '');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.MEMLENS_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    timeout: TIMEOUT,
  });
  context.setDefaultTimeout(TIMEOUT);
  const page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') appendFileSync(consoleLog, `[${m.type()}] ${m.text()}\n`);
  });
  page.on('pageerror', (e) => appendFileSync(consoleLog, `[pageerror] ${e.stack || e}\n`));
  page.on('crash', () => appendFileSync(consoleLog, '[crash] page crashed\n'));
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, close };
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, timeout: 30_000 });
  return file;
}

const exact = (s) => new RegExp(`^\\s*${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);

// The explorer row of a file or folder shown at the top level (or any expanded level).
export function explorerRow(page, name) {
  return page.locator('.explorer-folders-view .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exact(name) }) })
    .first();
}

// Opens the code-server URL and waits for the workbench and a populated explorer.
export async function openWorkbench(page, url, { expect = [] } = {}) {
  // Two page loads at most: once in CI (a loaded machine) a workspace opened from a
  // .code-workspace file never showed its explorer rows, whatever was pressed, for 90 s; the
  // state of that load is kept as a screenshot and the workbench is loaded again.
  for (let load = 1; ; load++) {
    try {
      await loadWorkbench(page, url);
      break;
    } catch (e) {
      if (load >= 2) throw e;
      const seen = await screenshot(page, `explorer-missing-${Date.now()}`).catch(() => 'none');
      console.log(`openWorkbench: no explorer rows after load ${load} (screenshot: ${seen}): loading the workbench again`);
    }
  }
  for (const name of expect) await explorerRow(page, name).waitFor({ state: 'visible' });
}

async function loadWorkbench(page, url) {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible' });
  const rows = page.locator('.explorer-folders-view .monaco-list-row');
  try {
    await rows.first().waitFor({ state: 'visible', timeout: Math.min(TIMEOUT, 30_000) });
  } catch {
    // Explorer not showing (a new workspace may open with the side bar hidden): View: Show
    // Explorer (Ctrl+Shift+E) shows it — unlike a click on the activity bar, which toggles it
    // and can hide a side bar that was just appearing. Pressed again until the rows show.
    for (let attempt = 0; ; attempt++) {
      await page.keyboard.press('Control+Shift+E');
      try {
        await rows.first().waitFor({ state: 'visible', timeout: 10_000 });
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
  }
}

// Clicks a file in the explorer and waits for its editor tab to be active with text in it.
export async function openFromExplorer(page, name, { contains } = {}) {
  await explorerRow(page, name).click();
  // The tab's label splits name and suffix ("GEMINI" + ".md"); its data attribute doesn't.
  await page.locator(`.editor-group-container.active .tabs-container .tab.active[data-resource-name="${name}"]`)
    .first().waitFor({ state: 'visible' });
  const editor = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
  await editor.waitFor({ state: 'visible' });
  if (contains) {
    await page.waitForFunction(
      ([sel, text]) => {
        const el = document.querySelector(sel);
        return !!el && el.textContent.replace(/\u00a0/g, ' ').includes(text);
      },
      ['.editor-group-container.active .monaco-editor .view-lines', contains],
      { timeout: TIMEOUT },
    );
  }
  return editor;
}

// Waits until the status bar's language-mode item names `language` (e.g. "Markdown"): language
// ids come from extensions, so this also shows the extension host is up.
export async function waitForLanguageMode(page, language) {
  await page.locator('[id="status.editor.mode"]', { hasText: exact(language) }).first()
    .waitFor({ state: 'visible' });
}

// ------------------------------------------------------------------------------------------
// Scenario harness and workbench helpers shared by the scenario tests (definition.mjs, ...).
// Every wait below is event-based (a DOM condition polled by playwright) with a time-out.
// ------------------------------------------------------------------------------------------

// The folder code-server was started on (run-e2e.sh passes MEMLENS_WORKSPACE), else the demo.
export function sourceWorkspace() {
  return path.resolve(process.env.MEMLENS_WORKSPACE || path.join(REPO, 'examples/demo'));
}

// The code-server URL (MEMLENS_VSCODE_URL) opened on another folder: one code-server serves
// every workspace; each browser window gets its own extension host and language server.
export function workbenchUrl(folder) {
  const base = process.env.MEMLENS_VSCODE_URL;
  if (!base) throw new Error('set MEMLENS_VSCODE_URL to the code-server URL (scripts/vscode/start.sh prints it)');
  if (!folder) return base;
  const url = new URL(base);
  url.searchParams.set('folder', path.resolve(folder));
  return url.toString();
}

// A fresh copy of the demo workspace for a test that changes files: TMP/repo/<name of the
// demo>; returns { root: TMP, workspace }. Removed by the harness at the end of the test.
export function copyWorkspace(src = sourceWorkspace()) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'memlens-e2e-ws-')));
  const workspace = path.join(root, 'repo', path.basename(src));
  cpSync(src, workspace, { recursive: true });
  return { root, workspace };
}

// A copy of the workspace (copyWorkspace()) with a HOME of its own, so a test that writes
// memory, transcripts or skills into HOME changes nothing another test sees: the copy's own
// `.home` when it has one (the demo does), else a copy of $GEMINI_CLI_HOME's .gemini and
// .agents, else an empty folder. The copy's .vscode/settings.json sets `memlens.home` to it
// (plus `settings`). Returns { root, workspace, home }; remove `root` when done.
export function isolatedWorkspace({ settings = {} } = {}) {
  const { root, workspace } = copyWorkspace();
  let home = path.join(workspace, '.home');
  if (!existsSync(home)) {
    home = path.join(root, 'home');
    mkdirSync(home, { recursive: true });
    const source = process.env.GEMINI_CLI_HOME;
    for (const d of ['.gemini', '.agents']) {
      if (source && existsSync(path.join(source, d))) cpSync(path.join(source, d), path.join(home, d), { recursive: true });
    }
  }
  const file = path.join(workspace, '.vscode', 'settings.json');
  let current = {};
  if (existsSync(file)) {
    try { current = JSON.parse(readFileSync(file, 'utf8')); } catch { current = {}; }
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...current, 'memlens.home': home, ...settings }, null, 2)}\n`);
  return { root, workspace, home };
}

// A free loopback port.
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

// A code-server of the test's own (scripts/vscode/start.sh, in its own process group) serving
// `workspace`, for a test that needs another environment than the harness's code-server
// (workspace trust on, another PATH): `env` is added to this process's environment (so the
// harness's MEMLENS_VSIX, MEMLENS_PYTHON and HOME reach it too). Stopped, and its state folder
// removed, by `cleanup`. Resolves to { url, state } (state: its MEMLENS_STATE_DIR, with
// user-data/ and its logs) once it answers.
export async function startCodeServer(workspace, cleanup, env = {}) {
  const state = mkdtempSync(path.join(tmpdir(), 'memlens-e2e-cs-'));
  const port = await freePort();
  const child = spawn('bash', [path.join(REPO, 'scripts/vscode/start.sh'), workspace, String(port)], {
    env: { ...process.env, ...env, MEMLENS_STATE_DIR: state },
    detached: true,
    stdio: 'ignore',
  });
  cleanup(() => {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
    rmSync(state, { recursive: true, force: true });
  });
  const deadline = Date.now() + 180_000;
  const urlFile = path.join(state, 'url');
  while (!existsSync(urlFile) || !readFileSync(urlFile, 'utf8').trim()) {
    if (child.exitCode !== null) throw new Error(`scripts/vscode/start.sh exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('the test\'s own code-server did not start in 180 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url: readFileSync(urlFile, 'utf8').trim(), state };
}

// The project's Python (it runs the language server), for a test that prepares files with
// the server's own code.
export function projectPython() {
  return process.env.MEMLENS_PYTHON || path.join(REPO, '.venv/bin/python');
}

const seconds = (ms) => (ms / 1000).toFixed(1);

// Runs one scenario: launches chromium, calls body({ page, step, cleanup }) and exits the
// process with 0 (passed) or 1 (failed, with ARTIFACTS/<name>-failure.png and the step that
// failed). A watchdog ends a stuck run. `step(text)` names what is being waited for.
export async function runScenario(name, body, { viewport } = {}) {
  const t0 = performance.now();
  let current = 'launch chromium';
  let session;
  const cleanups = [];
  const finish = async (code) => {
    if (session) await session.close();
    for (const fn of cleanups.reverse()) {
      try { await fn(); } catch (e) { console.error(`${name}: cleanup failed: ${e.message}`); }
    }
    process.exit(code);
  };
  const WATCHDOG_MS = Math.max(3 * TIMEOUT, 300_000);
  const watchdog = setTimeout(async () => {
    console.error(`${name}: FAILED: no result after ${seconds(WATCHDOG_MS)} s (step "${current}")`);
    if (session) await screenshot(session.page, `${name}-failure`).catch(() => {});
    await finish(1);
  }, WATCHDOG_MS);
  let tStep = t0;
  try {
    session = await launch(name, viewport ? { viewport } : {});
    const step = (text) => {
      const now = performance.now();
      log(`${name}: ${current} (${seconds(now - tStep)} s)`);
      current = text;
      tStep = now;
    };
    await body({ page: session.page, step, cleanup: (fn) => cleanups.push(fn) });
    step('done');
    clearTimeout(watchdog);
    log(`${name}: OK in ${seconds(performance.now() - t0)} s`);
    await finish(0);
  } catch (e) {
    clearTimeout(watchdog);
    console.error(`${name}: FAILED at step "${current}": ${String(e.message || e).split('\n').slice(0, 6).join('\n  ')}`);
    if (session) {
      const shot = await screenshot(session.page, `${name}-failure`).catch(() => null);
      if (shot) console.error(`${name}: screenshot of the failure: ${shot}`);
    }
    await finish(1);
  }
}

// Waits until fn(arg) (run in the page; or `fn`, a string, evaluated there as an expression)
// returns a truthy value and returns it; on time-out the error names `what` and the last value
// of `describe` (a function of arg or an expression, also run in the page), if given.
export async function waitInPage(page, what, fn, arg, { timeout = TIMEOUT, describe } = {}) {
  const run = (f) => (typeof f === 'string' ? [f, undefined] : [f, arg]);
  try {
    const handle = await page.waitForFunction(...run(fn), { timeout, polling: 100 });
    return await handle.jsonValue();
  } catch (e) {
    let last = '';
    if (describe) last = await page.evaluate(...run(describe)).catch(() => '');
    throw new Error(`timed out waiting for ${what}${last ? `; last seen: ${JSON.stringify(last)}` : ''}\n${e.message}`);
  }
}

// Waits until the active editor's text (its rendered lines in order, soft-wrapped pieces
// rejoined) holds every one of `lines`, in that order when `ordered`.
export async function waitForEditorText(page, what, lines, { ordered = false } = {}) {
  const editor = '.editor-group-container.active .monaco-editor';
  return waitInPage(page, what, ([sel, wanted, inOrder]) => {
    const root = document.querySelector(`${sel} .view-lines`);
    if (!root) return false;
    const text = [...root.querySelectorAll('.view-line')]
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('');
    let at = -1;
    for (const line of wanted) {
      const found = text.indexOf(line, inOrder ? at + 1 : 0);
      if (found < 0) return false;
      at = found;
    }
    return true;
  }, [editor, lines, ordered], {
    describe: ([sel]) => document.querySelector(`${sel} .view-lines`)?.textContent.slice(0, 600),
  });
}

// The active editor group's active tab for a file name (e.g. "architecture.md").
export function activeTab(page, name) {
  return page.locator(`.editor-group-container.active .tabs-container .tab.active[data-resource-name="${name}"]`).first();
}

// Presses `key` until the quick input shows (the first key press after load can be lost while
// the workbench is still registering its keybindings), then returns its text box.
export async function openQuickInput(page, key) {
  const widget = page.locator('.quick-input-widget');
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await page.keyboard.press(key);
    try {
      await widget.waitFor({ state: 'visible', timeout: 5_000 });
      break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
  }
  const input = widget.locator('.quick-input-box input');
  await input.waitFor({ state: 'visible' });
  return input;
}

// Runs a command from the command palette by its full title ("Memory Lens: Show Merged
// Context"): waits for exactly that entry, then clicks it. A command that asks for input
// right away (an input box or quick pick reuses the palette's widget) needs
// `{ waitHidden: false }`; wait for its own title with quickInputTitled() instead.
export async function runCommand(page, title, { waitHidden = true } = {}) {
  const input = await openQuickInput(page, 'F1');
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-widget .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: exact(title) }),
  }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  if (waitHidden) await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

// The quick input (input box or quick pick) once it shows `title`; returns its text box.
export async function quickInputTitled(page, title) {
  const widget = page.locator('.quick-input-widget', {
    has: page.locator('.quick-input-title', { hasText: exact(title) }),
  });
  await widget.waitFor({ state: 'visible' });
  const input = widget.locator('.quick-input-box input');
  await input.waitFor({ state: 'visible' });
  return input;
}

// Opens a workspace file by its relative path with Quick Open (Ctrl+P) and waits for its tab.
// Quick Open first lists "recently opened" matches of the bare name: wait for the row of the
// file search whose description is the file's folder.
export async function quickOpen(page, relPath) {
  const base = path.posix.basename(relPath);
  const dir = path.posix.dirname(relPath);
  const input = await openQuickInput(page, 'Control+p');
  await input.fill(relPath);
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  const row = dir === '.'
    ? rows.filter({ has: page.locator('.label-name', { hasText: exact(base) }) }).first()
    : rows.filter({ has: page.locator('.label-name', { hasText: exact(base) }) })
      .filter({ has: page.locator('.label-description', { hasText: exact(dir) }) }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  await activeTab(page, base).waitFor({ state: 'visible' });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor({ state: 'visible' });
}

// Moves the cursor of the active editor with Go to Line (Ctrl+G) and waits for the status bar
// to show the new position.
export async function goToLine(page, line, column = 1) {
  const input = await openQuickInput(page, 'Control+g');
  await input.fill(`:${line}:${column}`);
  await input.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await page.locator('[id="status.editor.selection"]', { hasText: `Ln ${line}, Col ${column}` }).first()
    .waitFor({ state: 'visible' });
}

// The status-bar item of Memory Lens (memory files and characters of the active editor's
// folder). It is filled from the server's answer to memlens/show, so it being visible means
// the language server runs and has indexed the workspace.
export const MEMORY_STATUS = '[id="memlens.memlens.memlens.memory"]';
export async function waitForServer(page) {
  await page.locator(MEMORY_STATUS).waitFor({ state: 'visible' });
}

// The rendered lines of the active editor, top to bottom (a soft-wrapped line is several
// entries; join with '' to search across wraps). Only the lines in view are rendered.
export async function visibleLines(page) {
  return page.evaluate(() => {
    const root = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    if (!root) return [];
    return [...root.querySelectorAll('.view-line')]
      .map((el) => ({ top: parseFloat(el.style.top) || 0, text: el.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text);
  });
}

// Waits for the CSS animations and transitions of an element, its ancestors and descendants
// to end (hovers and notifications fade in), so that a screenshot shows it fully drawn.
// Endless animations (a blinking cursor) are not waited for.
export async function settled(locator) {
  await locator.evaluate((el) => {
    const nodes = [...el.querySelectorAll('*')];
    for (let n = el; n; n = n.parentElement) nodes.push(n);
    const finite = nodes.flatMap((n) => n.getAnimations())
      .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity);
    return Promise.all(finite.map((a) => a.finished.catch(() => {})));
  });
}

// The text of the visible editor hover, once it contains `contains`.
export async function hoverText(page, contains, { timeout = TIMEOUT } = {}) {
  const hover = page.locator('.monaco-editor .monaco-hover:not(.hidden)', { hasText: contains }).first();
  await hover.waitFor({ state: 'visible', timeout });
  await settled(hover);
  return (await hover.innerText()).replace(/\u00a0/g, ' ');
}

// Where line `line` (1-based, in view) of the active editor is drawn.
async function lineBox(page, line) {
  return waitInPage(page, `line ${line} of the active editor to be rendered`, (n) => {
    const editor = document.querySelector('.editor-group-container.active .monaco-editor');
    if (!editor) return null;
    const number = [...editor.querySelectorAll('.margin-view-overlays .line-numbers')]
      .find((el) => el.textContent.trim() === String(n));
    const content = editor.querySelector('.view-lines');
    if (!number || !content) return null;
    const a = number.getBoundingClientRect();
    const c = content.getBoundingClientRect();
    return { left: c.left, top: a.top, height: a.height };
  }, line);
}

// Hovers the mouse over the text of line `line` (1-based, must be in view) of the active
// editor, `x` pixels into the line's content.
export async function hoverLine(page, line, x = 40) {
  const box = await lineBox(page, line);
  if (process.env.MEMLENS_E2E_DEBUG) log(`hover line ${line} at ${JSON.stringify(box)}`);
  await page.mouse.move(box.left + x - 20, box.top + box.height / 2);
  await page.mouse.move(box.left + x, box.top + box.height / 2, { steps: 4 });
}

// Hovers line `line` until the editor hover containing `contains` shows, and returns its text.
// A line can move while the mouse rests on it (a code lens appearing above it pushes it down),
// so each attempt re-measures the line and moves the mouse away and back.
export async function hoverLineUntil(page, line, contains, { x = 40 } = {}) {
  const deadline = Date.now() + TIMEOUT;
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(5, 5);
    await hoverLine(page, line, x);
    try {
      return await hoverText(page, contains, { timeout: 5_000 });
    } catch (e) {
      if (process.env.MEMLENS_E2E_DEBUG) {
        const hovers = await page.$$eval('.monaco-hover', (els) => els.map((h) => `${h.className}: ${h.innerText.slice(0, 80)}`));
        log(`hover attempt ${attempt} failed; line box now ${JSON.stringify(await lineBox(page, line))}; hovers: ${JSON.stringify(hovers)}`);
      }
      if (Date.now() > deadline) throw new Error(`no hover with "${contains}" on line ${line} after ${attempt} attempts: ${e.message}`);
    }
  }
}

// Hovers `target` (a locator) until a hover containing `contains` shows, and returns that hover.
// One hover is not enough on a busy machine: the status item can be re-rendered (its text or
// tooltip updated by the server) between the pointer arriving and the hover delay ending, and
// VS Code then shows nothing until the pointer moves again. So: move away, hover, wait a few
// seconds, and try again until the scenario's timeout.
export async function hoverUntil(page, target, contains) {
  const deadline = Date.now() + TIMEOUT;
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(5, 5);
    await target.hover();
    const tip = page.locator('.monaco-hover:not(.hidden)', { hasText: contains }).first();
    try {
      await tip.waitFor({ state: 'visible', timeout: 5_000 });
      await settled(tip);
      return tip;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`no hover with "${contains}" after ${attempt} attempts: ${e.message}`);
    }
  }
}

// Waits for a code lens whose text matches `text` in the active editor. A code lens is drawn
// above its line and pushes the lines below it down: wait for it before pointing at a line.
export async function waitForCodeLens(page, text) {
  const lens = page.locator('.editor-group-container.active .monaco-editor .codelens-decoration', { hasText: text }).first();
  await lens.waitFor({ state: 'visible' });
  // The lens is read in the page in one go: a refresh (after a settings change) re-renders
  // the decorations, and a node found a moment before may be gone by the time it is read.
  const source = text instanceof RegExp ? [text.source, text.flags] : [String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), ''];
  return waitInPage(page, `a code lens matching ${text}`, ([pattern, flags]) => {
    const re = new RegExp(pattern, flags);
    const found = [...document.querySelectorAll('.editor-group-container.active .monaco-editor .codelens-decoration')]
      .map((el) => el.innerText.replace(/\u00a0/g, ' ')).find((t) => re.test(t));
    return found || null;
  }, source);
}

// ------------------------------------------------------------------------------------------
// The Memory Lens views.
// ------------------------------------------------------------------------------------------

// Opens the Memory Lens container from the activity bar; returns the side bar.
export async function openMemoryLens(page) {
  await page.locator('.activitybar .action-item .action-label[aria-label="Memory Lens"]').first().click();
  const sidebar = page.locator('.part.sidebar');
  await sidebar.locator('.composite.title', { hasText: /Memory Lens/i }).first().waitFor({ state: 'visible' });
  return sidebar;
}

// The pane of one view of the side bar ("Chat", "Memory", "Skills").
export function viewPane(page, name) {
  return page.locator('.part.sidebar .pane', { has: page.locator(`.pane-header[aria-label^="${name} Section"]`) }).first();
}

// A tree row of a view by its label (exact).
export function treeRow(pane, label) {
  return pane.locator('.monaco-list-row').filter({
    has: pane.page().locator('.label-name', { hasText: exact(label) }),
  }).first();
}

// The Chat view's webview content (a frame locator): reached through VS Code's webview iframe
// and its #active-frame.
export function chatFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

// ------------------------------------------------------------------------------------------
// The fake Gemini server (tests/e2e/fake_gemini_server.py), started by run-e2e.sh before
// code-server; its URL is MEMLENS_GEMINI_BASE_URL (the language server's endpoint too).
// ------------------------------------------------------------------------------------------

export function fakeGeminiUrl() {
  const url = process.env.MEMLENS_GEMINI_BASE_URL;
  if (!url) {
    throw new Error('no fake Gemini server: MEMLENS_GEMINI_BASE_URL is not set (run the test through '
      + 'scripts/vscode/run-e2e.sh, which starts tests/e2e/fake_gemini_server.py before code-server)');
  }
  return url.replace(/\/+$/, '');
}

async function fakeGeminiCall(method, route, body) {
  const response = await fetch(`${fakeGeminiUrl()}/__fake/${route}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const payload = await response.json();
  if (!response.ok) throw new Error(`fake Gemini ${method} /__fake/${route}: ${response.status} ${JSON.stringify(payload)}`);
  return payload;
}

// Scripts a conversation: the fake answers the chat turn whose message contains `match` with
// `turns` (turns[n]: its answer after n model turns; see fake_gemini_server.py for pieces).
export function scriptConversation(match, turns) {
  return fakeGeminiCall('POST', 'conversations', { match, turns });
}

// Summaries of the generate requests the fake received (for a conversation, when `match`).
export async function fakeGeminiRequests(match) {
  const { requests } = await fakeGeminiCall('GET', 'requests');
  return match === undefined ? requests : requests.filter((r) => r.conversation === match);
}

// Makes the side bar `width` pixels wide by dragging the sash on its right edge (so a
// screenshot of a view is readable); waits until the side bar has (about) that width.
export async function resizeSidebar(page, width) {
  const sidebar = page.locator('.part.sidebar');
  const box = await sidebar.boundingBox();
  const sash = await page.evaluate((edge) => {
    const found = [...document.querySelectorAll('.monaco-sash.vertical')]
      .map((el) => el.getBoundingClientRect())
      .filter((r) => r.height > 100 && Math.abs(r.left + r.width / 2 - edge) < 8);
    return found.length ? { x: found[0].left + found[0].width / 2, y: found[0].top + found[0].height / 2 } : null;
  }, box.x + box.width);
  if (!sash) throw new Error('no sash on the right edge of the side bar');
  await page.mouse.move(sash.x, sash.y);
  await page.mouse.down();
  await page.mouse.move(sash.x + (box.x + width - (box.x + box.width)), sash.y, { steps: 8 });
  await page.mouse.up();
  await waitInPage(page, `the side bar to be ${width} px wide`,
    (w) => Math.abs(document.querySelector('.part.sidebar').getBoundingClientRect().width - w) < 12, width);
}

// ------------------------------------------------------------------------------------------
// The extension host's logs: code-server writes them under its user-data-dir, one folder per
// extension host (logs/<session>/exthost<N>/): remoteexthost.log (VS Code's log of that
// host: uncaught errors, failed commands with their stacks) and output_logging_*/N-<channel>.log
// (the output channels, e.g. "Memory Lens", where the language client logs failed requests).
// ------------------------------------------------------------------------------------------

// code-server's --user-data-dir: $MEMLENS_VSCODE_USER_DATA, else read from the command line
// of the code-server process that listens on MEMLENS_VSCODE_URL's port (scripts/vscode/
// start.sh passes --bind-addr 127.0.0.1:PORT and --user-data-dir).
export function codeServerUserData() {
  if (process.env.MEMLENS_VSCODE_USER_DATA) return path.resolve(process.env.MEMLENS_VSCODE_USER_DATA);
  const port = new URL(workbenchUrl()).port;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let args;
    try { args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { continue; }
    const bind = args.indexOf('--bind-addr');
    const data = args.indexOf('--user-data-dir');
    if (bind >= 0 && data >= 0 && args[bind + 1] === `127.0.0.1:${port}` && args[data + 1]) return args[data + 1];
  }
  throw new Error(`no code-server with --bind-addr 127.0.0.1:${port} found (set MEMLENS_VSCODE_USER_DATA)`);
}

// The extension-host log folders (logs/*/exthost*) of a code-server user-data-dir.
export function extensionHostLogDirs(userData = codeServerUserData()) {
  const logs = path.join(userData, 'logs');
  if (!existsSync(logs)) return [];
  return readdirSync(logs).flatMap((session) => {
    const dir = path.join(logs, session);
    try {
      return readdirSync(dir).filter((d) => /^exthost\d+$/.test(d)).map((d) => path.join(dir, d));
    } catch { return []; }
  }).sort();
}

// Waits (up to `timeout` ms) for an extension-host log folder that is not in `before` (the
// folders that existed before this test's window opened) and returns it.
export async function newExtensionHostLogDir(before, { timeout = TIMEOUT, userData = codeServerUserData() } = {}) {
  const known = new Set(before);
  const deadline = Date.now() + timeout;
  for (;;) {
    const fresh = extensionHostLogDirs(userData).filter((d) => !known.has(d));
    if (fresh.length) return fresh[fresh.length - 1];
    if (Date.now() > deadline) throw new Error(`no new extension host log folder under ${userData}/logs`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// Reads the extension host's logs incrementally and collects errors: in remoteexthost.log,
// each "[error]" entry with the lines that follow it (its stack); in the output channel named
// `channel`, each "[Error - …]" entry (vscode-languageclient's failed requests and
// notifications) and every line saying ERROR or Traceback (the server's own log). `check(label)`
// returns the new ones since the last call, each tagged with `label`.
export class ExtensionHostLog {
  constructor(dir, { channel = 'Memory Lens' } = {}) {
    this.dir = dir;
    this.channel = channel;
    this.offsets = new Map();
    this.errors = [];
  }

  files() {
    const files = [path.join(this.dir, 'remoteexthost.log'), path.join(this.dir, 'exthost.log')]
      .filter((f) => existsSync(f)).map((f) => ({ file: f, kind: 'exthost' }));
    for (const d of existsSync(this.dir) ? readdirSync(this.dir) : []) {
      if (!d.startsWith('output_logging_')) continue;
      for (const f of readdirSync(path.join(this.dir, d))) {
        if (f.replace(/^\d+-/, '') === `${this.channel}.log`) files.push({ file: path.join(this.dir, d, f), kind: 'channel' });
      }
    }
    return files;
  }

  // Every error entry of `text` (a piece of a log), as strings.
  static entries(text, kind) {
    const lines = text.split('\n');
    const found = [];
    const stamp = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d/;
    for (let i = 0; i < lines.length; i += 1) {
      const line = lines[i];
      const isError = kind === 'exthost'
        ? /\[error\]/i.test(line)
        : /\[Error - |\bERROR\b|Traceback \(most recent call last\)|\[error\]/.test(line);
      if (!isError) continue;
      const entry = [line];
      while (i + 1 < lines.length && lines[i + 1] && !stamp.test(lines[i + 1]) && !/^\[(Info|Warn|Error|Trace) - /.test(lines[i + 1])) {
        entry.push(lines[i + 1]);
        i += 1;
      }
      found.push(entry.join('\n'));
    }
    return found;
  }

  check(label) {
    const fresh = [];
    for (const { file, kind } of this.files()) {
      const text = readFileSync(file, 'utf8');
      const from = this.offsets.get(file) ?? 0;
      this.offsets.set(file, text.length);
      for (const entry of ExtensionHostLog.entries(text.slice(from), kind)) {
        fresh.push({ label, file: path.basename(file), kind, entry });
      }
    }
    this.errors.push(...fresh);
    return fresh;
  }
}

// After runCommand(page, title, { waitHidden: false }) of a command that asks for input: waits
// until the palette has given way to the command's own input box or quick pick (the widget
// is reused: its text box no longer holds ">…" and it shows a title or a placeholder), and
// returns its text box. Pressing Escape before that would close the palette, not the command.
export async function commandInput(page, what = 'the command\'s input') {
  await waitInPage(page, what, () => {
    const widget = [...document.querySelectorAll('.quick-input-widget')]
      .find((w) => w.offsetParent !== null && !w.classList.contains('quick-input-widget-closing'));
    const input = widget?.querySelector('.quick-input-box input');
    if (!widget || !input || input.value.startsWith('>')) return false;
    const title = widget.querySelector('.quick-input-title')?.textContent.trim();
    return Boolean(title || input.placeholder);
  }, undefined, {
    describe: () => {
      const w = document.querySelector('.quick-input-widget');
      return w && { cls: w.className, value: w.querySelector('input')?.value, title: w.querySelector('.quick-input-title')?.textContent };
    },
  });
  return page.locator('.quick-input-widget:not(.quick-input-widget-closing) .quick-input-box input').first();
}

// Opens a file by its absolute path with Quick Open (Ctrl+P): unambiguous where several
// files share a name (GEMINI.md in subfolders). Waits until the focused row is that file (the
// list re-renders while the search runs, so a click could land on another row), presses
// Enter and waits for its tab.
export async function quickOpenPath(page, file) {
  const name = path.basename(file);
  const input = await openQuickInput(page, 'Control+p');
  await input.fill(file);
  await waitInPage(page, `Quick Open to focus ${file}`, ([base, dir]) => {
    const row = document.querySelector('.quick-input-widget .monaco-list-row.focused');
    if (!row) return false;
    const label = row.querySelector('.label-name')?.textContent.replace(/\u00a0/g, ' ').trim();
    const description = row.querySelector('.label-description')?.textContent.trim() ?? '';
    return label === base && (description === '' || dir.endsWith(description) || description.startsWith('/'));
  }, [name, path.dirname(file)], {
    describe: () => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].slice(0, 5)
      .map((r) => `${r.classList.contains('focused') ? '*' : ''}${r.textContent.trim()}`),
  });
  await input.press('Enter');
  await activeTab(page, name).waitFor({ state: 'visible' });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor({ state: 'visible' });
}

// Opens the Problems panel (Ctrl+Shift+M; pressed again only while the panel is still hidden:
// the first key press after load can be lost while the workbench registers its keybindings)
// and returns it.
export async function openProblemsPanel(page) {
  const panel = page.locator('.markers-panel');
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('Control+Shift+M');
    try {
      await panel.waitFor({ state: 'visible', timeout: 10_000 });
      return panel;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}
