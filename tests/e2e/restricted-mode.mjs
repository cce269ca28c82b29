// Restricted Mode explained (issue 13): a folder opened with VS Code's workspace trust on opens
// untrusted, and Memory Lens says so instead of a silent zero: the status item reads
// "Restricted Mode · 1 memory file · N chars" (the global memory it shows anyway) and its
// tooltip says why, the line-1 lens and hover of GEMINI.md say the folder is not trusted and
// what is shown anyway (with a "Manage Workspace Trust" link), and the Memory view shows the
// same notice above a "Manage Workspace Trust…" row, which opens VS Code's Workspace Trust
// editor.
// The harness's code-server runs with --disable-workspace-trust, so this test starts one of
// its own (scripts/vscode/start.sh with MEMLENS_WORKSPACE_TRUST=1) on a copy of the demo,
// with the same extension, Python and HOME, and stops it at the end.
// Screenshots: artifacts/e2e/restricted-status-{light,dark}.png (the status item's tooltip),
// restricted-hover-{light,dark}.png (lens and hover on line 1), restricted-view-{light,dark}.png
// (the Memory view), restricted-matrix-{light,dark}.png (the Agent Matrix: Gemini CLI's project
// GEMINI.md not read, the folder not trusted) and restricted-trust-editor.png (after the click).
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, copyWorkspace, startCodeServer, openWorkbench, openFromExplorer, MEMORY_STATUS,
  waitForCodeLens, hoverLineUntil, hoverUntil, openMemoryLens, viewPane, treeRow, screenshot, log,
  runCommand,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const NOTICE = 'Restricted Mode: this folder is not trusted, so its GEMINI.md files are not read';

function findFiles(dir, match) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && match(e.name))
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

