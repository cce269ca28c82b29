// Add Memory into a Claude Code memory folder that the repository chose (issue 30): a copy of
// the demo whose own .claude/settings.json says {"autoMemoryDirectory": "~/repo-chosen-memory"}
// (a cloned repository can commit that file), with a HOME of its own (isolatedWorkspace: the
// copy's .home, memlens.home in its settings), so the folder is HOME/repo-chosen-memory.
// "Memory Lens: Add Memory…", clicked as a user: the fact, then the picker, whose "Claude Code
// (auto memory)" row names that folder and says the repository chose it (in which settings
// file) and that the user will be asked. Picked: a modal names the folder and the settings
// file, with "Write there". Cancel first: nothing is created under HOME/repo-chosen-memory
// (the language server reads and writes nothing there until the request names the folder in
// `confirmedFolder`). Then again, "Write there": the type, the diff, "Save Memory" (as
// claude-memory.mjs) → MEMORY.md and the topic file are written there.
// Screenshots (artifacts/e2e): claude-memory-repository-pick-{light,dark}.png (the picker with
// the row), claude-memory-repository-modal-{light,dark}.png (the modal).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  runCommand, quickInputTitled, settled, screenshot, waitInPage, log,
} from './lib/vscode.mjs';
import { saveSettings, screenshotThemes } from './lib/themes.mjs';

const FACT = 'Release notes go in docs/releases, one file per version';
const ROW = 'Claude Code (auto memory)';
const DIALOG = '.monaco-dialog-box';
const QUICK = '.quick-input-widget:not(.quick-input-widget-closing)';

// The whole text of an element, non-breaking spaces as spaces.
const text = async (locator) => (await locator.innerText()).replace(/\u00a0/g, ' ');

