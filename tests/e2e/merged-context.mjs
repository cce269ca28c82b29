// "Memory Lens: Show Merged Context" from the command palette: a read-only document opens
// beside the editor with what the agent reads for the active file's folder; its
// `--- Context from: <file> ---` lines are links (document links: underlined, ctrl+click opens
// the file). Screenshot (ctrl held over a link, its "Follow link" hover showing):
// artifacts/e2e/merged-context.png.
import path from 'node:path';
import {
  runScenario, workbenchUrl, sourceWorkspace, openWorkbench, openFromExplorer, waitForServer,
  runCommand, activeTab, waitInPage, waitForEditorText, visibleLines, settled, screenshot,
} from './lib/vscode.mjs';

const HOME = process.env.GEMINI_CLI_HOME ? path.resolve(process.env.GEMINI_CLI_HOME) : null;
const ACTIVE_EDITOR = '.editor-group-container.active .monaco-editor';

// The rendered lines of the active editor joined (soft-wrapped pieces rejoin).
const editorText = async (page) => (await visibleLines(page)).join('');

await runScenario('merged-context', async ({ page, step }) => {
  const workspace = sourceWorkspace();
  const project = path.join(workspace, 'GEMINI.md');
  const files = [...(HOME ? [path.join(HOME, '.gemini/GEMINI.md')] : []), project];

  step('open the workbench and GEMINI.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('run "Memory Lens: Show Merged Context" from the command palette');
  await runCommand(page, 'Memory Lens: Show Merged Context');
  await activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' });

  step(`wait for the --- Context from: lines of ${files.join(', ')}`);
  await waitForEditorText(page, 'the merged context text',
    files.map((f) => `--- Context from: ${f} ---`));
  const before = await editorText(page);

  step('the document is read-only: typing is refused');
  await page.locator(`${ACTIVE_EDITOR} .view-lines`).first().click({ position: { x: 5, y: 5 } });
  await page.keyboard.type('x');
  await page.locator(`${ACTIVE_EDITOR} .monaco-editor-overlaymessage`, { hasText: /read-only/i }).first()
    .waitFor({ state: 'visible' });
  if ((await editorText(page)) !== before) throw new Error('the merged context document changed after typing');
  const dirty = await page.locator('.editor-group-container.active .tab.active.dirty').count();
  if (dirty) throw new Error('the merged context tab is dirty');
  await page.keyboard.press('Escape');

  step('the --- Context from: paths are links');
  const links = await waitInPage(page, 'document links on every source path', ([sel, paths]) => {
    const pieces = [...document.querySelectorAll(`${sel} .view-lines .detected-link`)]
      .map((el) => ({ r: el.getBoundingClientRect(), t: el.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.r.top - b.r.top || a.r.left - b.r.left)
      .map((p) => p.t);
    const joined = pieces.join('');
    return paths.every((p) => joined.includes(p)) ? pieces : null;
  }, [ACTIVE_EDITOR, files], {
    describe: ([sel]) => [...document.querySelectorAll(`${sel} .view-lines .detected-link`)].map((el) => el.textContent),
  });
  console.log(`merged-context: ${links.length} link pieces: ${links.join(' | ')}`);

  step(`hold ctrl over the link of ${project}`);
  // The first piece of that link. A long path is soft-wrapped into several pieces, and the
  // pieces of one link are consecutive in reading order; the link is the run of pieces whose
  // text joins to exactly the path (a prefix test alone would pick a wrapped piece of another
  // path that shares the folder).
  const handle = await page.evaluateHandle(([sel, target]) => {
    const pieces = [...document.querySelectorAll(`${sel} .view-lines .detected-link`)]
      .map((el) => ({ el, r: el.getBoundingClientRect(), t: el.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.r.top - b.r.top || a.r.left - b.r.left);
    for (let i = 0; i < pieces.length; i += 1) {
      let joined = '';
      for (let j = i; j < pieces.length && joined.length < target.length; j += 1) joined += pieces[j].t;
      if (joined === target) return pieces[i].el;
    }
    return null;
  }, [ACTIVE_EDITOR, project]);
  const link = handle.asElement();
  if (!link) throw new Error(`no link piece for ${project}`);
  const box = await link.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2 + 20);
  await page.keyboard.down('Control');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
  await page.locator(`${ACTIVE_EDITOR} .view-lines .detected-link-active`).first().waitFor({ state: 'visible' });
  const follow = page.locator('.monaco-hover:not(.hidden)', { hasText: /Follow link/ }).first();
  await follow.waitFor({ state: 'visible' });
  await settled(follow);
  await screenshot(page, 'merged-context');

  step('ctrl+click it: GEMINI.md opens');
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2, { modifiers: ['Control'] });
  await page.keyboard.up('Control');
  await activeTab(page, 'GEMINI.md').waitFor({ state: 'visible' });
  await page.locator(`${ACTIVE_EDITOR} .view-lines`, { hasText: /Acme.Orders/ }).first().waitFor({ state: 'visible' });
});
