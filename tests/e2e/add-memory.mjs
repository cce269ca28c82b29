// Add Memory (docs/reference.md "Writing memory", "The VS Code extension"): "Memory Lens: Add
// Memory…" asks for a fact and a scope (the pick names the real files: HOME here is the copy's, not
// ~); with Global picked, VS Code's diff editor shows HOME/.gemini/GEMINI.md against the proposed
// text (a read-only virtual document) and a notification says to review it; the file is untouched
// until "Save Memory" (the editor title's check mark, beside "Cancel"), which writes the fact under
// `## Gemini Added Memories` exactly as Gemini CLI's save_memory does (the rest of the file
// unchanged) and closes the diff and that notification; another offers "Open File", which
// opens it. Nothing else is written: no lock or temporary file is left in HOME or the
// repository.
// Works on a copy of the demo with a HOME of its own (memlens.home in the copy's settings), so
// neither the committed demo nor the run's HOME changes.
// Screenshots: artifacts/e2e/add-memory-diff-{light,dark}.png (the diff editor with Save /
// Cancel) and artifacts/e2e/add-memory.png (the notification and the saved file open).
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  runCommand, quickInputTitled, activeTab, settled, screenshot, waitInPage,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const FACT = 'Deploys go out on Tuesdays after the 10:00 UTC stand-up.';
const SECTION = '## Gemini Added Memories';

