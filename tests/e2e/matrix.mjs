// The Agent Matrix (issue 26) in the real VS Code, on the demo: "Memory Lens: Show Agent
// Matrix" (the status item's tooltip link, the command palette) opens a panel whose table has a row per memory file and a column per agent (the
// demo has files of every agent's own), each cell
// saying when that agent reads the file; arrow keys move between cells; Enter on Claude Code ×
// CLAUDE.md opens Claude Code's view at that file. Screenshots: matrix-{light,dark}.png.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  runCommand, screenshot, hoverUntil, MEMORY_STATUS,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

await runScenario('matrix', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  // A skill below the working folder: Claude Code lists it when it reads a file under web/.
  const skill = path.join(workspace, 'web', '.claude', 'skills', 'lint-web');
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, 'SKILL.md'),
    '---\nname: lint-web\ndescription: Lint the web client before a commit.\n---\nRun the linter.\n');

  step('open the workbench and GEMINI.md; wait for the server');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('the status item\'s tooltip links to the Agent Matrix; the link opens the panel');
  const tip = await hoverUntil(page, page.locator(MEMORY_STATUS).first(), 'Show Agent Matrix');
  await tip.locator('a', { hasText: 'Show Agent Matrix' }).first().click();
  await page.mouse.move(700, 500);
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });
  const headers = await frame.locator('thead th').allInnerTexts();
  const labels = headers.map((h) => h.split('\n')[0].trim());
  // Every agent with files of its own in the demo has a column, conventions labelled (Codex
  // reads only the AGENTS.md the convention's column covers: none unless it is in use).
  for (const want of ['Gemini CLI', 'Claude Code', 'AGENTS.md (convention)',
    'GitHub Copilot CLI', 'VS Code chat', 'Cursor (convention)', 'Antigravity CLI (convention)']) {
    if (!labels.includes(want)) throw new Error(`no column for ${want}: ${JSON.stringify(labels)}`);
  }
  const cellOf = async (file, agent) => {
    const row = frame.locator('tr', { has: frame.locator('th.file', { hasText: new RegExp(`^${file.replace('.', '\\.')}`) }) }).first();
    const column = labels.indexOf(agent);
    return row.locator('td').nth(column - 1);
  };
  const expectations = [
    ['CLAUDE.md', 'Claude Code', 'at start-up'], ['CLAUDE.md', 'Gemini CLI', 'not read'],
    ['AGENTS.md', 'AGENTS.md (convention)', 'at start-up'], ['.claude/rules/python.md', 'Claude Code', 'on read'],
    ['.github/copilot-instructions.md', 'GitHub Copilot CLI', 'at start-up'],
    ['.cursor/rules/web.mdc', 'Cursor (convention)', 'on read'],
    ['web/.claude/skills/lint-web/SKILL.md', 'Claude Code', '◇ listed on read'],
  ];
  for (const [file, agent, word] of expectations) {
    const cell = await cellOf(file, agent);
    const text = (await cell.innerText()).replace(/\s+/g, ' ');
    if (word === 'not read') {
      // Not the agent's kind of file: a dash in the cell, the reason in its tooltip
      // (MatrixCell.foreign).
      const title = await cell.getAttribute('title');
      if (text.trim() !== '–' || !title.includes('not read — not its file')) {
        throw new Error(`${agent} × ${file}: "${text}" / "${title}", expected a dash saying not its file`);
      }
    } else if (!text.includes(word)) throw new Error(`${agent} × ${file}: "${text}", expected "${word}"`);
  }
  const maps = await frame.locator('section.map h3').allInnerTexts();
  if (maps.length !== labels.length - 1) throw new Error(`context maps: ${JSON.stringify(maps)}`);
  await screenshotThemes(page, workspace, 'matrix', async () => {
    await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });
  });

  step('the command palette\'s "Show Agent Matrix" brings the same panel back');
  await runCommand(page, 'Memory Lens: Show Agent Matrix');
  await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });

  step('arrow keys move between cells; Enter on Claude Code × CLAUDE.md opens its view there');
  const first = frame.locator('td.cell').first();
  await first.focus();
  await first.press('ArrowRight');
  const focused = await frame.locator('td.cell:focus').getAttribute('data-col');
  if (focused !== '2') throw new Error(`ArrowRight moved focus to column ${focused}`);
  const target = await cellOf('CLAUDE.md', 'Claude Code');
  await target.focus();
  await target.press('Enter');
  const tab = page.locator('.tabs-container .tab.active', { hasText: 'Claude Code Context.md' });
  await tab.waitFor({ state: 'visible' });
  await screenshot(page, 'matrix-claude-view');
});
