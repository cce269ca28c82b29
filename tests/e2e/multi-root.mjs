// A multi-root workspace (issue 11): each folder is served with its own settings and trust.
// Folder a's .gemini/settings.json names NOTES.md as the context file; folder b keeps GEMINI.md
// and Gemini CLI's trustedFolders.json marks it DO_NOT_TRUST, which holds although VS Code
// trusts the window (Gemini CLI started there would not read its project memory).
// In one window, opened from a .code-workspace file:
// - a/NOTES.md is a's memory: its import problem is in Problems, its line-1 lens counts two
//   files (the global NOTES.md and itself); a/GEMINI.md, open all along, gets no problem;
// - b/GEMINI.md is not read: its lens ends "untrusted by trustedFolders.json", its hover says
//   which file marks it and links to it, and the Memory view shows both folders with b's notice.
// Screenshots: artifacts/e2e/multi-root-{light,dark}.png (b's hover), multi-root-view.png.
import { mkdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  runScenario, openWorkbench, quickOpenPath, waitForCodeLens, hoverLineUntil, openMemoryLens,
  viewPane, treeRow, screenshot, waitInPage, TIMEOUT,
} from './lib/vscode.mjs';

function tree(root, files) {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    if (text !== null) writeFileSync(file, text);
  }
}

// The workbench URL on a .code-workspace file (one code-server serves every workspace).
function workspaceUrl(file) {
  const url = new URL(process.env.MEMLENS_VSCODE_URL);
  url.searchParams.delete('folder');
  url.searchParams.set('workspace', file);
  return url.toString();
}

