// "Memory Lens: Show What Each Agent Reads…" on the demo, which keeps GEMINI.md, CLAUDE.md and
// AGENTS.md side by side: pick "Claude Code" with services/api/app.py active and a read-only
// "Claude Code Context.md" opens with what Claude Code reads there: the project CLAUDE.md, the
// AGENTS.md it includes, and the .claude/rules file whose `paths:` match app.py; its
// `Contents of <path>…:` lines (what Claude Code sends, byte for byte) are links. Screenshot: artifacts/e2e/agents.png.
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, quickOpen, waitForServer,
  runCommand, quickInputTitled, activeTab, waitInPage, waitForEditorText, screenshot,
} from './lib/vscode.mjs';

const ACTIVE_EDITOR = '.editor-group-container.active .monaco-editor';

await runScenario('agents', async ({ page, step }) => {
  const workspace = sourceWorkspace();
  const expected = [
    `Contents of ${path.join(workspace, 'CLAUDE.md')} (project instructions, checked into the codebase):`,
    // An include takes its parent's label; a rule that applies to app.py comes after the Read.
    `Contents of ${path.join(workspace, 'AGENTS.md')} (project instructions, checked into the codebase):`,
    `Contents of ${path.join(workspace, '.claude/rules/python.md')}:`,
  ];

  step('open the workbench and services/api/app.py');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await quickOpen(page, 'services/api/app.py');
  await waitForServer(page);

  step('run "Memory Lens: Show What Each Agent Reads…" and pick "Claude Code"');
  await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
  await quickInputTitled(page, 'What each agent reads for services/api/app.py');
  const claude = page.locator('.quick-input-widget .monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^\s*Claude Code\s*$/ }),
  }).first();
  await claude.waitFor({ state: 'visible' });
  await claude.click();
  await activeTab(page, 'Claude Code Context.md').waitFor({ state: 'visible' });

  step('the document lists CLAUDE.md, the AGENTS.md it includes and the python.md rule, in that order');
  await waitForEditorText(page, 'the Claude Code context', expected, { ordered: true });

  step('the source paths are links');
  await waitInPage(page, 'three links', ([sel]) => {
    const joined = [...document.querySelectorAll(`${sel} .view-lines .detected-link`)]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('');
    return ['CLAUDE.md', 'AGENTS.md', 'python.md'].every((name) => joined.includes(name));
  }, [ACTIVE_EDITOR]);
  await screenshot(page, 'agents');
});
