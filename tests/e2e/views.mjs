// The Memory Lens views: the activity-bar container "Memory Lens" holds Chat, Memory and
// Skills. The Memory tree shows tiers → files → imports (the project GEMINI.md expanded: its
// three imports, the missing docs/deploy.md flagged), then the same folder as Claude Code and
// AGENTS.md agents read it; the Chat view shows its empty state
// (without a Gemini API key: the key prompt; its button stores a key through "Set Gemini API
// Key", after which the chat's own empty state shows); with all three views expanded the chat's
// input and that button stay inside the Chat view. Before the key, "Extract Skills Now" offers
// "Set Gemini API Key" (which opens the key box). At the end, "Restart Server": the Memory view
// says the server is starting, then the tree comes back.
// Screenshots: artifacts/e2e/views-nokey.png (before the key), views.png,
// set-key-action-{light,dark}.png, starting-{light,dark}.png.
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, openFromExplorer, waitForServer,
  openQuickInput, screenshot, runCommand, settled, MEMORY_STATUS,
} from './lib/vscode.mjs';
import { saveSettings, useTheme } from './lib/themes.mjs';

const TIERS = ['Global', 'Project (loaded at start-up)', 'Subfolders (loaded just in time)'];
const IMPORTS = ['./docs/architecture.md', './docs/style.md', './docs/deploy.md'];