await runScenario('restricted-mode', async ({ page, step, cleanup }) => {
  step('copy the demo; start a code-server with workspace trust on');
  const { root, workspace } = copyWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const { url, state } = await startCodeServer(workspace, cleanup, { MEMLENS_WORKSPACE_TRUST: '1' });
  log(`restricted-mode: code-server with workspace trust at ${url}`);

  step('open the folder: it is in Restricted Mode');
  await openWorkbench(page, url, { expect: ['GEMINI.md'] });
  await page.locator('[id="status.workspaceTrust"], .statusbar-item', { hasText: 'Restricted Mode' }).first()
    .waitFor({ state: 'visible' });

  step('open GEMINI.md: the status item says Restricted Mode and what it counts');
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  const status = page.locator(MEMORY_STATUS);
  await status.filter({ hasText: 'Restricted Mode' }).waitFor({ state: 'visible' });
  const statusText = (await status.innerText()).replace(/\u00a0/g, ' ').trim();
  if (!/Restricted Mode · 1 memory file · [\d,]+ chars/.test(statusText)) throw new Error(`status item: ${statusText}`);

  step('the status item\'s tooltip explains it and links to Manage Workspace Trust');
  const showTooltip = () => hoverUntil(page, status, NOTICE);
  const tip = await showTooltip();
  const tipText = (await tip.innerText()).replace(/\u00a0/g, ' ');
  if (!tipText.includes('Manage Workspace Trust')) throw new Error(`status tooltip lacks the action: ${tipText}`);
  if (!tipText.includes('Shown anyway: your global memory (1 file)')) throw new Error(`status tooltip: ${tipText}`);
  await screenshotThemes(page, workspace, 'restricted-status', async () => { await showTooltip(); });

  step('line 1 of GEMINI.md: the lens and the hover say so too');
  await page.mouse.move(700, 500);
  const lens = await waitForCodeLens(page, /Restricted Mode/);
  if (!/^1 memory file · [\d,]+ chars · ~[\d,]+ tokens · Restricted Mode$/.test(lens.trim())) throw new Error(`lens: ${lens}`);
  const hover = await hoverLineUntil(page, 1, NOTICE);
  if (!hover.includes('Manage Workspace Trust')) throw new Error(`hover lacks the action: ${hover}`);
  await screenshotThemes(page, workspace, 'restricted-hover', async () => { await hoverLineUntil(page, 1, NOTICE); });

  step('the Memory view: the notice and a "Manage Workspace Trust…" row');
  await page.mouse.move(700, 500);
  await openMemoryLens(page);
  const memory = viewPane(page, 'Memory');
  await memory.locator('.pane-body', { hasText: NOTICE }).first().waitFor({ state: 'visible' });
  const trustRow = treeRow(memory, 'Manage Workspace Trust…');
  await trustRow.waitFor({ state: 'visible' });
  await treeRow(memory, 'Global').waitFor({ state: 'visible' });
  if (await treeRow(memory, 'Project (loaded at start-up)').count()) throw new Error('project memory is listed in Restricted Mode');
  // The open GEMINI.md is listed apart: not read (not "loaded just in time").
  await treeRow(memory, 'Not read (Restricted Mode)').waitFor({ state: 'visible' });
  if (await treeRow(memory, 'Subfolders (loaded just in time)').count()) throw new Error('files listed as loaded just in time in Restricted Mode');
  await page.mouse.move(700, 500);
  await screenshotThemes(page, workspace, 'restricted-view');

  step('the Agent Matrix in Restricted Mode: Gemini CLI reads no project GEMINI.md, and says why');
  await runCommand(page, 'Memory Lens: Show Agent Matrix');
  await page.mouse.move(700, 500);
  // The Chat view's webview is open in the side bar too: the panel is the last one opened.
  const frame = page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
  await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });
  const labels = (await frame.locator('thead th').allInnerTexts()).map((h) => h.split('\n')[0].trim());
  const geminiColumn = labels.indexOf('Gemini CLI');
  if (geminiColumn < 1) throw new Error(`no Gemini CLI column: ${JSON.stringify(labels)}`);
  const cellOf = (file, column) => frame.locator('tr', {
    has: frame.locator('th.file', { hasText: file }),
  }).first().locator('td').nth(column - 1);
  const projectCell = cellOf(/^GEMINI\.md/, geminiColumn);
  const projectText = (await projectCell.innerText()).replace(/\s+/g, ' ');
  const projectTitle = (await projectCell.getAttribute('title')) ?? '';
  if (!/not read/.test(projectText) || !projectTitle.includes('the folder is not trusted')) {
    throw new Error(`Gemini CLI × GEMINI.md in Restricted Mode: "${projectText}" / "${projectTitle}"`);
  }
  // The global memory is read anyway, as the status item and the Memory view say.
  // (HOME is outside this copy of the demo: the row is named from HOME.)
  const globalText = (await cellOf(/^~\/\.gemini\/GEMINI\.md/, geminiColumn).innerText()).replace(/\s+/g, ' ');
  if (!globalText.includes('at start-up')) throw new Error(`Gemini CLI × the global GEMINI.md: "${globalText}"`);
  await screenshotThemes(page, workspace, 'restricted-matrix', async () => {
    await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });
  });

  step('"Manage Workspace Trust…" opens VS Code\'s Workspace Trust editor');
  await trustRow.click();
  // (VS Code 1.139 shows it as a modal editor over the workbench.)
  await page.getByText('You are in Restricted Mode').first().waitFor({ state: 'visible' });
  await screenshot(page, 'restricted-trust-editor');

  step('the Memory Lens output channel is quiet: no pygls warnings, no progress characters');
  const channel = findFiles(path.join(state, 'user-data', 'logs'), (name) => name.endsWith('Memory Lens.log'));
  if (!channel.length) throw new Error(`no Memory Lens output channel log under ${state}/user-data/logs`);
  const text = channel.map((f) => readFileSync(f, 'utf8')).join('\n');
  log(`restricted-mode: the output channel:\n${text.split('\n').slice(0, 40).join('\n')}`);
  const noisy = text.split('\n').filter((l) => /pygls|WARNING|Traceback|\r|[━█▏▎▍▌▋▊▉]/.test(l));
  if (noisy.length) throw new Error(`noisy output channel:\n${noisy.join('\n')}`);
});
