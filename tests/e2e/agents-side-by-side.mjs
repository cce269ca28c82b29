// The editor follows the agents you use (docs/reference.md "Which agent, which version"). The demo
// with `memlens.agents` set to ["gemini@0.43", "claude", "codex"]: the status item names the chosen
// agent ("… · Gemini CLI"; a pinned profile has no installed version to show), "Show What Each
// Agent Reads…" offers "Side by side" first, and picking it opens the three agents' views of
// services/api/app.py in three columns beside the file — Gemini CLI's merged context, Claude Code's
// reminders, Codex's AGENTS.md message. Screenshots: agents-side-by-side-{light,dark}.png.
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
  if (!/Side by side/.test(first) || !/Gemini CLI · Claude Code · Codex/.test(first)) {
    throw new Error(`first item: ${first}`);
  }
  await rows.first().click();

  step('three context tabs open in three more columns, each with its agent\'s text');
  const tabs = ['Gemini CLI Context.md', 'Claude Code Context.md', 'Codex Context.md'];
  await waitInPage(page, 'three editor groups with the three context tabs', (names) => {
    const groups = [...document.querySelectorAll('.editor-group-container')];
    const titles = groups.map((g) => [...g.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('data-resource-name')));
    // One column each: every name in a group of its own.
    return groups.length >= 4 && names.every((n) => titles.some((t) => t.length === 1 && t[0] === n));
  }, tabs);
  await waitInPage(page, 'the texts of the three agents', () => {
    const text = [...document.querySelectorAll('.editor-group-container .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return text.includes('--- Context from:') && text.includes('<system-reminder>')
      && text.includes('# AGENTS.md instructions for');
  });
  await screenshotThemes(page, workspace, 'agents-side-by-side');
});
