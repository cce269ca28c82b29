// "Side by side" is always offered (issue 24: the picker's placeholder promised it, but it
// appeared only once `memlens.agents` named several agents). The demo with no agent pinned and
// none but Gemini CLI in use: the server says which agents have files in the folder
// (CLAUDE.md, .claude/rules and AGENTS.md are there), and "Show What Each Agent Reads…" offers
// "Side by side" first, naming Gemini CLI and Claude Code, the agents with files marked "files
// here"; picking it opens their views in columns beside the file.
import { rmSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, waitForServer,
  runCommand, quickInputTitled, waitInPage,
} from './lib/vscode.mjs';

await runScenario('agents-picker-default', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step('open the workbench and services/api/app.py (no memlens.agents set)');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await quickOpen(page, 'services/api/app.py');
  await waitForServer(page);

  step('run "Memory Lens: Show What Each Agent Reads…": "Side by side" comes first');
  await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
  await quickInputTitled(page, 'What each agent reads for services/api/app.py');
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ state: 'visible' });
  const first = (await rows.first().innerText()).replace(/\s+/g, ' ');
  if (!/Side by side/.test(first) || !/Gemini CLI/.test(first) || !/Claude Code/.test(first)) {
    throw new Error(`first item: ${first}`);
  }
  const all = (await rows.allInnerTexts()).join(' | ').replace(/\s+/g, ' ');
  if (!/files here/.test(all)) throw new Error(`no agent is marked "files here": ${all}`);
  await rows.first().click();

  step('the agents\' context tabs open, each in a column of its own');
  await waitInPage(page, 'Gemini CLI\'s and Claude Code\'s context tabs in columns of their own', () => {
    const groups = [...document.querySelectorAll('.editor-group-container')];
    const titles = groups.map((g) => [...g.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('data-resource-name')));
    return ['Gemini CLI Context.md', 'Claude Code Context.md']
      .every((n) => titles.some((t) => t.length === 1 && t[0] === n));
  });
});
