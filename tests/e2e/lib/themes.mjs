// Screenshots of one state in VS Code's light and dark themes: the workspace's
// .vscode/settings.json gets "workbench.colorTheme" (VS Code applies it live; no Memory Lens
// setting changes, so the server is not restarted), and the workbench's theme class is
// waited for before each shot.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { screenshot, waitInPage } from './vscode.mjs';

const THEMES = [
  ['light', 'Default Light Modern', 'vs'],
  ['dark', 'Default Dark Modern', 'vs-dark'],
];

// Sets the theme by name ("light" or "dark", or a theme's label) and waits for it.
export async function useTheme(page, workspace, which) {
  const [, theme, cls] = THEMES.find(([suffix, label]) => suffix === which || label === which);
  setTheme(workspace, theme);
  await waitInPage(page, `the ${theme} theme`, (c) => {
    const wb = document.querySelector('.monaco-workbench');
    return !!wb && wb.classList.contains(c) && !wb.classList.contains(c === 'vs' ? 'vs-dark' : 'vs');
  }, cls);
  await page.waitForTimeout(300);
}

// The workspace's settings.json as it was, to put back after the shots (`restoreSettings`).
export function saveSettings(workspace) {
  const file = path.join(workspace, '.vscode', 'settings.json');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : null;
  return () => {
    if (text === null) rmSync(file, { force: true });
    else writeFileSync(file, text);
  };
}

function setTheme(workspace, theme) {
  const file = path.join(workspace, '.vscode', 'settings.json');
  let current = {};
  if (existsSync(file)) {
    try { current = JSON.parse(readFileSync(file, 'utf8')); } catch { current = {}; }
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...current, 'workbench.colorTheme': theme }, null, 2)}\n`);
}

// Takes ARTIFACTS/<name>-light.png and <name>-dark.png; `before` (optional) runs after each
// theme change, e.g. to hover again. Returns the two paths.
export async function screenshotThemes(page, workspace, name, before) {
  const shots = [];
  for (const [suffix] of THEMES) {
    await useTheme(page, workspace, suffix);
    if (before) await before();
    shots.push(await screenshot(page, `${name}-${suffix}`));
  }
  return shots;
}
