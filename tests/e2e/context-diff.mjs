// Effective-context diff after a save (issue 14): in a copy of the demo, AGENTS.md gets a new
// line and is saved (ctrl+s). CLAUDE.md imports AGENTS.md and GitHub Copilot CLI reads it, so the
// server's memlens/contextChanged names Claude Code and Copilot CLI (the agents the editor shows
// here: no agent is on code-server's PATH, so those whose files apply) and a folder count, and
// not Codex (neither installed nor with a file only Codex reads) nor Gemini CLI; the notification says so with "Show changes", which (several agent/folder pairs)
// opens a quick pick; picking "Claude Code: workspace folder" opens VS Code's diff editor on
// two read-only documents: what Claude Code sent at start before the save (left, without the
// line) and after (right, with it), titled "AGENTS.md → what Claude Code reads in demo/
// (before ↔ after)".
// Screenshots: artifacts/e2e/context-diff-notification.png (the toast),
// context-diff-pick.png (the quick pick), context-diff-{light,dark}.png (the diff editor).
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  screenshot, waitInPage, settled, TIMEOUT,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const ADDED = '- Write a test for every bug fix.';
const KEPT = 'Keep pull requests under 400 changed lines.';
const ACTIVE = '.editor-group-container.active';

await runScenario('context-diff', async ({ page, step, cleanup }) => {
  step('copy the demo with a HOME of its own');
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const agentsFile = path.join(workspace, 'AGENTS.md');
  const name = path.basename(workspace);

  step('open the workbench on the copy and AGENTS.md; wait for the language server');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['AGENTS.md'] });
  await openFromExplorer(page, 'AGENTS.md', { contains: 'Run `make test`' });
  await waitForServer(page);

  step('add a line at the end of AGENTS.md and save it (ctrl+s)');
  await page.locator(`${ACTIVE} .monaco-editor .view-lines`).first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(`${ADDED}\n`);
  await page.keyboard.press('Control+s');
  for (let i = 0; !readFileSync(agentsFile, 'utf8').includes(ADDED); i += 1) {
    if (i * 100 > TIMEOUT) throw new Error('AGENTS.md was not saved with the new line');
    await page.waitForTimeout(100);
  }
  await waitInPage(page, 'the AGENTS.md tab saved (not dirty)', (sel) =>
    !document.querySelector(`${sel} .tab.active.dirty`), ACTIVE);

  step('the notification names Claude Code, Copilot CLI and their folders, with "Show changes"');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'AGENTS.md changes what' }).first();
  await toast.waitFor({ state: 'visible' });
  const message = (await toast.innerText()).replace(/\s+/g, ' ');
  console.log(`context-diff: notification: ${message}`);
  if (!/what Claude Code reads in \d+ folders?/.test(message)) throw new Error(`no Claude Code in: ${message}`);
  if (!/what GitHub Copilot CLI reads in \d+ folders?/.test(message)) throw new Error(`no Copilot CLI in: ${message}`);
  // Compared: the agents shown for the folder (Agents view), not Codex by default.
  if (/Codex/.test(message)) throw new Error(`Codex is not shown here, yet named: ${message}`);
  if (/Gemini CLI/.test(message)) throw new Error(`Gemini CLI does not read AGENTS.md here: ${message}`);
  const show = toast.locator('.monaco-button', { hasText: 'Show changes' }).first();
  await show.waitFor({ state: 'visible' });
  await page.mouse.move(1200, 600);
  await screenshot(page, 'context-diff-notification');

  step('"Show changes": a quick pick of (agent, folder); pick Claude Code in the workspace folder');
  await show.click();
  const claudeRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Claude Code: workspace folder' }).first();
  await claudeRow.waitFor({ state: 'visible' });
  const rows = await page.locator('.quick-input-widget .monaco-list-row').allInnerTexts();
  console.log(`context-diff: pick rows: ${rows.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`);
  if (!rows.some((r) => r.includes('GitHub Copilot CLI: workspace folder'))) throw new Error(`no Copilot CLI row: ${rows.join(' | ')}`);
  await screenshot(page, 'context-diff-pick');
  await claudeRow.click();

  step('the diff editor: before (left) without the line, after (right) with it');
  const title = `AGENTS.md → what Claude Code reads in ${name}/ (before ↔ after)`;
  const tab = page.locator(`${ACTIVE} .tabs-container .tab.active`, { hasText: title }).first();
  await tab.waitFor({ state: 'visible' });
  const diff = page.locator(`${ACTIVE} .monaco-diff-editor`).first();
  await diff.waitFor({ state: 'visible' });
  const sides = await waitInPage(page, 'both sides of the diff', ([sel, added, kept]) => {
    const text = (side) => document.querySelector(`${sel} .monaco-diff-editor .editor.${side} .view-lines`)
      ?.textContent.replace(/\u00a0/g, ' ') ?? '';
    const left = text('original');
    const right = text('modified');
    const inserted = document.querySelector(`${sel} .monaco-diff-editor .editor.modified .line-insert, ${sel} .monaco-diff-editor .editor.modified .char-insert`);
    if (!left.includes(kept) || !right.includes(kept) || !right.includes(added) || left.includes(added) || !inserted) return null;
    return { left: left.slice(0, 200), right: right.slice(0, 200) };
  }, [ACTIVE, ADDED, KEPT], {
    describe: ([sel]) => document.querySelector(`${sel} .monaco-diff-editor`)?.textContent.slice(0, 400),
  });
  console.log(`context-diff: left starts ${JSON.stringify(sides.left)}`);
  for (const side of ['original', 'modified']) {
    const text = await page.locator(`${ACTIVE} .monaco-diff-editor .editor.${side} .view-lines`).first().innerText();
    if (!text.includes('<system-reminder>')) throw new Error(`the ${side} side is not what Claude Code sends: ${text.slice(0, 200)}`);
  }

  step('both sides are read-only');
  await page.locator(`${ACTIVE} .monaco-diff-editor .editor.modified .view-lines`).first().click({ position: { x: 5, y: 5 } });
  await page.keyboard.type('x');
  await page.locator(`${ACTIVE} .monaco-editor-overlaymessage`, { hasText: /read-only|Cannot edit/i }).first()
    .waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  // Leave the caret after the last line (no word highlight on the first line in the shots).
  await page.locator(`${ACTIVE} .monaco-diff-editor .editor.modified .view-lines`).first().click({ position: { x: 400, y: 600 } });
  await settled(diff);

  step('screenshots, light and dark');
  await page.mouse.move(1200, 600);
  await screenshotThemes(page, workspace, 'context-diff');
});
