// The merged-context hover: hovering line 1 of a memory file shows what the agent reads for
// that folder: "Merged context for <folder>" and the `--- Context from: <file> ---` blocks.
// Checked on GEMINI.md (global + project memory) and services/api/GEMINI.md (the same plus the
// subfolder file JIT adds there). Then CLAUDE.md's `@./AGENTS.md`: Claude Code's include, shown
// as Claude Code sends it, not as Gemini CLI would import it. Screenshots: artifacts/e2e/hover.png,
// hover-api.png and hover-claude-include.png.
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, openFromExplorer, quickOpen,
  waitForServer, waitForCodeLens, hoverLineUntil, hoverUntil, screenshot,
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

  step('open CLAUDE.md and hover its @./AGENTS.md: "As Claude Code includes it", AGENTS.md\'s text');
  await page.keyboard.press('Escape');
  await page.mouse.move(5, 500);
  await quickOpen(page, 'CLAUDE.md');
  await waitForServer(page);
  const include = page.locator('.editor-group-container.active .view-line span span', { hasText: /AGENTS\.md/ }).last();
  const tip = await hoverUntil(page, include, 'As Claude Code includes it');
  const text = await tip.innerText();
  if (/Gemini CLI|Imported from/.test(text)) throw new Error(`the include's hover speaks of Gemini CLI: ${text.slice(0, 400)}`);
  if (!/Agents/i.test(text)) throw new Error(`the include's hover lacks AGENTS.md's text: ${text.slice(0, 400)}`);
  await screenshot(page, 'hover-claude-include');
});
