// The Agent Matrix in a multi-root window (issue 31): it shows the folder of the active editor,
// never simply the first folder; without an active editor it asks which folder.
// In one window of two folders, opened from a .code-workspace file (alpha first, with only
// Claude Code's CLAUDE.md; beta second, with AGENTS.md files and Copilot's instructions):
// - with beta/AGENTS.md focused, "Show Agent Matrix" shows beta's rows (AGENTS.md,
//   api/AGENTS.md, .github/copilot-instructions.md), not alpha's CLAUDE.md; the panel's title
//   and its header name beta;
// - with every editor closed, the command asks for a folder (VS Code's folder pick); picking
//   alpha shows alpha's CLAUDE.md (in a new panel: closing every editor closed the first).
// Screenshots: artifacts/e2e/matrix-multi-root-{light,dark}.png (beta's matrix),
// matrix-multi-root-pick.png (the folder pick), matrix-multi-root-alpha.png.
import { mkdirSync, rmSync, writeFileSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  runScenario, openWorkbench, quickOpenPath, runCommand, waitForServer, screenshot, waitInPage,
} from './lib/vscode.mjs';

function tree(root, files) {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

// The workbench URL on a .code-workspace file (one code-server serves every workspace).
function workspaceUrl(file) {
  const url = new URL(process.env.MEMLENS_VSCODE_URL);
  url.searchParams.delete('folder');
  url.searchParams.set('workspace', file);
  return url.toString();
}

await runScenario('matrix-multi-root', async ({ page, step, cleanup }) => {
  step('make two folders, a HOME and a .code-workspace file (alpha first)');
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'memlens-e2e-matrix-multi-')));
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  tree(root, {
    'home/.keep': '',
    'alpha/.git/HEAD': 'ref: refs/heads/main\n',
    'alpha/CLAUDE.md': '# Alpha rules\n\nUse tabs.\n',
    'beta/.git/HEAD': 'ref: refs/heads/main\n',
    'beta/AGENTS.md': '# Beta rules\n\nRun the tests.\n',
    'beta/api/AGENTS.md': '# Beta API rules\n\nValidate input.\n',
    'beta/api/app.py': "print('hi')\n",
    'beta/.github/copilot-instructions.md': 'Answer briefly.\n',
  });
  const workspaceFile = path.join(root, 'two.code-workspace');
  const writeWorkspace = (extra = {}) => writeFileSync(workspaceFile, `${JSON.stringify({
    folders: [{ path: 'alpha' }, { path: 'beta' }],
    settings: { 'memlens.home': home, ...extra },
  }, null, 2)}\n`);
  writeWorkspace();

  step('open the workspace; focus beta/AGENTS.md (a file of the second folder)');
  await openWorkbench(page, workspaceUrl(workspaceFile), { expect: ['alpha', 'beta'] });
  await quickOpenPath(page, path.join(root, 'beta', 'AGENTS.md'));
  await waitForServer(page);

  step('"Show Agent Matrix": beta\'s rows, and the title and header name beta');
  await runCommand(page, 'Memory Lens: Show Agent Matrix');
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const files = () => frame.locator('th.file').allInnerTexts();
  await frame.locator('th.file', { hasText: 'api/AGENTS.md' }).first().waitFor({ state: 'visible' });
  const betaRows = (await files()).map((t) => t.split('\n')[0].trim());
  for (const want of ['AGENTS.md', 'api/AGENTS.md', '.github/copilot-instructions.md']) {
    if (!betaRows.includes(want)) throw new Error(`beta's matrix has no row ${want}: ${JSON.stringify(betaRows)}`);
  }
  if (betaRows.includes('CLAUDE.md')) throw new Error(`beta's matrix shows alpha's CLAUDE.md: ${JSON.stringify(betaRows)}`);
  const header = (await frame.locator('h1.folder').innerText()).replace(/\s+/g, ' ');
  if (!header.startsWith(`beta ${path.join(root, 'beta')}`)) throw new Error(`the matrix's header: ${header}`);
  await page.locator('.tabs-container .tab.active', { hasText: 'Agent Matrix — beta' }).first()
    .waitFor({ state: 'visible' });
  for (const [suffix, theme, cls] of [['light', 'Default Light Modern', 'vs'], ['dark', 'Default Dark Modern', 'vs-dark']]) {
    writeWorkspace({ 'workbench.colorTheme': theme });
    await waitInPage(page, `the ${theme} theme`, (c) => {
      const wb = document.querySelector('.monaco-workbench');
      return !!wb && wb.classList.contains(c) && !wb.classList.contains(c === 'vs' ? 'vs-dark' : 'vs');
    }, cls);
    await page.waitForTimeout(300);
    await frame.locator('th.file', { hasText: 'api/AGENTS.md' }).first().waitFor({ state: 'visible' });
    await screenshot(page, `matrix-multi-root-${suffix}`);
  }

  step('no active editor: the command asks which folder; alpha shows alpha\'s CLAUDE.md');
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.editor-group-container .tabs-container .tab').first().waitFor({ state: 'detached' });
  await runCommand(page, 'Memory Lens: Show Agent Matrix', { waitHidden: false });
  const pick = page.locator('.quick-input-widget');
  const alpha = pick.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: /^alpha$/ }) }).first();
  await alpha.waitFor({ state: 'visible' });
  await pick.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: /^beta$/ }) }).first()
    .waitFor({ state: 'visible' });
  await screenshot(page, 'matrix-multi-root-pick');
  await alpha.click();
  await frame.locator('th.file', { hasText: 'CLAUDE.md' }).first().waitFor({ state: 'visible' });
  const alphaRows = (await files()).map((t) => t.split('\n')[0].trim());
  if (JSON.stringify(alphaRows) !== JSON.stringify(['CLAUDE.md'])) {
    throw new Error(`alpha's matrix: ${JSON.stringify(alphaRows)}`);
  }
  await page.locator('.tabs-container .tab.active', { hasText: 'Agent Matrix — alpha' }).first()
    .waitFor({ state: 'visible' });
  await screenshot(page, 'matrix-multi-root-alpha');
});