await runScenario('views', async ({ page, step }) => {
  const workspace = sourceWorkspace();

  step('open the workbench and GEMINI.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('open the Memory Lens container from the activity bar');
  await page.locator('.activitybar .action-item .action-label[aria-label="Memory Lens"]').first().click();
  const sidebar = page.locator('.part.sidebar');
  await sidebar.locator('.composite.title', { hasText: /Memory Lens/i }).first().waitFor({ state: 'visible' });
  for (const view of ['Chat', 'Memory', 'Skills']) {
    await sidebar.locator(`.pane-header[aria-label^="${view} Section"]`).first().waitFor({ state: 'visible' });
  }

  step(`the Memory tree: "Gemini CLI" (open) with its tiers ${TIERS.join(', ')}, beside the other agents`);
  const memory = sidebar.locator('.pane', { has: page.locator('.pane-header[aria-label^="Memory Section"]') }).first();
  const row = (label) => memory.locator('.monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) }),
  }).first();
  await row('Gemini CLI').waitFor({ state: 'visible' });
  if ((await row('Gemini CLI').getAttribute('aria-level')) !== '1') throw new Error('Gemini CLI is not a top-level node like the other agents');
  for (const tier of TIERS) {
    await row(tier).waitFor({ state: 'visible' });
    if ((await row(tier).getAttribute('aria-level')) !== '2') throw new Error(`the tier ${tier} is not under Gemini CLI`);
  }
  // Files: their label is the path relative to the workspace.
  for (const file of ['GEMINI.md', 'services/api/GEMINI.md', 'web/GEMINI.md']) await row(file).waitFor({ state: 'visible' });

  step('expand the project GEMINI.md: its imports');
  const gemini = row('GEMINI.md');
  if ((await gemini.getAttribute('aria-expanded')) !== 'true') await gemini.locator('.monaco-tl-twistie').click();
  const importRows = memory.locator('.monaco-list-row[aria-level="4"]');
  for (const imp of IMPORTS) {
    await importRows.filter({ hasText: imp }).first().waitFor({ state: 'visible' });
  }
  const missing = await importRows.filter({ hasText: './docs/deploy.md' }).first().innerText();
  if (!/missing/.test(missing)) throw new Error(`docs/deploy.md is not flagged missing: ${missing}`);
  const problems = await gemini.innerText();
  if (!/1 error/.test(problems)) throw new Error(`GEMINI.md row does not show its error: ${problems}`);

  step('the other agents: "Claude Code" (CLAUDE.md, the AGENTS.md it includes, the rule scoped by paths:) and "AGENTS.md agents"');
  await gemini.locator('.monaco-tl-twistie').click();  // fold the imports again: room for the rest
  await row('AGENTS.md agents').waitFor({ state: 'visible' });
  const claude = row('Claude Code');
  if ((await claude.getAttribute('aria-expanded')) !== 'true') await claude.locator('.monaco-tl-twistie').click();
  for (const file of ['CLAUDE.md', 'AGENTS.md', '.claude/rules/python.md']) await row(file).waitFor({ state: 'visible' });
  const rule = await row('.claude/rules/python.md').innerText();
  if (!rule.includes('applies to services/**/*.py')) throw new Error(`the rule row does not say where it applies: ${rule}`);

  step('the Skills view: the inbox');
  const skills = sidebar.locator('.pane', { has: page.locator('.pane-header[aria-label^="Skills Section"]') }).first();
  await skills.locator('.monaco-list-row', { hasText: 'Inbox' }).first().waitFor({ state: 'visible' });

  step('the Chat view (a webview): its empty state');
  const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await chat.locator('#chat-input').waitFor({ state: 'attached' });
  const keyState = chat.locator('#key-state');
  const emptyState = chat.locator('.empty-state', { hasText: 'Memory Lens Chat' });
  // Until the server's status arrives (it names the model) the panel assumes a key: decide
  // only then which state it shows.
  await chat.locator('#model', { hasText: /\S/ }).waitFor({ state: 'visible' });
  await chat.locator('#key-state:not([hidden]), .empty-state:not([hidden])').first().waitFor({ state: 'visible' });
  // With Chat, Memory and Skills all expanded, the input row (and the key button, without a key)
  // is pinned inside the Chat view, not cut off below it.
  const chatBody = (await sidebar.locator('.pane', { has: page.locator('.pane-header[aria-label^="Chat Section"]') })
    .first().locator('.pane-body').boundingBox());
  const pinned = ['#chat-input', (await keyState.isVisible()) ? '#set-key' : '#send'];
  for (const selector of pinned) {
    const box = await chat.locator(selector).boundingBox();
    if (!box || box.y < chatBody.y - 1 || box.y + box.height > chatBody.y + chatBody.height + 1) {
      throw new Error(`${selector} (${JSON.stringify(box)}) is not inside the Chat view (${JSON.stringify(chatBody)})`);
    }
  }
  if (await keyState.isVisible()) {
    step('no API key: "Extract Skills Now" says so and offers "Set Gemini API Key" (light and dark)');
    const restoreSettings = saveSettings(workspace);
    const keyToast = page.locator('.notifications-toasts .notification-toast', { hasText: 'needs a Gemini API key' })
      .filter({ has: page.locator('.monaco-button', { hasText: 'Set Gemini API Key' }) }).first();
    for (const theme of ['light', 'dark']) {
      await useTheme(page, workspace, theme);
      await runCommand(page, 'Memory Lens: Extract Skills Now');
      await keyToast.waitFor({ state: 'visible' });
      const text = await keyToast.innerText();
      if (text.includes('Memory Lens:')) throw new Error(`the notification repeats "Memory Lens:": ${text}`);
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'Extracting skills from past chats' })
        .first().waitFor({ state: 'hidden' });
      await settled(keyToast);
      await page.mouse.move(800, 500);
      await screenshot(page, `set-key-action-${theme}`);
      if (theme === 'light') {
        // Dismissed here; the second time its button is used.
        await keyToast.hover();
        await keyToast.locator('.codicon-notifications-clear, .codicon-close').first().click();
        await keyToast.waitFor({ state: 'hidden' });
      }
    }
    await keyToast.locator('.monaco-button', { hasText: 'Set Gemini API Key' }).first().click();
    const keyBox = page.locator('.quick-input-widget', { hasText: 'Gemini API Key' }).first();
    await keyBox.waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await keyBox.waitFor({ state: 'hidden' });
    restoreSettings();

    step('no API key: its button runs "Set Gemini API Key"; a key makes the empty chat show');
    await page.mouse.move(800, 500);
    await screenshot(page, 'views-nokey');
    await chat.locator('#set-key').click();
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible' });
    if ((await input.getAttribute('type')) !== 'password') throw new Error('the API key box is not a password box');
    await input.fill('e2e-not-a-real-key');
    await input.press('Enter');
    await emptyState.waitFor({ state: 'visible' });
    await keyState.waitFor({ state: 'hidden' });
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'Gemini API key saved' }).first()
      .waitFor({ state: 'visible' });
  }
  await chat.locator('#chat-input:not([disabled])').waitFor({ state: 'visible' });

  step('screenshot');
  await page.mouse.move(800, 500);
  await screenshot(page, 'views');

  // After "Restart Server" the Memory view says the server is starting (not "No memory files
  // found yet"), and the status item too; then the tree comes back. Once per theme.
  const restoreSettings = saveSettings(workspace);
  for (const theme of ['light', 'dark']) {
    step(`"Restart Server": the Memory view and the status item say "starting…" (${theme})`);
    await useTheme(page, workspace, theme);
    await runCommand(page, 'Memory Lens: Restart Server');
    const startingRow = memory.locator('.monaco-list-row', { hasText: 'Starting the Memory Lens server…' }).first();
    await startingRow.waitFor({ state: 'visible' });
    await screenshot(page, `starting-${theme}`);
    if (await memory.getByText('No memory files found yet').count()) throw new Error('the Memory view says "No memory files found yet" while starting');
    step(`the Memory tree comes back after the restart (${theme})`);
    for (const tier of TIERS) await row(tier).waitFor({ state: 'visible' });
    await page.locator(MEMORY_STATUS, { hasText: /memory files? · [\d,]+ chars/ }).waitFor({ state: 'visible' });
  }
  restoreSettings();
});
