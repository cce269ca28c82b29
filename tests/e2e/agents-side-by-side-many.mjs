// Side by side with more agents than fit (docs/reference.md "Which agent, which version"): the
// demo with five agents in use, in a 1280 px window. "Show What Each Agent Reads…" offers "Side
// by side" naming the first two "(+N as tabs)"; picking it opens two context columns beside the
// file, the first two agents in the order they are in use, and the others (the three more in
// use, then any agent whose files the demo holds) as tabs in the second column, a click away.
// Screenshots: agents-side-by-side-many-{light,dark}.png.
import { rmSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, waitForServer,
  runCommand, quickInputTitled, waitInPage,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const AGENTS = ['claude', 'codex', 'gemini@0.43', 'copilot', 'cursor'];

await runScenario('agents-side-by-side-many', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace({ settings: { 'memlens.agents': AGENTS } });
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step('open the workbench and services/api/app.py');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await quickOpen(page, 'services/api/app.py');
  await waitForServer(page);

  step('"Side by side" names the first two agents and how many more open as tabs');
  await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
  await quickInputTitled(page, 'What each agent reads for services/api/app.py');
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ state: 'visible' });
  const first = (await rows.first().innerText()).replace(/\s+/g, ' ');
  // In use first, in the order pinned; then any other agent whose files the demo holds.
  const more = /Side by side ?Claude Code · Codex \(\+(\d+) as tabs\)/.exec(first);
  if (!more || Number(more[1]) < 3) throw new Error(`first item: ${first}`);
  await rows.first().click();

  step('two context columns beside the file; the second holds the other agents as tabs');
  const layout = await waitInPage(page, 'two context columns, the last with the other agents', (extra) => {
    const titles = [...document.querySelectorAll('.editor-group-container')]
      .map((g) => [...g.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('data-resource-name')))
      .filter((names) => names.some((n) => n && n.endsWith('Context.md')));
    return titles.length === 2 && titles[0].join() === 'Claude Code Context.md'
      && titles[1].length === 1 + extra && titles[1][0] === 'Codex Context.md'
      && ['Gemini CLI Context.md', 'GitHub Copilot CLI Context.md', 'Cursor Context.md']
        .every((n) => titles[1].includes(n))
      && titles;
  }, Number(more[1]), {
    describe: () => [...document.querySelectorAll('.editor-group-container')]
      .map((g) => [...g.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('data-resource-name'))),
  });
  if (!layout) throw new Error('no layout');

  step('the second column shows its first agent (Codex), the others a click away');
  await waitInPage(page, 'Codex\'s context active in the second column', () => {
    const groups = [...document.querySelectorAll('.editor-group-container')]
      .filter((g) => g.querySelector('.tab[data-resource-name$="Context.md"]'));
    const second = groups[1];
    const active = second && second.querySelector('.tab.active');
    return active && active.getAttribute('data-resource-name') === 'Codex Context.md';
  });
  await page.locator('.tab[data-resource-name="Cursor Context.md"]').click();
  await waitInPage(page, 'Cursor\'s context shown after one click', () => {
    const tab = document.querySelector('.tab.active[data-resource-name="Cursor Context.md"]');
    return Boolean(tab);
  });
  await page.locator('.tab[data-resource-name="Codex Context.md"]').click();
  await screenshotThemes(page, workspace, 'agents-side-by-side-many');
}, { viewport: { width: 1280, height: 800 } });
