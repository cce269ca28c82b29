// Claude Code's auto memory in the editor: a copy of the demo whose HOME holds Claude Code's
// memory folder for it (HOME/.claude/projects/<the workspace's path, every character but
// letters and digits turned into "-">/memory: MEMORY.md and four topic files in the current
// format, one in a subfolder, one saved three days ago). The Memory view, under "Claude Code",
// shows MEMORY.md, then the topic files grouped by type in Claude Code's order ("Memories ·
// feedback (2)", "… project (1)", "… reference (1)"), each row with its description and age;
// clicking a topic row opens it; Go to Definition (F12) on its `[[deploy-steps]]` opens the
// memory named deploy-steps. Then "Add Memory…" with "Claude Code (auto memory)" picked (the
// row names the topic file), the type "feedback": the diff shows the new topic file, the
// notification its MEMORY.md line; nothing is written before "Save Memory", which writes both
// (and nothing under .gemini); the view then counts "Memories · feedback (3)".
// Screenshots: artifacts/e2e/claude-memory-{light,dark}.png (the grouped view, the topic file
// open), claude-memory-definition.png, claude-memory-add.png (the review of a new memory).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer, waitForServer,
  openMemoryLens, viewPane, treeRow, activeTab, goToLine, screenshot, waitInPage, resizeSidebar,
  runCommand, quickInputTitled,
} from './lib/vscode.mjs';
import { saveSettings, screenshotThemes } from './lib/themes.mjs';

const topic = (name, description, type, body) =>
  `---\nname: ${name}\ndescription: ${description}\nmetadata:\n  type: ${type}\n---\n\n${body}\n`;

