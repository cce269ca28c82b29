// A look at real repositories at 1280 px, for a person to read (not part of the suite: it is
// not in tests/e2e/ itself, and the repositories are not in this one):
//
//   MEMLENS_TOUR_REPOS="/path/a /path/b" bash scripts/vscode/run-e2e.sh tests/e2e/tour/repos.mjs
//
// For each folder: VS Code with the Problems panel, the Memory view, the Agent Matrix, "Show
// What Each Agent Reads…" side by side, and `memlens report --html` in the browser; dark theme
// (light with MEMLENS_TOUR_THEME=light). Screenshots: ARTIFACTS/tour-<repo>-<view>.png. The
// theme is set in each folder's .vscode/settings.json and put back afterwards.
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  runScenario, startCodeServer, openWorkbench, waitForServer, openMemoryLens, openProblemsPanel,
  runCommand, quickInputTitled, screenshot, projectPython, log, quickOpen, waitInPage,
} from '../lib/vscode.mjs';
import { saveSettings, useTheme } from '../lib/themes.mjs';

const repos = (process.env.MEMLENS_TOUR_REPOS || '').split(/\s+/).filter(Boolean);
const theme = process.env.MEMLENS_TOUR_THEME || 'dark';

await runScenario('tour', async ({ page, step, cleanup }) => {
  if (repos.length === 0) {
    log('tour: set MEMLENS_TOUR_REPOS to the folders to look at');
    return;
  }
  for (const repo of repos) {
    const name = path.basename(repo);
    const shot = (view) => screenshot(page, `tour-${name}-${view}`);
    step(`${name}: VS Code on it, its Problems`);
    const restore = saveSettings(repo);
    cleanup(restore);
    const { url } = await startCodeServer(repo, cleanup);
    await openWorkbench(page, url);
    await useTheme(page, repo, theme);
    const first = ['CLAUDE.md', 'AGENTS.md', 'GEMINI.md', '.github/copilot-instructions.md']
      .find((file) => { try { execFileSync('test', ['-f', path.join(repo, file)]); return true; } catch { return false; } });
    if (first) await quickOpen(page, first);
    await waitForServer(page);
    await waitInPage(page, 'the server to have indexed the folder', () =>
      !document.querySelector('.statusbar')?.textContent.includes('Memory Lens: starting'),
    undefined, { timeout: 600_000 });
    await openProblemsPanel(page);
    await page.waitForTimeout(1500);
    await shot('problems');

    step(`${name}: the Memory view`);
    await openMemoryLens(page);
    await page.waitForTimeout(2500);
    await shot('memory-view');

    step(`${name}: the Agent Matrix`);
    await runCommand(page, 'Memory Lens: Show Agent Matrix');
    await page.locator('.tab.active', { hasText: 'Agent Matrix' }).first().waitFor({ state: 'visible', timeout: 120_000 });
    await page.waitForTimeout(5000);
    await shot('matrix');

    step(`${name}: side by side`);
    if (first) await page.locator('.tab', { hasText: path.basename(first) }).first().click();
    await runCommand(page, 'Memory Lens: Show What Each Agent Reads…', { waitHidden: false });
    await quickInputTitled(page, `What each agent reads for ${first ?? ''}`);
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await rows.first().waitFor({ state: 'visible' });
    await rows.first().click();
    await page.waitForTimeout(3000);
    await shot('side-by-side');
    restore();

    step(`${name}: memlens report --html`);
    const out = mkdtempSync(path.join(tmpdir(), 'memlens-tour-'));
    cleanup(() => rmSync(out, { recursive: true, force: true }));
    const html = path.join(out, 'report.html');
    execFileSync(projectPython(), ['-m', 'memlens', 'report', repo, '--html', html], { stdio: 'ignore' });
    const report = await page.context().newPage();
    await report.setViewportSize({ width: 1280, height: 800 });
    if (theme === 'dark') await report.emulateMedia({ colorScheme: 'dark' });
    await report.goto(`file://${html}`);
    await report.waitForTimeout(500);
    await screenshot(report, `tour-${name}-report`);
    await report.close();
  }
}, { viewport: { width: 1280, height: 800 } });
