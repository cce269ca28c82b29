// The editor follows the agents you use (docs/reference.md "Which agent, which version"). The demo
// with `memlens.agents` set to ["gemini@0.43", "claude", "codex"]: the status item names the chosen
// agent ("… · Gemini CLI"; a pinned profile has no installed version to show), "Show What Each
// Agent Reads…" offers "Side by side" first, and picking it opens the three agents' views of
// services/api/app.py beside the file — Gemini CLI's merged context and Claude Code's reminders
// in two columns, Codex's AGENTS.md message a tab behind Claude Code's with every other agent
// whose files the demo holds (at most two columns: extension/src/mergedContext.ts). Screenshots: agents-side-by-side-{light,dark}.png.
import path from 'node:path';
import { rmSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, waitForServer,
  runCommand, quickInputTitled, waitInPage, MEMORY_STATUS,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

await runScenario('agents-side-by-side', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace({ settings: { 'memlens.agents': ['gemini@0.43', 'claude', 'codex'] } });
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step('open the workbench and services/api/app.py');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await quickOpen(page, 'services/api/app.py');
  await waitForServer(page);

  step('the status item names the chosen agent: Gemini CLI');
  await waitInPage(page, 'the status item with the agent', ([sel]) => {
    const el = document.querySelector(sel);
    return el && /memory files? · [\d,]+ chars · ~[\d,]+ tokens · Gemini CLI$/.test(el.textContent.trim());
  }, [MEMORY_STATUS]);

  step('run "Memory Lens: Show What Each Agent Reads…": "Side by side" comes first, naming the three agents');
  await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
  await quickInputTitled(page, 'What each agent reads for services/api/app.py');
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor({ state: 'visible' });
  const first = (await rows.first().innerText()).replace(/\s+/g, ' ');
  if (!/Side by side/.test(first) || !/Gemini CLI · Claude Code \(\+\d+ as tabs\)/.test(first)) {
    throw new Error(`first item: ${first}`);
  }
  await rows.first().click();

  step('two context columns open beside the file; Codex\'s tab is behind Claude Code\'s');
  await waitInPage(page, 'Gemini CLI\'s column, then Claude Code\'s with Codex\'s tab', () => {
    const titles = [...document.querySelectorAll('.editor-group-container')]
      .map((g) => [...g.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('data-resource-name')))
      .filter((names) => names.some((n) => n && n.endsWith('Context.md')));
    return titles.length === 2 && titles[0].join() === 'Gemini CLI Context.md'
      && titles[1][0] === 'Claude Code Context.md' && titles[1].includes('Codex Context.md');
  });
  await waitInPage(page, 'Gemini CLI\'s and Claude Code\'s texts', () => {
    const text = [...document.querySelectorAll('.editor-group-container .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return text.includes('--- Context from:') && text.includes('<system-reminder>');
  });
  await page.locator('.tab[data-resource-name="Codex Context.md"]').click();
  await waitInPage(page, 'Codex\'s text, one click away', () => {
    const text = [...document.querySelectorAll('.editor-group-container .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return text.includes('--- Context from:') && text.includes('# AGENTS.md instructions for');
  });
  await screenshotThemes(page, workspace, 'agents-side-by-side');
});