await runScenario('claude-memory-repository-folder', async ({ page, step, cleanup }) => {
  step('copy the demo; its .claude/settings.json names ~/repo-chosen-memory');
  const { root, workspace, home } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const settingsFile = path.join(workspace, '.claude', 'settings.json');
  mkdirSync(path.dirname(settingsFile), { recursive: true });
  writeFileSync(settingsFile, `${JSON.stringify({ autoMemoryDirectory: '~/repo-chosen-memory' })}\n`);
  const folder = path.join(home, 'repo-chosen-memory');
  // Claude Code's default folder for this workspace, where nothing may be written either.
  const defaultFolder = path.join(home, '.claude', 'projects', workspace.replace(/[^a-zA-Z0-9]/g, '-'), 'memory');
  const nothingWritten = (when) => {
    for (const f of [folder, defaultFolder]) {
      if (existsSync(f)) throw new Error(`${when}: ${f} exists (${readdirSync(f).join(', ') || 'empty'})`);
    }
  };

  step('open the workbench on the copy; wait for the language server');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['CLAUDE.md'] });
  await openFromExplorer(page, 'CLAUDE.md');
  await waitForServer(page);

  // Add Memory up to the picker; returns the Claude Code row, once it names the folder.
  const pickerRow = async () => {
    await runCommand(page, 'Memory Lens: Add Memory…', { waitHidden: false });
    const factBox = await quickInputTitled(page, 'Add Memory');
    await factBox.fill(FACT);
    await factBox.press('Enter');
    await quickInputTitled(page, 'Where should it be saved?');
    const row = page.locator(`${QUICK} .monaco-list-row`, { hasText: ROW }).first();
    await row.waitFor({ state: 'visible' });
    return row;
  };
  // Picks the row; returns the modal.
  const pick = async (row) => {
    await row.click();
    const dialog = page.locator(DIALOG).first();
    await dialog.waitFor({ state: 'visible' });
    await settled(dialog);
    return dialog;
  };

  step('"Add Memory…": the Claude Code row names the folder and says the repository chose it');
  const row = await pickerRow();
  const rowText = await text(row);
  log(`claude-memory-repository-folder: the row: ${rowText.replace(/\n/g, ' | ')}`);
  for (const want of [folder, 'Chosen by the repository (.claude/settings.json): you will be asked to confirm']) {
    if (!rowText.includes(want)) throw new Error(`the "${ROW}" row does not say "${want}": ${rowText}`);
  }
  // The row's second line is read whole: no element holding it is cut off (an ellipsis).
  const cut = await row.evaluate((el) => [...el.querySelectorAll('*')]
    .filter((e) => e.textContent.includes('Chosen by the repository') && e.scrollWidth > e.clientWidth + 1)
    .map((e) => `${e.className}: ${e.scrollWidth} > ${e.clientWidth}`));
  if (cut.length) throw new Error(`the row's second line is cut off (${cut.join('; ')}): ${rowText}`);
  // The warning icon of the row's detail ($(warning)) is drawn, not printed as text.
  if (rowText.includes('$(')) throw new Error(`the row prints an icon's name: ${rowText}`);
  nothingWritten('with the picker open');

  step('screenshots of the picker (light, dark)');
  const restore = saveSettings(workspace);
  await row.hover();
  const pickShots = await screenshotThemes(page, workspace, 'claude-memory-repository-pick', async () => {
    await row.hover();
    await settled(page.locator(QUICK).first());
  });

  step('pick it: a modal names the folder and the settings file, with "Write there"');
  let dialog = await pick(row);
  const dialogText = await text(dialog);
  log(`claude-memory-repository-folder: the modal: ${dialogText.replace(/\n/g, ' | ')}`);
  for (const want of [
    `The repository chose where Claude Code's memory is written: ${folder}`,
    `autoMemoryDirectory in ${settingsFile}`,
    'only if you say so',
  ]) {
    if (!dialogText.includes(want)) throw new Error(`the modal does not say "${want}": ${dialogText}`);
  }
  const buttons = (await dialog.locator('.dialog-buttons .monaco-button').allInnerTexts()).map((b) => b.trim());
  if (!buttons.includes('Write there') || !buttons.includes('Cancel')) {
    throw new Error(`the modal's buttons: ${buttons.join(', ')}`);
  }
  const modalShots = await screenshotThemes(page, workspace, 'claude-memory-repository-modal', () => settled(dialog));
  restore();

  step('Cancel: the modal closes, nothing is created under HOME/repo-chosen-memory');
  await dialog.locator('.dialog-buttons .monaco-button', { hasText: /^\s*Cancel\s*$/ }).first().click();
  await dialog.waitFor({ state: 'hidden' });
  await page.locator(QUICK).waitFor({ state: 'hidden' });
  // No diff editor and no review notification: the command ended there.
  if (await page.locator('.editor-group-container .monaco-diff-editor').count()) throw new Error('a diff opened after Cancel');
  nothingWritten('after Cancel');

  step('again: "Write there", then the type');
  dialog = await pick(await pickerRow());
  await dialog.locator('.dialog-buttons .monaco-button', { hasText: /^\s*Write there\s*$/ }).first().click();
  await dialog.waitFor({ state: 'hidden' });
  const typeTitle = await waitInPage(page, 'the type pick ("The memory\'s type (…)")', () => {
    const title = document.querySelector('.quick-input-widget .quick-input-title')?.textContent.trim() ?? '';
    return title.startsWith("The memory's type (") ? title : null;
  });
  const name = typeTitle.slice("The memory's type (".length, -1);
  nothingWritten('before the type is chosen');
  await page.locator(`${QUICK} .monaco-list-row`, {
    has: page.locator('.label-name', { hasText: /^\s*project\s*$/ }),
  }).first().click();

  step('the diff shows the new topic file; the notification its MEMORY.md line; nothing written yet');
  const diff = page.locator('.editor-group-container.active .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible' });
  await waitInPage(page, 'the new topic file on the right of the diff', (want) => {
    const shown = [...document.querySelectorAll('.editor-group-container.active .monaco-diff-editor .view-lines')]
      .map((e) => e.textContent).join('\n').replace(/\u00a0/g, ' ');
    return want.every((w) => shown.includes(w));
  }, [`name: ${name}`, 'type: project', FACT]);
  const topicFile = path.join(folder, `${name}.md`);
  await page.locator('.notifications-toasts .notification-toast', { hasText: `Review the memory for ${topicFile}` })
    .first().waitFor({ state: 'visible' });
  nothingWritten('before "Save Memory"');
  await page.mouse.move(1200, 600);
  await screenshot(page, 'claude-memory-repository-review');

  step('"Save Memory": MEMORY.md and the topic file are written in HOME/repo-chosen-memory');
  await page.locator('.editor-group-container.active .editor-actions .action-label[aria-label="Save Memory"]').first().click();
  await diff.waitFor({ state: 'hidden' });
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'Saved a project memory for Claude Code' })
    .first().waitFor({ state: 'visible' });
  const topic = readFileSync(topicFile, 'utf8');
  const wantTopic = `---\nname: ${name}\ndescription: ${FACT}\nmetadata:\n  type: project\n---\n\n${FACT}\n`;
  if (topic !== wantTopic) throw new Error(`the topic file:\n${topic}`);
  const index = readFileSync(path.join(folder, 'MEMORY.md'), 'utf8');
  if (index !== `- [${name}](${name}.md) \u2014 ${FACT}\n`) throw new Error(`MEMORY.md:\n${index}`);
  const files = readdirSync(folder).sort();
  if (files.join(',') !== ['MEMORY.md', `${name}.md`].sort().join(',')) throw new Error(`in ${folder}: ${files.join(', ')}`);
  if (existsSync(defaultFolder)) throw new Error(`written into Claude Code's default folder too: ${defaultFolder}`);
  console.log(`claude-memory-repository-folder: screenshots ${[...pickShots, ...modalShots].join(', ')}`);
});
