// Add Memory (SPEC §6, §10.2): "Memory Lens: Add Memory…" asks for a fact and a scope; with
// Global picked, a modal shows the unified diff of HOME/.gemini/GEMINI.md; "Save" writes the
// fact under `## Gemini Added Memories` exactly as Gemini CLI's save_memory does (the rest of
// the file unchanged) and a notification offers "Open File", which opens it.
// Works on a copy of the demo with a HOME of its own (memlens.home in the copy's settings), so
// neither the committed demo nor the run's HOME changes.
// Screenshots: artifacts/e2e/add-memory-confirm.png (the modal with the diff) and
// artifacts/e2e/add-memory.png (the notification and the saved file open).
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  runCommand, quickInputTitled, activeTab, settled, screenshot, waitInPage,
} from './lib/vscode.mjs';

const FACT = 'Deploys go out on Tuesdays after the 10:00 UTC stand-up.';
const SECTION = '## Gemini Added Memories';

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

  step('pick the scope "Global"');
  await quickInputTitled(page, 'Where should it be saved?');
  const global = page.locator('.quick-input-widget .monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^\s*Global\s*$/ }),
  }).first();
  await global.waitFor({ state: 'visible' });
  await global.click();

  step('the modal shows the diff of the global GEMINI.md; the file is unchanged until "Save"');
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'Save this memory' }).first();
  await dialog.waitFor({ state: 'visible' });
  const message = await dialog.locator('.dialog-message-text').innerText();
  if (!/global/i.test(message) && !message.includes('GEMINI.md')) throw new Error(`modal message: ${message}`);
  const detail = (await dialog.locator('.dialog-message-detail').innerText()).split('\n');
  const missing = [/^--- GEMINI\.md\s+Current$/, /^\+\+\+ GEMINI\.md\s+Proposed$/, new RegExp(`^ ${SECTION}$`)]
    .filter((re) => !detail.some((l) => re.test(l)))
    .concat([`+- ${FACT}`].filter((l) => !detail.includes(l)));
  if (missing.length) throw new Error(`the modal's diff lacks ${missing.join(', ')}:\n${detail.join('\n')}`);
  if (readFileSync(globalFile, 'utf8') !== before) throw new Error('the global GEMINI.md changed before "Save"');
  await settled(dialog);
  await screenshot(page, 'add-memory-confirm');

  step('"Save": the fact is written under the section');
  await dialog.locator('.monaco-button', { hasText: /^\s*Save\s*$/ }).first().click();
  await dialog.waitFor({ state: 'hidden' });
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Memory Lens:' })
    .filter({ has: page.locator('.monaco-button', { hasText: 'Open File' }) }).first();
  await toast.waitFor({ state: 'visible' });
  const after = readFileSync(globalFile, 'utf8');
  if (after !== expected) {
    throw new Error(`the global GEMINI.md is not as Gemini CLI writes it:\n--- expected\n${expected}--- found\n${after}`);
  }
  const section = after.slice(after.indexOf(SECTION)).split('\n');
  if (section[section.length - 2] !== `- ${FACT}`) throw new Error(`the fact is not the last item of the section: ${section.join('\n')}`);

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
