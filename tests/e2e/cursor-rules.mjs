// Cursor's rules, a convention (issue 22): a copy of the demo with a Cursor rule attached by
// globs (.cursor/rules/py.mdc, globs **/*.py). Opening services/api/app.py, the notification
// names what Cursor adds under Cursor's own name, labelled a convention ("Cursor (convention)
// loaded .cursor/rules/py.mdc (its globs match services/api/app.py)"), not as Claude Code's. Screenshot: artifacts/e2e/cursor-rules.png.
import path from 'node:path';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, settled, screenshot,
  TIMEOUT,
} from './lib/vscode.mjs';

const NOTICE = 'Cursor (convention) loaded .cursor/rules/py.mdc (its globs match services/api/app.py)';

await runScenario('cursor-rules', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(workspace, '.cursor', 'rules'), { recursive: true });
  writeFileSync(path.join(workspace, '.cursor', 'rules', 'py.mdc'),
    '---\ndescription: Python\nglobs: **/*.py\nalwaysApply: false\n---\nType hints everywhere.\n');

  step('open the workbench');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'services'] });

  step('open services/api/app.py: the notification names the Cursor rule it attaches');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: NOTICE }).first();
  const shown = toast.waitFor({ state: 'visible', timeout: TIMEOUT });
  await quickOpen(page, 'services/api/app.py');
  await shown;
  await settled(toast);
  const text = (await toast.innerText()).replace(/\s+/g, ' ');
  if (/Claude Code loaded [^;]*\.cursor/.test(text)) throw new Error(`a Cursor rule announced as Claude Code's: ${text}`);
  await screenshot(page, 'cursor-rules');
});
