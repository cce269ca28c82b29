// VS Code's own chat agent in the editor (`vscode-chat`, issue 22). The demo with a
// `.github/copilot-instructions.md` and a `.github/instructions/python.instructions.md`
// (applyTo **/*.py), `memlens.agents` set to ["vscode-chat", "gemini@0.43"]: the status item
// names VS Code chat, "Show What Each Agent Reads…" offers it (read from its sources), and its
// view of services/api/app.py holds the custom-instructions block VS Code's chat sends: the
// Python instructions attached because app.py is the file in hand, then the repository's
// copilot-instructions.md, AGENTS.md and CLAUDE.md. Screenshots: vscode-chat-{light,dark}.png.
import path from 'node:path';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, waitForServer,
  runCommand, quickInputTitled, waitInPage, MEMORY_STATUS,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

await runScenario('vscode-chat', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace({ settings: { 'memlens.agents': ['vscode-chat', 'gemini@0.43'] } });
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(workspace, '.github', 'instructions'), { recursive: true });
  writeFileSync(path.join(workspace, '.github', 'copilot-instructions.md'), 'Run make test before every commit.\n');
  writeFileSync(path.join(workspace, '.github', 'instructions', 'python.instructions.md'),
    '---\napplyTo: "**/*.py"\ndescription: Python style\n---\nType hints on every function.\n');

  step('open the workbench and services/api/app.py');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await quickOpen(page, 'services/api/app.py');
  await waitForServer(page);

  step('the status item names the chosen agent: VS Code chat');
  await waitInPage(page, 'the status item with the agent', ([sel]) => {
    const el = document.querySelector(sel);
    return el && / · VS Code chat$/.test(el.textContent.trim());
  }, [MEMORY_STATUS]);

  step('"Show What Each Agent Reads…" offers VS Code chat, read from its sources');
  await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
  await quickInputTitled(page, 'What each agent reads for services/api/app.py');
  const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: 'read from its sources' }).first();
  await row.waitFor({ state: 'visible' });
  const text = (await row.innerText()).replace(/\s+/g, ' ');
  if (!/^VS Code chat/.test(text.trim())) throw new Error(`row: ${text}`);
  await row.click();

  step('its view holds the attachments VS Code\'s chat sends for app.py');
  await waitInPage(page, 'the VS Code chat context tab', () =>
    [...document.querySelectorAll('.tabs-container .tab')].some((t) => t.getAttribute('data-resource-name') === 'VS Code Chat Context.md'));
  await waitInPage(page, 'the index, then the Python instructions attached first', () => {
    const text = [...document.querySelectorAll('.editor-group-container .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    const index = text.indexOf('Here is a list of instruction files');
    const attached = text.indexOf('python.instructions.md">');
    return index >= 0 && attached > index && text.includes('Type hints on every function.');
  });
  step('further down: the repository\'s copilot-instructions.md, attached to every request');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await waitInPage(page, 'copilot-instructions.md and its text', () => {
    const text = [...document.querySelectorAll('.editor-group-container .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return text.includes('copilot-instructions.md">') && text.includes('Run make test before every commit.');
  });
  await page.keyboard.press('Control+Home');
  await screenshotThemes(page, workspace, 'vscode-chat');
});
