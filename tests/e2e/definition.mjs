// Go to Definition on an @import: open GEMINI.md of the demo, put the cursor on
// `@./docs/architecture.md`, press F12; docs/architecture.md must become the active editor tab.
// Screenshot: artifacts/e2e/definition.png.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, openFromExplorer, waitForServer,
  goToLine, activeTab, screenshot,
} from './lib/vscode.mjs';

const IMPORT = '@./docs/architecture.md';

await runScenario('definition', async ({ page, step }) => {
  const workspace = sourceWorkspace();
  const lines = readFileSync(path.join(workspace, 'GEMINI.md'), 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(IMPORT));
  if (index < 0) throw new Error(`GEMINI.md of ${workspace} has no ${IMPORT}`);
  // 1-based position inside the path part of the import.
  const line = index + 1;
  const column = lines[index].indexOf(IMPORT) + 5;

  step('open the workbench');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'docs'] });

  step('open GEMINI.md');
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });

  step('wait for the language server (Memory Lens status-bar item)');
  await waitForServer(page);

  step(`put the cursor on ${IMPORT} (Ln ${line}, Col ${column})`);
  await goToLine(page, line, column);

  step('Go to Definition (F12) and wait for architecture.md to be the active tab');
  await page.keyboard.press('F12');
  await activeTab(page, 'architecture.md').waitFor({ state: 'visible' });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines', { hasText: /Architecture/ })
    .first().waitFor({ state: 'visible' });
  const title = await activeTab(page, 'architecture.md').getAttribute('aria-label');
  if (!/architecture\.md/.test(title || '')) throw new Error(`unexpected active tab ${title}`);
  // The breadcrumbs of the new editor name its folder: docs/architecture.md, not another one.
  await page.locator('.editor-group-container.active .breadcrumbs-control', { hasText: /docs.*architecture\.md/s })
    .first().waitFor({ state: 'visible' });

  step('screenshot');
  await screenshot(page, 'definition');
});
