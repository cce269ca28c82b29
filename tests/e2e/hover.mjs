// The merged-context hover: hovering line 1 of a memory file shows what the agent reads for
// that folder: "Merged context for <folder>" and the `--- Context from: <file> ---` blocks.
// Checked on GEMINI.md (global + project memory) and services/api/GEMINI.md (the same plus the
// subfolder file JIT adds there). Screenshots: artifacts/e2e/hover.png and hover-api.png.
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, openFromExplorer, quickOpen,
  waitForServer, waitForCodeLens, hoverLineUntil, screenshot,
} from './lib/vscode.mjs';

const HOME = process.env.GEMINI_CLI_HOME ? path.resolve(process.env.GEMINI_CLI_HOME) : null;

function checkHover(text, folder, files) {
  if (!text.includes(`Merged context for ${folder}`)) {
    throw new Error(`hover lacks "Merged context for ${folder}": ${text.slice(0, 300)}`);
  }
  for (const file of files) {
    for (const marker of [`--- Context from: ${file} ---`, `--- End of Context from: ${file} ---`]) {
      if (!text.includes(marker)) throw new Error(`hover lacks "${marker}": ${text.slice(0, 600)}`);
    }
  }
}

await runScenario('hover', async ({ page, step }) => {
  const workspace = sourceWorkspace();
  const global = HOME ? [path.join(HOME, '.gemini/GEMINI.md')] : [];

  step('open the workbench');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'services'] });

  step('open GEMINI.md');
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('wait for the code lens on line 1 ("N memory files · C chars"), then hover line 1 of GEMINI.md');
  await waitForCodeLens(page, /\d+ memory files? · [\d,]+ chars/);
  const root = await hoverLineUntil(page, 1, 'Merged context for');
  checkHover(root, workspace, [...global, path.join(workspace, 'GEMINI.md')]);
  await screenshot(page, 'hover');

  step('open services/api/GEMINI.md');
  await page.keyboard.press('Escape');
  await page.mouse.move(5, 500);
  await quickOpen(page, 'services/api/GEMINI.md');
  await waitForServer(page);

  step('wait for its code lens, then hover line 1 of services/api/GEMINI.md');
  await waitForCodeLens(page, /\d+ memory files? · [\d,]+ chars/);
  const api = await hoverLineUntil(page, 1, `Merged context for ${path.join(workspace, 'services/api')}`);
  checkHover(api, path.join(workspace, 'services/api'),
    [...global, path.join(workspace, 'GEMINI.md'), path.join(workspace, 'services/api/GEMINI.md')]);
  await screenshot(page, 'hover-api');
});
