// Diagnostics in the Problems panel, on a fresh copy of the demo: GEMINI.md gains an import of
// docs/a.md, which imports docs/b.md, which imports docs/a.md again (a cycle), and an import
// `@../../outside.md` of a file that exists but lies outside the project root (a traversal).
// With GEMINI.md open, the Problems panel must list, each once and with source memlens:
// import-not-found (docs/deploy.md, already in the demo), import-outside-root and import-cycle,
// and the demo's hidden content in docs/onboarding.md (hidden-text, hidden-comment); the status
// bar must count exactly those problems (no duplicates). Then docs/deploy.md is
// written on disk and import-not-found must go away.
// Screenshots: artifacts/e2e/diagnostics.png, diagnostics-short-{light,dark}.png.
import { appendFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, copyWorkspace, openWorkbench, openFromExplorer, waitForServer,
  waitInPage, screenshot, TIMEOUT, openProblemsPanel,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const EXPECTED = [
  // Short, as written, so the Problems panel shows all of it (issue 13); the resolved path and
  // what Gemini CLI embeds are the related information, on a row under it.
  { code: 'import-not-found', severity: 'error', file: 'GEMINI.md', text: 'docs/deploy.md',
    exact: 'Import not found: ./docs/deploy.md', related: 'Gemini CLI embeds: <!-- Import failed: ./docs/deploy.md' },
  { code: 'import-outside-root', severity: 'error', file: 'GEMINI.md', text: '../../outside.md', exact: 'Import outside the project root: ../../outside.md',
    related: 'resolves to' },
  { code: 'import-cycle', severity: 'warning', file: 'docs/b.md', text: 'a.md → b.md → a.md' },
  // The demo's docs/onboarding.md (imported by GEMINI.md): a sentence in tag characters and an
  // HTML comment (tests/e2e/hidden-text.mjs fixes the first).
  { code: 'hidden-text', severity: 'error', file: 'docs/onboarding.md', text: 'ASCII smuggling' },
  { code: 'hidden-comment', severity: 'info', file: 'docs/onboarding.md', text: 'Gemini CLI receives this HTML comment' },
];

await runScenario('diagnostics', async ({ page, step, cleanup }) => {
  step('copy the demo and add a cycle and a traversal');
  const { root, workspace } = copyWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(path.join(workspace, 'docs/a.md'), '## A\n\n@./b.md\n');
  writeFileSync(path.join(workspace, 'docs/b.md'), '@./a.md\n\n## B\n');
  // workspace is ROOT/repo/demo: ../../outside.md is ROOT/outside.md, a real file.
  writeFileSync(path.join(root, 'outside.md'), '# Not part of the project\n');
  appendFileSync(path.join(workspace, 'GEMINI.md'), '\n@./docs/a.md\n\n@../../outside.md\n');

  step('open the workbench on the copy');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'docs'] });

  step('open GEMINI.md');
  await openFromExplorer(page, 'GEMINI.md', { contains: 'outside.md' });
  await waitForServer(page);

  step('open the Problems panel (Ctrl+Shift+M)');
  const panel = await openProblemsPanel(page);

  step(`wait for ${EXPECTED.map((e) => e.code).join(', ')} in the Problems panel`);
  // The panel's rows, in order: a file row (full path), then its problems.
  const readRows = () => [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((row) => {
    const text = (sel) => row.querySelector(sel)?.textContent.replace(/\u00a0/g, ' ') ?? null;
    const file = row.querySelector('.resource-label-container .monaco-icon-label');
    if (file) return { file: file.getAttribute('aria-label') };
    const icon = row.querySelector('.marker-icon');
    if (!icon) return { related: row.textContent.replace(/\u00a0/g, ' ') };
    return {
      severity: icon ? [...icon.classList].find((c) => c !== 'marker-icon') : null,
      message: text('.marker-message'), source: text('.marker-source'), code: text('.marker-code'),
    };
  });
  const codes = JSON.stringify(EXPECTED.map((e) => e.code));
  const rows = await waitInPage(page, 'the five memlens problems',
    `(() => { const rows = (${readRows})(); return ${codes}.every((c) => rows.some((r) => r.code === c)) ? rows : null; })()`,
    null, { describe: `(${readRows})()` });

  // Each problem: once, in the right file, with the right severity and source.
  let file = '';
  const byCode = new Map();
  let last = null;
  for (const row of rows) {
    if (row.file) { file = row.file; continue; }
    if (row.related !== undefined) { if (last) last.related = (last.related || '') + row.related; continue; }
    if (byCode.has(row.code)) throw new Error(`${row.code} is listed twice`);
    last = { ...row, file };
    byCode.set(row.code, last);
  }
  for (const e of EXPECTED) {
    const got = byCode.get(e.code);
    const where = path.join(workspace, e.file);
    if (got.file !== where) throw new Error(`${e.code} listed under ${got.file}, expected ${where}`);
    if (got.severity !== e.severity) throw new Error(`${e.code} is a ${got.severity}, expected ${e.severity}`);
    if (got.source !== 'memlens') throw new Error(`${e.code}: source is ${got.source}, expected memlens`);
    if (!got.message.includes(e.text)) throw new Error(`${e.code}: message lacks "${e.text}": ${got.message}`);
    if (e.exact && got.message.trim() !== e.exact) throw new Error(`${e.code}: message is "${got.message}", expected "${e.exact}"`);
    if (e.related && !(got.related || '').includes(e.related)) throw new Error(`${e.code}: no related row with "${e.related}": ${got.related}`);
  }
  if (byCode.size !== EXPECTED.length) throw new Error(`unexpected problems: ${[...byCode.keys()].join(', ')}`);

  step('the status bar counts 3 errors, 1 warning and 1 info (each problem once)');
  await waitInPage(page, 'the status bar to say "Errors: 3, Warnings: 1, Infos: 1"', () => {
    const item = document.querySelector('[id="status.problems"]');
    return item && item.getAttribute('aria-label') === 'Errors: 3, Warnings: 1, Infos: 1';
  }, null, {
    timeout: Math.min(TIMEOUT, 30_000),
    describe: () => document.querySelector('[id="status.problems"]')?.getAttribute('aria-label'),
  });

  step('screenshot');
  await screenshot(page, 'diagnostics');
  await screenshotThemes(page, workspace, 'diagnostics-short');

  // A change made outside the editor reaches the open file's diagnostics too: writing the
  // missing docs/deploy.md clears import-not-found (and nothing else).
  step('write docs/deploy.md on disk; wait for import-not-found to go');
  writeFileSync(path.join(workspace, 'docs/deploy.md'), '## Deploy\n\nShip it.\n');
  await waitInPage(page, 'the status bar to say "Errors: 2, Warnings: 1, Infos: 1"', () => {
    const item = document.querySelector('[id="status.problems"]');
    return item && item.getAttribute('aria-label') === 'Errors: 2, Warnings: 1, Infos: 1';
  }, null, {
    timeout: Math.min(TIMEOUT, 60_000),
    describe: () => document.querySelector('[id="status.problems"]')?.getAttribute('aria-label'),
  });
  // The panel refreshes a little after the status bar.
  await waitInPage(page, 'the Problems panel to list only the hidden content, import-cycle and import-outside-root',
    `(() => (${readRows})().filter((r) => r.code).map((r) => r.code).sort().join(', ') === 'hidden-comment, hidden-text, import-cycle, import-outside-root')()`,
    null, { timeout: Math.min(TIMEOUT, 30_000), describe: `(${readRows})()` });
});