const TESTING_BODY = 'Run `make test`, never pytest directly.\nBefore a release: [[deploy-steps]].';
const FILES = {
  'testing.md': topic('run-tests', 'How to run the tests', 'feedback', TESTING_BODY),
  'style.md': topic('review-style', 'Short review comments, one point each', 'feedback', 'Keep it short.'),
  'ops/deploy.md': topic('deploy-steps', 'How a release is deployed', 'project', 'Tag, then `make deploy`.'),
  'dashboards.md': topic('dashboards', 'Where the dashboards are', 'reference', 'https://grafana.example.invalid'),
  'MEMORY.md': [
    '- [testing](testing.md) — How to run the tests',
    '- [style](style.md) — Short review comments',
    '- [deploy](ops/deploy.md) — How a release is deployed',
    '- [dashboards](dashboards.md) — Where the dashboards are',
    '',
  ].join('\n'),
};
// Every file under `dir` (relative path → size and mtime), to see what a write changed.
function snapshot(dir, skip = new Set()) {
  const out = new Map();
  if (!existsSync(dir)) return out;
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (skip.has(full)) continue;
      if (entry.isDirectory()) walk(full);
      else { const st = statSync(full); out.set(path.relative(dir, full), `${st.size}:${st.mtimeMs}`); }
    }
  };
  walk(dir);
  return out;
}
function changes(before, after) {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

const GROUPS = ['Memories · feedback (2)', 'Memories · project (1)', 'Memories · reference (1)'];

await runScenario('claude-memory', async ({ page, step, cleanup }) => {
  const { root, workspace, home } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const folder = path.join(home, '.claude', 'projects', workspace.replace(/[^a-zA-Z0-9]/g, '-'), 'memory');
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
    writeFileSync(path.join(folder, name), text);
  }
  const threeDays = Date.now() / 1000 - 3 * 86_400 - 60;
  utimesSync(path.join(folder, 'ops/deploy.md'), threeDays, threeDays);

  step('open the workbench and CLAUDE.md');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['CLAUDE.md'] });
  await openFromExplorer(page, 'CLAUDE.md');
  await waitForServer(page);

  step('the Memory view: collapse Chat and Skills for room, expand "Claude Code"');
  const sidebar = await openMemoryLens(page);
  await resizeSidebar(page, 720);  // room for each row's description and age
  for (const view of ['Chat', 'Skills']) {
    const header = sidebar.locator(`.pane-header[aria-label^="${view} Section"]`).first();
    if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
  }
  const memory = viewPane(page, 'Memory');
  for (const tier of ['Global', 'Project (loaded at start-up)', 'Subfolders (loaded just in time)']) {
    const row = treeRow(memory, tier);
    if ((await row.count()) && (await row.getAttribute('aria-expanded')) === 'true') await row.locator('.monaco-tl-twistie').click();
  }
  const claude = treeRow(memory, 'Claude Code');
  await claude.waitFor({ state: 'visible' });
  if ((await claude.getAttribute('aria-expanded')) !== 'true') await claude.locator('.monaco-tl-twistie').click();

  step(`MEMORY.md first, then ${GROUPS.join(', ')}`);
  // The index's row is labelled with its path (relative here: this HOME lies in the workspace).
  const index = memory.locator('.monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: /\/memory\/MEMORY\.md\s*$/ }),
  }).first();
  await index.waitFor({ state: 'visible' });
  for (const label of GROUPS) await treeRow(memory, label).waitFor({ state: 'visible' });
  const order = await memory.locator('.monaco-list-row .label-name').allInnerTexts();
  const at = (label) => order.findIndex((text) => text.trim() === label);
  const positions = [order.findIndex((text) => /\/memory\/MEMORY\.md\s*$/.test(text)), ...GROUPS.map(at)];
  if (positions.some((p, i) => p < 0 || (i > 0 && p <= positions[i - 1]))) {
    throw new Error(`rows out of order (MEMORY.md, then the groups by Claude Code's types): ${order.join(' | ')}`);
  }
  // Each group holds its files: feedback's two by name, the nested project one by its file name.
  const feedback = order.slice(at(GROUPS[0]) + 1, at(GROUPS[1])).map((t) => t.trim());
  if (feedback.join(',') !== 'style.md,testing.md') throw new Error(`the feedback group holds ${feedback}`);
  const deploy = await treeRow(memory, 'deploy.md').innerText();
  if (!deploy.includes('How a release is deployed') || !deploy.includes('saved 3 days ago')) {
    throw new Error(`the deploy.md row does not show its description and age: ${deploy}`);
  }
  const testing = treeRow(memory, 'testing.md');
  if (!(await testing.innerText()).includes('How to run the tests · saved today')) {
    throw new Error(`the testing.md row: ${await testing.innerText()}`);
  }

  step('click the testing.md row: it opens');
  await testing.click();
  await activeTab(page, 'testing.md').waitFor({ state: 'visible' });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines', { hasText: /make.test/ })
    .first().waitFor({ state: 'visible' });

  step('light and dark screenshots of the grouped view');
  const restore = saveSettings(workspace);
  await page.mouse.move(1200, 600);
  const shots = await screenshotThemes(page, workspace, 'claude-memory');
  restore();

  step('Go to Definition (F12) on [[deploy-steps]]: ops/deploy.md opens');
  const lines = FILES['testing.md'].split('\n');
  const line = lines.findIndex((l) => l.includes('[[deploy-steps]]'));
  await goToLine(page, line + 1, lines[line].indexOf('[[deploy-steps]]') + 5);
  await page.keyboard.press('F12');
  await activeTab(page, 'deploy.md').waitFor({ state: 'visible' });
  await waitInPage(page, 'the cursor on deploy.md\'s name: line', () => {
    const status = [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent).join(' ');
    return /Ln 2, Col \d+/.test(status);
  });
  await screenshot(page, 'claude-memory-definition');

  step('"Add Memory…" with Claude Code: the pick names its folder, then the type, then the diff');
  const fact = 'Always answer in British English';
  const name = 'always-answer-in-british-english';
  const gemini = path.join(home, '.gemini');
  const indexBefore = readFileSync(path.join(folder, 'MEMORY.md'), 'utf8');
  await runCommand(page, 'Memory Lens: Add Memory…', { waitHidden: false });
  const factBox = await quickInputTitled(page, 'Add Memory');
  await factBox.fill(fact);
  await factBox.press('Enter');
  await quickInputTitled(page, 'Where should it be saved?');
  const claudeChoice = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Claude Code (auto memory)' }).first();
  await claudeChoice.waitFor({ state: 'visible' });
  // From here on (the pick's Gemini CLI project row has registered the project in .gemini, as
  // Add Memory always did to name that file), nothing may change under .gemini.
  const geminiBefore = snapshot(gemini, new Set([path.join(gemini, 'tmp')]));
  const choiceText = await claudeChoice.innerText();
  if (!choiceText.includes(path.join(folder, `${name}.md`))) throw new Error(`the Claude Code row does not name the topic file: ${choiceText}`);
  await claudeChoice.click();
  await quickInputTitled(page, `The memory's type (${name})`);
  await page.locator('.quick-input-widget .monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^\s*feedback\s*$/ }),
  }).first().click();
  const diff = page.locator('.editor-group-container.active .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible' });
  await waitInPage(page, 'the new topic file on the right of the diff', (want) => {
    // Side by side or inline (the editor is narrow beside the wide side bar): any of its lines.
    const text = [...document.querySelectorAll('.editor-group-container.active .monaco-diff-editor .view-lines')]
      .map((e) => e.textContent).join('\n').replace(/\u00a0/g, ' ');
    return want.every((w) => text.includes(w));
  }, [`name: ${name}`, 'type: feedback', fact]);
  const ask = page.locator('.notifications-toasts .notification-toast', { hasText: `its line in MEMORY.md: - [${name}](${name}.md)` }).first();
  await ask.waitFor({ state: 'visible' });
  if (existsSync(path.join(folder, `${name}.md`))) throw new Error('the topic file was written before "Save"');
  await page.mouse.move(1200, 600);
  await screenshot(page, 'claude-memory-add');

  step('"Save Memory": the topic file and its MEMORY.md line are written, nothing under .gemini');
  await page.locator('.editor-group-container.active .editor-actions .action-label[aria-label="Save Memory"]').first().click();
  await diff.waitFor({ state: 'hidden' });
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'Saved a feedback memory for Claude Code' })
    .first().waitFor({ state: 'visible' });
  const written = readFileSync(path.join(folder, `${name}.md`), 'utf8');
  const wantTopic = `---\nname: ${name}\ndescription: ${fact}\nmetadata:\n  type: feedback\n---\n\n${fact}\n`;
  if (written !== wantTopic) throw new Error(`the topic file:\n${written}`);
  const indexAfter = readFileSync(path.join(folder, 'MEMORY.md'), 'utf8');
  if (indexAfter !== `${indexBefore}- [${name}](${name}.md) \u2014 ${fact}\n`) throw new Error(`MEMORY.md:\n${indexAfter}`);
  const geminiChanged = changes(geminiBefore, snapshot(gemini, new Set([path.join(gemini, 'tmp')])));
  if (geminiChanged.length) throw new Error(`written under .gemini: ${geminiChanged.join(', ')}`);
  await treeRow(memory, 'Memories · feedback (3)').waitFor({ state: 'visible' });
  console.log(`claude-memory: screenshots ${shots.join(', ')}`);
});
