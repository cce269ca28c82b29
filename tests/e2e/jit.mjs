// Just-in-time memory: opening services/api/app.py makes the agent load
// services/api/GEMINI.md. The extension must say so with a notification naming each agent shown
// that loads something on that read, all alike ("Memory Lens: Opening app.py, Gemini CLI loaded
// services/api/GEMINI.md just in time." for one agent; "Opening app.py, just in time: Gemini CLI
// loaded services/api/GEMINI.md; Claude Code loaded …" for several) and a status-bar flash ("+1
// memory loaded: api/GEMINI.md (Gemini CLI)"). Which other agents are shown depends on what is
// on PATH, so the checks look for Gemini CLI's part. The notification's "Show Merged Context"
// button opens the merged context. Screenshot (notification and flash both showing):
// artifacts/e2e/jit.png.
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, quickOpen, activeTab,
  MEMORY_STATUS, settled, screenshot, TIMEOUT,
} from './lib/vscode.mjs';

// Gemini CLI comes first: the agents are named in the registry's order.
const NOTICE = /Opening app\.py, (just in time: )?Gemini CLI loaded services\/api\/GEMINI\.md/;
const FLASH = /\+\d+ memory loaded: (.*, )?api\/GEMINI\.md/;

await runScenario('jit', async ({ page, step }) => {
  const workspace = sourceWorkspace();

  step('open the workbench');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'services'] });

  step('open services/api/app.py (Quick Open)');
  // Watch for both before opening: the flash lasts 4 s. The first file the window opens is
  // app.py, so the language server may still be starting: generous time-outs.
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: NOTICE }).first();
  const flash = page.locator(MEMORY_STATUS, { hasText: FLASH }).first();
  const seen = { toast: null, flash: null };
  const t0 = performance.now();
  const toastShown = toast.waitFor({ state: 'visible', timeout: TIMEOUT }).then(() => { seen.toast = performance.now() - t0; });
  const flashShown = flash.waitFor({ state: 'visible', timeout: TIMEOUT }).then(() => { seen.flash = performance.now() - t0; });
  await quickOpen(page, 'services/api/app.py');

  step(`wait for the notification "${NOTICE}" and the status-bar flash "${FLASH}"`);
  await Promise.all([toastShown, flashShown]);
  await settled(toast);
  if (!(await flash.isVisible())) throw new Error('the status-bar flash ended before the screenshot');
  await screenshot(page, 'jit');
  console.log(`jit: notification after ${(seen.toast / 1000).toFixed(1)} s, flash after ${(seen.flash / 1000).toFixed(1)} s`);

  step('the notification names its source and offers "Show Merged Context"');
  const source = await toast.locator('.notification-list-item-source').innerText();
  if (!source.includes('Memory Lens')) throw new Error(`notification source: ${source}`);
  await toast.locator('.monaco-button', { hasText: 'Show Merged Context' }).first().click();
  await activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' });
});