// Problems panel rows as {file} and {code, message} entries.
const problemRows = () => [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((row) => {
  const file = row.querySelector('.resource-label-container .monaco-icon-label');
  if (file) return { file: file.getAttribute('aria-label') };
  return { code: row.querySelector('.marker-code')?.textContent ?? null,
    source: row.querySelector('.marker-source')?.textContent ?? null,
    message: row.querySelector('.marker-message')?.textContent ?? null };
});

await runScenario('multi-root', async ({ page, step, cleanup }) => {
  step('make two folders, a HOME and a .code-workspace file');
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'memlens-e2e-multi-')));
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const a = path.join(root, 'a');
  const b = path.join(root, 'b');
  const rules = path.join(home, '.gemini', 'trustedFolders.json');
  tree(root, {
    'home/.gemini/GEMINI.md': 'Global: be brief.\n',
    'home/.gemini/NOTES.md': 'Global notes: be kind.\n',
    'home/.gemini/trustedFolders.json': `${JSON.stringify({ [b]: 'DO_NOT_TRUST' }, null, 2)}\n`,
    'a/.git/HEAD': 'ref: refs/heads/main\n',
    'a/.gemini/settings.json': '{"context": {"fileName": "NOTES.md"}}\n',
    'a/NOTES.md': '# A notes\n\n@./missing-a.md\n',
    'a/GEMINI.md': '# A gemini\n\n@./unread-a.md\n',
    'b/.git/HEAD': 'ref: refs/heads/main\n',
    'b/GEMINI.md': '# B rules\n\n@./missing-b.md\n',
  });
  const workspaceFile = path.join(root, 'multi.code-workspace');
  // Gemini CLI 0.43's rule (context.fileName replaces GEMINI.md) makes a's GEMINI.md unread:
  // the per-folder settings this test is about show best there, so it pins that profile.
  const settings = { 'memlens.home': home, 'memlens.agents': ['gemini@0.43'] };
  const writeWorkspace = (extra = {}) => writeFileSync(workspaceFile, `${JSON.stringify(
    { folders: [{ path: 'a' }, { path: 'b' }], settings: { ...settings, ...extra } }, null, 2)}\n`);
  writeWorkspace();

  step('open the workspace: both folders in the explorer');
  await openWorkbench(page, workspaceUrl(workspaceFile), { expect: ['a', 'b'] });

  step('open a/GEMINI.md, then a/NOTES.md: a\'s settings name NOTES.md, so it is a\'s memory');
  await quickOpenPath(page, path.join(a, 'GEMINI.md'));
  await quickOpenPath(page, path.join(a, 'NOTES.md'));
  const lensA = await waitForCodeLens(page, /memory file/);
  if (!/^2 memory files · [\d,]+ chars · ~[\d,]+ tokens$/.test(lensA.trim())) throw new Error(`a/NOTES.md lens: ${lensA}`);

  step('Problems: a/NOTES.md\'s import is not found');
  await page.keyboard.press('Control+Shift+M');
  await page.locator('.markers-panel').waitFor({ state: 'visible' });
  await waitInPage(page, 'import-not-found for a/NOTES.md in Problems',
    `(${problemRows})().some((r) => r.code === 'import-not-found' && (r.message || '').includes('missing-a.md'))`,
    null, { describe: `(${problemRows})()` });

  step('b/GEMINI.md: not read (DO_NOT_TRUST), said on the lens and in the hover');
  await quickOpenPath(page, path.join(b, 'GEMINI.md'));
  const lensB = await waitForCodeLens(page, /untrusted/);
  if (!/^1 memory file · [\d,]+ chars · ~[\d,]+ tokens · untrusted by trustedFolders\.json$/.test(lensB.trim())) {
    throw new Error(`b/GEMINI.md lens: ${lensB}`);
  }
  const hover = await hoverLineUntil(page, 1, 'marks this folder DO_NOT_TRUST');
  if (!hover.includes(rules) || !hover.includes('Open trustedFolders.json')) throw new Error(`b's hover: ${hover}`);
  if (hover.includes('Restricted Mode')) throw new Error(`b's hover blames VS Code's Restricted Mode: ${hover}`);
  for (const [suffix, theme, cls] of [['light', 'Default Light Modern', 'vs'], ['dark', 'Default Dark Modern', 'vs-dark']]) {
    writeWorkspace({ 'workbench.colorTheme': theme });
    await waitInPage(page, `the ${theme} theme`, (c) => {
      const wb = document.querySelector('.monaco-workbench');
      return !!wb && wb.classList.contains(c) && !wb.classList.contains(c === 'vs' ? 'vs-dark' : 'vs');
    }, cls);
    await page.mouse.move(700, 600);
    await hoverLineUntil(page, 1, 'marks this folder DO_NOT_TRUST');
    await screenshot(page, `multi-root-${suffix}`);
  }

  step('the Memory view: both folders, b untrusted, with the rule\'s file to open');
  await page.mouse.move(700, 600);
  await openMemoryLens(page);
  const memory = viewPane(page, 'Memory');
  await treeRow(memory, 'a').waitFor({ state: 'visible' });
  await treeRow(memory, 'b').waitFor({ state: 'visible' });
  const openRules = treeRow(memory, 'Open trustedFolders.json…');
  await openRules.waitFor({ state: 'visible' });
  await screenshot(page, 'multi-root-view');
  const folderDescriptions = await memory.locator('.monaco-list-row').evaluateAll((els) => els
    .map((el) => el.textContent.replace(/\u00a0/g, ' ').trim()));
  if (!folderDescriptions.some((t) => /^bjit mode, untrusted|^b.*untrusted/.test(t))) {
    throw new Error(`the Memory view does not mark b untrusted: ${JSON.stringify(folderDescriptions)}`);
  }

  step('"Open trustedFolders.json…" opens the rule\'s file');
  await openRules.click();
  await page.locator('.editor-group-container.active .tabs-container .tab.active[data-resource-name="trustedFolders.json"]')
    .first().waitFor({ state: 'visible', timeout: TIMEOUT });
  const shown = readFileSync(rules, 'utf8');
  if (!shown.includes('DO_NOT_TRUST')) throw new Error('the rules file changed');

  step('a/GEMINI.md, open all along, is not a\'s memory: no memlens problem from it');
  const rows = await page.evaluate(`(${problemRows})()`);
  if (!rows.some((r) => (r.message || '').includes('missing-b.md'))) throw new Error(`Problems: ${JSON.stringify(rows)}`);
  if (rows.some((r) => (r.message || '').includes('unread-a.md'))) {
    throw new Error(`a/GEMINI.md is not a's memory, yet has memlens problems: ${JSON.stringify(rows)}`);
  }
});