// Every file under `dir` (relative path → size and mtime), to see what a write left behind.
function snapshot(dir, skip = new Set()) {
  const out = new Map();
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (skip.has(full)) continue;
      if (entry.isDirectory()) walk(full);
      else { const st = statSync(full); out.set(path.relative(dir, full), `${st.size}:${st.mtimeMs}`); }
    }
  };
  walk(dir);
  return out;
}
function changes(before, after) {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

await runScenario('add-memory', async ({ page, step, cleanup }) => {
  step('copy the demo with a HOME of its own');
  const { root, workspace, home } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const globalFile = path.join(home, '.gemini', 'GEMINI.md');
  const before = readFileSync(globalFile, 'utf8');
  if (!before.includes(SECTION)) throw new Error(`the demo's global memory has no "${SECTION}" section`);
  // What Gemini CLI's memoryTool makes of it: the section is the file's last, so the fact is
  // appended to it, trailing whitespace trimmed first.
  const expected = `${before.trimEnd()}\n- ${FACT}\n`;

  step('open the workbench on the copy; wait for the language server');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('run "Memory Lens: Add Memory…" and type the fact');
  await runCommand(page, 'Memory Lens: Add Memory…', { waitHidden: false });
  const factBox = await quickInputTitled(page, 'Add Memory');
  await factBox.fill(FACT);
  await factBox.press('Enter');

  step('the scope pick names the real files (this HOME, not ~/.gemini)');
  await quickInputTitled(page, 'Where should it be saved?');
  const global = page.locator('.quick-input-widget .monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^\s*Global\s*$/ }),
  }).first();
  await global.waitFor({ state: 'visible' });
  const globalRow = await global.innerText();
  if (!globalRow.includes(globalFile)) throw new Error(`the Global row does not name ${globalFile}: ${globalRow}`);
  if (globalRow.includes('~/')) throw new Error(`the Global row says ~: ${globalRow}`);
  const projectRow = await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Project (private)' }).first().innerText();
  if (!projectRow.includes(home)) throw new Error(`the Project row does not name a file in ${home}: ${projectRow}`);
  await screenshot(page, 'add-memory-scope');
  // What is on disk before: HOME (but the server's own state under .gemini/tmp) and the repo.
  const skip = new Set([path.join(home, '.gemini', 'tmp')]);
  const homeBefore = snapshot(home, skip);
  const repoBefore = snapshot(workspace, new Set([home, path.join(workspace, '.vscode')]));
  await global.click();

  step('the diff editor shows the global GEMINI.md against the proposed text; the file is unchanged');
  const tab = page.locator('.editor-group-container.active .tabs-container .tab.active', { hasText: 'Add Memory' }).first();
  await tab.waitFor({ state: 'visible' });
  const diff = page.locator('.editor-group-container.active .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible' });
  await waitInPage(page, 'the fact as an inserted line on the right of the diff', (fact) => {
    const right = document.querySelector('.editor-group-container.active .monaco-diff-editor .editor.modified .view-lines');
    const inserted = document.querySelector('.editor-group-container.active .monaco-diff-editor .editor.modified .line-insert, .editor-group-container.active .monaco-diff-editor .editor.modified .char-insert');
    return !!right && !!inserted && right.textContent.replace(/\u00a0/g, ' ').includes(fact);
  }, FACT);
  await waitInPage(page, 'the current file on the left of the diff', (section) => {
    const left = document.querySelector('.editor-group-container.active .monaco-diff-editor .editor.original .view-lines');
    return !!left && left.textContent.replace(/\u00a0/g, ' ').includes(section);
  }, SECTION);
  const save = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label="Save Memory"]').first();
  const cancel = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label="Cancel Add Memory"]').first();
  await save.waitFor({ state: 'visible' });
  await cancel.waitFor({ state: 'visible' });
  const ask = page.locator('.notifications-toasts .notification-toast', { hasText: `Review the memory for ${globalFile}` }).first();
  await ask.waitFor({ state: 'visible' });

  if (readFileSync(globalFile, 'utf8') !== before) throw new Error('the global GEMINI.md changed before "Save"');
  await page.mouse.move(1200, 600);
  await screenshotThemes(page, workspace, 'add-memory-diff');

  step('"Save Memory" in the editor title: the fact is written, the diff and the review notice close');
  await save.click();
  await diff.waitFor({ state: 'hidden' });
  await ask.waitFor({ state: 'hidden' });
  const toast = page.locator('.notifications-toasts .notification-toast')
    .filter({ has: page.locator('.monaco-button', { hasText: 'Open File' }) }).first();
  await toast.waitFor({ state: 'visible' });
  const toastText = await toast.innerText();
  if (toastText.includes('Memory Lens:')) throw new Error(`the notification repeats "Memory Lens:": ${toastText}`);
  const after = readFileSync(globalFile, 'utf8');
  if (after !== expected) {
    throw new Error(`the global GEMINI.md is not as Gemini CLI writes it:\n--- expected\n${expected}--- found\n${after}`);
  }
  const section = after.slice(after.indexOf(SECTION)).split('\n');
  if (section[section.length - 2] !== `- ${FACT}`) throw new Error(`the fact is not the last item of the section: ${section.join('\n')}`);

  step('nothing else was written: no lock or temporary file in HOME or the repository');
  const homeChanged = changes(homeBefore, snapshot(home, skip));
  if (JSON.stringify(homeChanged) !== JSON.stringify([path.join('.gemini', 'GEMINI.md')])) {
    throw new Error(`in HOME, besides .gemini/GEMINI.md: ${homeChanged.join(', ')}`);
  }
  const repoChanged = changes(repoBefore, snapshot(workspace, new Set([home, path.join(workspace, '.vscode')])));
  if (repoChanged.length) throw new Error(`files changed in the repository: ${repoChanged.join(', ')}`);

  step('"Open File" opens the saved global GEMINI.md');
  await toast.locator('.monaco-button', { hasText: 'Open File' }).first().click();
  await activeTab(page, 'GEMINI.md').waitFor({ state: 'visible' });
  await waitInPage(page, 'the global GEMINI.md in the editor, with the fact', (fact) => {
    const lines = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    return !!lines && lines.textContent.replace(/\u00a0/g, ' ').includes(fact);
  }, FACT);
  const tabTitle = await activeTab(page, 'GEMINI.md').getAttribute('title');
  if (tabTitle && !tabTitle.includes('.gemini')) throw new Error(`the opened GEMINI.md is not the global one: ${tabTitle}`);

  step('screenshot');
  await page.mouse.move(1200, 600);
  await screenshot(page, 'add-memory');
});
