// An interpreter that cannot run the server gets one clear message: a copy of the demo whose
// workspace settings point memlens.python at a file that does not exist. The extension must
// show one error notification that names the interpreter and says to set memlens.python to a
// CPython 3.11–3.14, with "Choose Interpreter" (which opens the setting) and "Show Logs".
// (Another Python version or platform gives the launcher's message the same way; that one is
// covered by tests/test_launcher.py.) Screenshot: artifacts/e2e/bad-python.png.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runScenario, workbenchUrl, copyWorkspace, openWorkbench, openFromExplorer, screenshot } from './lib/vscode.mjs';

const MISSING = '/nonexistent/memlens-e2e/python3';

await runScenario('bad-python', async ({ page, step, cleanup }) => {
  step('copy the demo with memlens.python set to a missing file');
  const { root, workspace } = copyWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  writeFileSync(path.join(workspace, '.vscode/settings.json'), `${JSON.stringify({ 'memlens.python': MISSING })}\n`);

  step('open the workbench and GEMINI.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md');

  step('wait for the error notification naming the interpreter');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: MISSING }).first();
  await toast.waitFor({ state: 'visible' });
  const text = (await toast.locator('.notification-list-item-message').first().textContent()).replace(/\u00a0/g, ' ');
  for (const want of ['could not find the Python interpreter', 'memlens.python', '3.11–3.14']) {
    if (!text.includes(want)) throw new Error(`the message lacks "${want}": ${text}`);
  }
  for (const button of ['Choose Interpreter', 'Show Logs']) {
    await toast.locator('.monaco-button', { hasText: button }).first().waitFor({ state: 'visible' });
  }
  await screenshot(page, 'bad-python');
  const count = await page.locator('.notifications-toasts .notification-toast', { hasText: MISSING }).count();
  if (count !== 1) throw new Error(`${count} notifications about the interpreter, expected one`);

  step('"Choose Interpreter" opens the memlens.python setting');
  await toast.locator('.monaco-button', { hasText: 'Choose Interpreter' }).first().click();
  await page.locator('.settings-editor').first().waitFor({ state: 'visible' });
  await page.locator('.settings-editor .setting-item-contents', { hasText: 'Python interpreter that runs the Memory Lens server' })
    .first().waitFor({ state: 'visible' });
});
