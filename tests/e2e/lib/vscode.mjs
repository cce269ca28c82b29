// Helpers for the end-to-end tests: Debian's chromium driven by playwright-core against a
// code-server started by scripts/vscode/start.sh (SPEC §10.4).
//
// playwright-core is found, in order, in $MEMLENS_PLAYWRIGHT_NODE_PATH, on NODE_PATH / a local
// node_modules, then in the cache scripts/vscode/install.sh fills.
import { createRequire } from 'node:module';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
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
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible' });
  const rows = page.locator('.explorer-folders-view .monaco-list-row');
  try {
    await rows.first().waitFor({ state: 'visible', timeout: Math.min(TIMEOUT, 30_000) });
  } catch {
    // Explorer not showing: open it from the activity bar and wait again.
    await page.locator('.activitybar .action-item a[aria-label^="Explorer"]').first().click();
    await rows.first().waitFor({ state: 'visible' });
  }
  for (const name of expect) await explorerRow(page, name).waitFor({ state: 'visible' });
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
