// The on-read notice is for a file the user opened in an editor (docs/reference.md "Files that
// load later"), not for every document VS Code opens: a file shown only in a preview (the
// definition preview of an import, Ctrl+hover) loads memory just in time too, but no toast
// appears; the "Memory Lens" output channel says why. Then a file opened in a tab (web/index.ts) does get its notice.
import path from 'node:path';
import { appendFileSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, quickOpen, waitForServer,
  waitInPage, goToLine, extensionHostLogDirs, newExtensionHostLogDir, runCommand,
} from './lib/vscode.mjs';

// The "Memory Lens" output channel's log text in the extension host's log folder.
function channelText(dir) {
  let text = '';
  for (const d of existsSync(dir) ? readdirSync(dir) : []) {
    if (!d.startsWith('output_logging_')) continue;
    for (const f of readdirSync(path.join(dir, d))) {
      if (f.replace(/^\d+-/, '') === 'Memory Lens.log') text += readFileSync(path.join(dir, d, f), 'utf8');
    }
  }
  return text;
}

await runScenario('on-read-no-tab', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  // An import of a file whose read loads memory (services/api/GEMINI.md, Claude Code's rule),
  // on the last line of the root GEMINI.md, for its definition preview to open without a tab.
  const gemini = path.join(workspace, 'GEMINI.md');
  appendFileSync(gemini, '\nThe API: @./services/api/app.py\n');
  const importLine = readFileSync(gemini, 'utf8').split('\n').length - 1;
  const before = extensionHostLogDirs();

  step('open the workbench and GEMINI.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  const logDir = await newExtensionHostLogDir(before);
  await quickOpen(page, 'GEMINI.md');
  await waitForServer(page);

  step('the definition preview of the import of services/api/app.py (Ctrl+hover): app.py shows in a hover');
  // "Show Definition Preview Hover" is what holding Ctrl over the import shows: VS Code opens
  // app.py as a document to preview it, in no tab. (Peek Definition does the same, but on a
  // loaded machine its command was at times not offered; the preview hover always is.)
  await goToLine(page, importLine, 'The API: @./services/api/'.length + 3);
  await runCommand(page, 'Show Definition Preview Hover');
  await waitInPage(page, 'a hover with app.py\'s text', () =>
    [...document.querySelectorAll('.monaco-hover')].some((h) => h.textContent.includes('def health')),
  undefined, { describe: () => [...document.querySelectorAll('.monaco-hover')].map((h) => h.textContent.slice(0, 200)) });

  step('no on-read notice for it; the output channel says it is in no editor tab');
  const deadline = Date.now() + 30_000;
  while (!/on-read notice not shown: \S*services\/api\/app\.py is in no editor tab/.test(channelText(logDir))) {
    if (Date.now() > deadline) throw new Error(`no "on-read notice not shown" line: ${channelText(logDir).slice(-800)}`);
    await page.waitForTimeout(250);
  }
  const toasts = await page.locator('.notification-toast').allInnerTexts();
  if (toasts.some((t) => /Opening app\.py/.test(t))) throw new Error(`a notice appeared: ${toasts.join(' | ')}`);
  await page.keyboard.press('Escape');

  step('opening web/index.ts in a tab does bring its notice (web/GEMINI.md just in time)');
  await quickOpen(page, 'web/index.ts');
  // On failure the output channel's tail says whether the notice was held back, and why.
  await waitInPage(page, 'the on-read notice for index.ts', () =>
    [...document.querySelectorAll('.notification-toast')].some((t) => /Opening index\.ts/.test(t.textContent)),
  undefined, { describe: () => ({
    tab: document.querySelector('.tab.active')?.textContent ?? null,
    toasts: [...document.querySelectorAll('.notification-toast')].map((t) => t.textContent),
  }) }).catch((e) => { throw new Error(`${e.message}\nchannel: ${channelText(logDir).slice(-800)}`); });
  if (/on-read notice not shown: \S*web\/index\.ts/.test(channelText(logDir))) {
    throw new Error(`index.ts, opened in a tab, was logged as in no tab: ${channelText(logDir).slice(-800)}`);
  }
});
