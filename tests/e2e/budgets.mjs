// Budgets (issue 14) in the real VS Code, on the demo with `memlens.budget` set to 50 tokens:
// the line-1 code lens of GEMINI.md says "N memory files · C chars · ~T tokens", the status
// item says the same, the merged-context hover holds the per-file table (chars, bytes,
// tokens, the folder total, the estimate named) and line 1 carries the context-over-budget
// warning naming the figure and the budget. Screenshots: budgets-{light,dark}.png (lens,
// status item, hover table), budgets-warning-{light,dark}.png (the Problems panel) and
// budgets-count-exact-{light,dark}.png ("Count Tokens Exactly" against the e2e fake Gemini),
// budgets-view-{light,dark}.png (the Memory view's per-file figures).
import { rmSync } from 'node:fs';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  waitForCodeLens, hoverLineUntil, hoverUntil, waitInPage, MEMORY_STATUS, runCommand, quickInputTitled,
  quickOpen, openMemoryLens, viewPane, treeRow, openProblemsPanel,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const LENS = /(\d+) memory files? · ([\d,]+) chars · ~([\d,]+) tokens/;

await runScenario('budgets', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace({ settings: { 'memlens.budget': 50 } });
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step('open the workbench and GEMINI.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  step('the code lens on line 1 gives files, chars and tokens');
  const lens = await waitForCodeLens(page, LENS);
  const [, files, chars, tokens] = lens.match(LENS);
  if (Number(tokens.replace(/,/g, '')) <= 50) throw new Error(`expected more than 50 tokens: ${lens}`);

  step('the status item says the same figures');
  const status = await waitInPage(page, 'the status item with the token figure', ([sel, want]) => {
    const el = document.querySelector(sel);
    const text = el ? el.textContent.trim() : '';
    return text.includes(want) ? text : null;
  }, [MEMORY_STATUS, `${files} memory files · ${chars} chars · ~${tokens} tokens`]);
  if (!status) throw new Error('no status item');

  step('the hover on line 1 holds the per-file table and the folder total');
  const hover = await hoverLineUntil(page, 1, 'Folder total');
  for (const want of ['Chars', 'Bytes', 'Tokens', `~${tokens}`, "Gemini CLI's estimate"]) {
    if (!hover.includes(want)) throw new Error(`hover lacks "${want}": ${hover.slice(0, 600)}`);
  }
  await screenshotThemes(page, workspace, 'budgets', async () => { await hoverLineUntil(page, 1, 'Folder total'); });

  step('the context-over-budget warning names the figure and the budget');
  await page.keyboard.press('Escape');
  await page.mouse.move(5, 500);
  const panel = await openProblemsPanel(page);
  const warning = `This folder's memory is ~${tokens} tokens for Gemini CLI, over the budget of 50 (memlens.budget)`;
  // The panel's rows: a file row (its full path), then its problems.
  const file = await waitInPage(page, 'the warning in the Problems panel', (text) => {
    let current = null;
    for (const row of document.querySelectorAll('.markers-panel .monaco-list-row')) {
      const label = row.querySelector('.resource-label-container .monaco-icon-label');
      if (label) current = label.getAttribute('aria-label');
      else if (row.textContent.replace(/\u00a0/g, ' ').includes(text)) return current || '?';
    }
    return null;
  }, warning);
  // On the folder's own GEMINI.md, line 1 (not on the global file the demo's HOME holds).
  if (!file.includes(`${workspace}/GEMINI.md`) || file.includes('.home')) {
    throw new Error(`the warning is on ${file}`);
  }
  await screenshotThemes(page, workspace, 'budgets-warning');

  step('store the fake Gemini server\'s key with "Set Gemini API Key"');
  await page.keyboard.press('Control+Shift+M'); // the panel closes: the editor has focus again
  await runCommand(page, 'Memory Lens: Set Gemini API Key', { waitHidden: false });
  const keyBox = await quickInputTitled(page, 'Gemini API Key');
  await keyBox.fill(process.env.MEMLENS_FAKE_GEMINI_KEY || 'e2e-fake-gemini-key');
  await keyBox.press('Enter');

  step('"Count Tokens Exactly": the model\'s count (the fake\'s) beside Gemini CLI\'s estimate');
  await quickOpen(page, 'GEMINI.md');
  await runCommand(page, 'Memory Lens: Count Tokens Exactly (Gemini API)');
  const toast = await waitInPage(page, 'the count in a notification', (want) => {
    const found = [...document.querySelectorAll('.notifications-toasts .notification-list-item-message')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).find((t) => t.includes(want));
    return found || null;
  }, `~${tokens} estimated by Gemini CLI`);
  if (!/^Tokens: [\d,]+ exact, ~[\d,]+ estimated by Gemini CLI \(gemini-[\w.-]+\)$/.test(toast.trim())) throw new Error(`toast: ${toast}`);
  await screenshotThemes(page, workspace, 'budgets-count-exact');

  step('the status tooltip adds the bytes and names the estimate');
  const statusItem = page.locator(MEMORY_STATUS).first();
  const tip = await hoverUntil(page, statusItem, "Gemini CLI's estimate");
  const tipText = (await tip.innerText()).replace(/\u00a0/g, ' ');
  if (!/[\d,]+ bytes \(UTF-8\), ~[\d,]+ tokens/.test(tipText) || !tipText.includes(`~${tokens} tokens`)) {
    throw new Error(`status tooltip: ${tipText}`);
  }

  step('the Memory view: each file\'s description ends with its chars and tokens');
  await page.mouse.move(700, 600);
  await openMemoryLens(page);
  const memory = viewPane(page, 'Memory');
  const row = treeRow(memory, 'GEMINI.md');
  await row.waitFor({ state: 'visible' });
  const description = (await row.locator('.label-description').first().innerText()).replace(/\u00a0/g, ' ');
  if (!/[\d,]+ chars · ~[\d,]+ tokens/.test(description)) throw new Error(`GEMINI.md row: ${description}`);
  await screenshotThemes(page, workspace, 'budgets-view');
});
