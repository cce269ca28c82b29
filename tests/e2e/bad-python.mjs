// An interpreter that cannot run the server gets one clear message: a copy of the demo whose
// workspace settings point memlens.python at a file that does not exist. The extension must
// show one error notification that names the interpreter and says to set memlens.python to a
// CPython 3.11–3.14, with "Choose Interpreter" (which opens the setting) and "Show Logs".
// Then a second window whose interpreter answers as server/launch.py does when it cannot load
// the bundle (one "memlens-cannot-start: ..." line, exit status 3; a stand-in script, since the
// real case needs a Python older than 3.11 or of another platform; the launcher's own side is
// tests/test_launcher.py): that line must be the one notification, the server not restarted.
// Screenshots: artifacts/e2e/bad-python.png, bad-python-launcher.png.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  step('a second window: an interpreter that answers like the launcher when it cannot start');
  const second = copyWorkspace();
  cleanup(() => rmSync(second.root, { recursive: true, force: true }));
  const page2 = await page.context().newPage();
  cleanup(() => page2.close());
  try {
    await launcherCase(page2, second, step);
  } catch (e) {
    await screenshot(page2, 'bad-python-launcher-failure').catch(() => {});
    throw e;
  }
});

async function launcherCase(page2, second, step) {
  const fake = path.join(second.root, 'python-too-old');
  const counter = path.join(second.root, 'runs');
  const LINE = 'this build of Memory Lens bundles its server\'s libraries for CPython 3.11, 3.12 (e2e stand-in).';
  writeFileSync(fake, `#!/bin/sh\necho run >> '${counter}'\necho "memlens-cannot-start: ${LINE} Set the setting memlens.python to the path of a CPython 3.11–3.14 interpreter." >&2\nexit 3\n`);
  chmodSync(fake, 0o755);
  mkdirSync(path.join(second.workspace, '.vscode'), { recursive: true });
  writeFileSync(path.join(second.workspace, '.vscode/settings.json'), `${JSON.stringify({ 'memlens.python': fake })}\n`);
  await openWorkbench(page2, workbenchUrl(second.workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page2, 'GEMINI.md');
  step('the launcher\'s line is the one notification, with Choose Interpreter');
  const toast2 = page2.locator('.notifications-toasts .notification-toast', { hasText: 'e2e stand-in' }).first();
  try {
    await toast2.waitFor({ state: 'visible', timeout: 60_000 });
  } catch (e) {
    // Name what was shown instead, so a failure says more than "timed out".
    const shown = await page2.locator('.notifications-toasts .notification-list-item-message').allTextContents();
    throw new Error(`no notification with the launcher's line in 60 s; shown: ${JSON.stringify(shown)} (${e.message.split('\n')[0]})`);
  }
  await toast2.locator('.monaco-button', { hasText: 'Choose Interpreter' }).first().waitFor({ state: 'visible' });
  await screenshot(page2, 'bad-python-launcher');
  await page2.waitForTimeout(1000);
  const toasts = await page2.locator('.notifications-toasts .notification-toast .notification-list-item-message').allTextContents();
  if (toasts.length !== 1) throw new Error(`expected the one notification, got: ${JSON.stringify(toasts)}`);
  step('no restart: the interpreter ran once');
  await page2.waitForTimeout(3000); // a restart would run the interpreter again
  const runs = existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').length : 0;
  if (runs !== 1) throw new Error(`the interpreter ran ${runs} times, expected once (no restarts)`);
}
