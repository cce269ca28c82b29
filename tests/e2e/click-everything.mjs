// "Every click works" (issue 13): on a copy of the demo (a HOME of its own), click every code
// lens kind and check what opens, run EVERY contributed command from the command palette
// (read from package.json, so a new command is covered without editing this test), click every
// view/title action of the Memory, Skills and Chat views, every view/item/context action (an
// inbox skill accepted, another rejected), the editor/title action and the status bar item;
// commands that ask for input are cancelled with Escape (cancelling must be quiet too). The
// test FAILS on any error in the extension host's log (remoteexthost.log) or in the Memory
// Lens output channel (a failed request, a server ERROR or traceback), naming the click that
// caused it.
// Also checks that the context views reuse one editor group (issue 13 "Views reuse the
// editor") and that the merged context is not coloured as markdown.
// Screenshots, each in the dark and the light theme (-dark/-light):
//   click-lens-references  the "imported by 1" lens clicked: the references peek with GEMINI.md
//   click-lens-claude      AGENTS.md's lens (imported by CLAUDE.md's include) clicked
//   click-context-reused   three context commands later: still two editor groups, one context tab
//   click-context-colours  the merged-context document (markers coloured, text plain)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  REPO, runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openFromExplorer,
  waitForServer, waitForCodeLens, runCommand, activeTab, waitInPage, waitForEditorText,
  openMemoryLens, viewPane, projectPython, settled, screenshot, log, MEMORY_STATUS,
  extensionHostLogDirs, newExtensionHostLogDir, ExtensionHostLog, commandInput, quickOpenPath,
} from './lib/vscode.mjs';

const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const contributes = manifest.contributes;
const COMMANDS = contributes.commands;
const titleOf = (id) => COMMANDS.find((c) => c.command === id)?.title ?? id;
const paletteTitle = (c) => (c.category ? `${c.category}: ${c.title}` : c.title);
const hiddenFromPalette = new Set((contributes.menus?.commandPalette ?? [])
  .filter((m) => m.when === 'false').map((m) => m.command));
// Commands the palette offers only in a context (Save Memory / Cancel Add Memory while an Add
// Memory diff is open): add-memory.mjs clicks them there; here they are absent by design.
const paletteOnlyWhen = new Map((contributes.menus?.commandPalette ?? [])
  .filter((m) => m.when && m.when !== 'false').map((m) => [m.command, m.when]));
const ACTIVE_EDITOR = '.editor-group-container.active .monaco-editor';
const QUICK_INPUT = '.quick-input-widget';
const DIALOG = '.monaco-dialog-box';

const SKILL = (name) => `---
name: ${name}
description: A skill the click-everything test ${name.endsWith('keep') ? 'accepts' : 'rejects'}.
---

# ${name}

## When to Use
Never: it is a test fixture.

## Procedure
1. Nothing.

## Pitfalls and Fixes
- None.

## Verification
The test sees it leave the inbox.
`;

await runScenario('click-everything', async (scenario) => {
  try {
    await clickEverything(scenario);
  } catch (e) {
    // What the extension host logged up to the failure (the cause, often).
    scenario.dumpLog?.();
    throw e;
  }
}, { viewport: { width: 1600, height: 1000 } });

async function clickEverything(scenario) {
  const { page, step, cleanup } = scenario;
  step('copy the demo with a HOME of its own; seed two inbox skills');
  const { root, workspace, home } = isolatedWorkspace({
    settings: { 'workbench.view.alwaysShowHeaderActions': true, 'workbench.colorTheme': 'Default Dark Modern' },
  });
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const settingsFile = path.join(workspace, '.vscode', 'settings.json');
  const inbox = execFileSync(projectPython(), ['-c',
    'import sys; from memlens.agents.gemini.inbox import inbox_dir; print(inbox_dir(sys.argv[1], sys.argv[2], claim=True))',
    home, workspace], { encoding: 'utf8' }).trim();
  for (const name of ['click-test-keep', 'click-test-drop']) {
    mkdirSync(path.join(inbox, name), { recursive: true });
    writeFileSync(path.join(inbox, name, 'SKILL.md'), SKILL(name));
  }

  // --- the extension host's log, checked after every click ---------------------------------
  const before = extensionHostLogDirs();
  const failures = [];
  let hostLog;
  // vscode-languageclient 9 logs every exit of the server at error level, a clean one after
  // shutdown/exit too (Restart Server); fixed upstream to an info line by
  // microsoft/vscode-languageserver-node#1404 (issue #1403). Only exit code 0 is let through.
  const benign = (e) => e.kind === 'channel' && /^\[Error - [^\]]*\] Server process exited with code 0\.$/.test(e.entry.trim());
  const checkLog = (label) => {
    const fresh = hostLog ? hostLog.check(label) : [];
    for (const e of fresh) {
      if (benign(e)) {
        log(`click-everything: (not an error: ${e.entry.trim()} after "${label}")`);
        continue;
      }
      log(`click-everything: ERROR in ${e.file} after "${label}":\n    ${e.entry.split('\n').slice(0, 8).join('\n    ')}`);
      failures.push(e);
    }
  };
  // Runs `wait` (a wait for what the click should open); fails early, with the log's error,
  // when the extension host logs one meanwhile (a click that does nothing but log an error).
  const opens = async (label, wait) => {
    let done = false;
    const watch = (async () => {
      while (!done) {
        await new Promise((r) => setTimeout(r, 500));
        const before = failures.length;
        checkLog(label);
        if (failures.length > before) throw new Error(`"${label}" logged an error instead: ${failures[before].entry.split('\n').slice(0, 3).join(' | ')}`);
      }
    })();
    try {
      await Promise.race([wait(), watch]);
    } finally {
      done = true;
    }
  };
  const theme = async (name) => {
    const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
    settings['workbench.colorTheme'] = name === 'light' ? 'Default Light Modern' : 'Default Dark Modern';
    writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
    await page.locator(`.monaco-workbench.${name === 'light' ? 'vs' : 'vs-dark'}`).waitFor({ state: 'attached' });
    await page.waitForTimeout(300);
  };
  // A screenshot in the dark theme, then in the light one, then back to dark.
  const shots = async (name, settle) => {
    await page.mouse.move(600, 900); // no tooltip of whatever the last click left the mouse on
    if (settle) await settled(settle);
    await screenshot(page, `${name}-dark`);
    await theme('light');
    if (settle) await settled(settle);
    await screenshot(page, `${name}-light`);
    await theme('dark');
  };
  const closeQuickInputAndDialogs = async () => {
    for (let i = 0; i < 3; i += 1) {
      const open = await page.locator(`${QUICK_INPUT}:visible, ${DIALOG}:visible`).count();
      if (!open) return;
      await page.keyboard.press('Escape');
      await page.waitForTimeout(200);
    }
  };
  const clearNotifications = async () => {
    await runCommand(page, 'Notifications: Clear All Notifications');
  };
  const groups = () => page.locator('.editor-group-container').count();
  const contextTabs = () => page.locator('.tabs-container .tab[data-resource-name$="Context.md"]').count();

  step('open the workbench on the copy and GEMINI.md; find this window\'s extension host log');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);
  hostLog = new ExtensionHostLog(await newExtensionHostLogDir(before));
  scenario.dumpLog = () => {
    checkLog('until the failure');
    for (const f of hostLog.files()) {
      if (f.kind === 'channel') log(`click-everything: ${f.file}:\n${readFileSync(f.file, 'utf8').split('\n').slice(-40).join('\n')}`);
    }
  };
  log(`click-everything: extension host log: ${hostLog.dir}`);
  checkLog('start-up');

  // --- code lenses ----------------------------------------------------------------------------
  step('code lens "imported by 1" on docs/architecture.md: the references peek lists GEMINI.md');
  await quickOpenPath(page, path.join(workspace, 'docs/architecture.md'));
  await waitForCodeLens(page, 'imported by 1');
  await page.locator(`${ACTIVE_EDITOR} .codelens-decoration a`, { hasText: 'imported by 1' }).first().click();
  const peek = page.locator(`${ACTIVE_EDITOR} .peekview-widget`).first();
  await opens('code lens "imported by 1" (architecture.md)', () => peek.waitFor({ state: 'visible' }));
  await waitInPage(page, 'the peek to list GEMINI.md and show its import line', ([sel]) => {
    const widget = document.querySelector(`${sel} .peekview-widget`);
    const text = widget?.textContent.replace(/\u00a0/g, ' ') ?? '';
    return text.includes('GEMINI.md') && text.includes('@./docs/architecture.md');
  }, [ACTIVE_EDITOR], { describe: ([sel]) => document.querySelector(`${sel} .peekview-widget`)?.textContent.slice(0, 400) });
  checkLog('code lens "imported by 1" (architecture.md)');
  await shots('click-lens-references', peek);
  await page.keyboard.press('Escape');
  await peek.waitFor({ state: 'hidden' });

  step('code lens "imported by 1" on AGENTS.md (CLAUDE.md includes it): the peek lists CLAUDE.md');
  await quickOpenPath(page, path.join(workspace, 'AGENTS.md'));
  await waitForCodeLens(page, /imported by \d/);
  await page.locator(`${ACTIVE_EDITOR} .codelens-decoration a`, { hasText: /imported by \d/ }).first().click();
  await opens('code lens "imported by" (AGENTS.md)', () => peek.waitFor({ state: 'visible' }));
  await waitInPage(page, 'the peek to list CLAUDE.md', ([sel]) => {
    const text = document.querySelector(`${sel} .peekview-widget`)?.textContent ?? '';
    return text.includes('CLAUDE.md') && text.includes('@./AGENTS.md');
  }, [ACTIVE_EDITOR], { describe: ([sel]) => document.querySelector(`${sel} .peekview-widget`)?.textContent.slice(0, 400) });
  checkLog('code lens "imported by" (AGENTS.md)');
  await shots('click-lens-claude', peek);
  await page.keyboard.press('Escape');
  await peek.waitFor({ state: 'hidden' });

  step('code lens "N memory files · C chars" on GEMINI.md: the merged context opens beside');
  // Coming back to GEMINI.md VS Code first draws the lenses it had, then asks again; in about
  // one run of ten the lens then went away with nothing logged (under investigation, see the
  // issue 13 note): reopen the file to have it asked once more, and say so.
  let loads;
  for (let attempt = 1; ; attempt += 1) {
    await quickOpenPath(page, path.join(workspace, 'GEMINI.md'));
    // Reopened at its old cursor, VS Code may reveal line 1 at the very top, which scrolls the
    // lens zone above it out of view: scroll up, as a user would, to bring it back.
    await page.locator(`${ACTIVE_EDITOR} .view-lines`).first().hover();
    await page.mouse.wheel(0, -2000);
    loads = await waitForCodeLens(page, /\d+ memory files? · [\d,]+ chars/);
    try {
      await page.locator(`${ACTIVE_EDITOR} .codelens-decoration a`, { hasText: /\d+ memory files? · [\d,]+ chars/ }).first().click({ timeout: 10_000 });
      break;
    } catch (e) {
      if (attempt === 3) throw e;
      log(`click-everything: NOTE: the "${loads}" lens went away before it was clicked (attempt ${attempt}); reopening GEMINI.md`);
      await quickOpenPath(page, path.join(workspace, 'AGENTS.md'));
    }
  }
  await opens(`code lens "${loads}"`, () => activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' }));
  await waitForEditorText(page, 'the merged context', [`--- Context from: ${path.join(workspace, 'GEMINI.md')} ---`]);
  if ((await groups()) !== 2) throw new Error(`the merged context should open beside (2 groups), found ${await groups()}`);
  checkLog(`code lens "${loads}"`);

  // --- the context views reuse one editor group ---------------------------------------------
  step('"Show What Each Agent Reads…" (Claude Code), then "Show Merged Context": the same group, one tab');
  await page.locator('.editor-group-container').first().click({ position: { x: 200, y: 200 } });
  await runCommand(page, `Memory Lens: ${titleOf('memlens.showAgentContext')}`, { waitHidden: false });
  const claude = page.locator(`${QUICK_INPUT} .monaco-list-row`, {
    has: page.locator('.label-name', { hasText: /^\s*Claude Code\s*$/ }),
  }).first();
  await claude.click();
  await activeTab(page, 'Claude Code Context.md').waitFor({ state: 'visible' });
  await page.locator('.editor-group-container').first().click({ position: { x: 200, y: 200 } });
  await runCommand(page, `Memory Lens: ${titleOf('memlens.showMergedContext')}`);
  await activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' });
  const [groupCount, tabCount] = [await groups(), await contextTabs()];
  if (groupCount !== 2 || tabCount !== 1) {
    throw new Error(`after three context views: ${groupCount} editor groups and ${tabCount} context tabs (want 2 and 1)`);
  }
  checkLog('context views');
  await shots('click-context-reused');

  step('the merged context is plain text with coloured markers (language "Memory Lens Context")');
  await page.locator('[id="status.editor.mode"]', { hasText: 'Memory Lens Context' }).first().waitFor({ state: 'visible' });
  const colours = await page.evaluate((sel) => {
    const lines = [...document.querySelectorAll(`${sel} .view-lines .view-line`)];
    const colourOf = (prefix) => {
      const line = lines.find((l) => l.textContent.replace(/\u00a0/g, ' ').startsWith(prefix));
      const span = line?.querySelector('span > span');
      return span ? getComputedStyle(span).color : null;
    };
    return { marker: colourOf('--- Context from:'), heading: colourOf('# Acme Orders'), text: colourOf('Acme Orders is') };
  }, ACTIVE_EDITOR);
  log(`click-everything: colours ${JSON.stringify(colours)}`);
  if (!colours.marker || !colours.heading || !colours.text) throw new Error(`lines not found: ${JSON.stringify(colours)}`);
  if (colours.marker === colours.text) throw new Error('the --- Context from: marker is not coloured');
  if (colours.heading !== colours.text) throw new Error('a "# heading" of the memory text is coloured (markdown?)');
  await shots('click-context-colours');

  // --- every contributed command from the palette ---------------------------------------------
  // What to do once a command runs (by id); any other command: whatever asks for input is
  // cancelled with Escape.
  const drive = {
    'memlens.showMergedContext': async () => activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' }),
    'memlens.showAgentContext': async () => {
      await commandInput(page, 'the agent pick');
      // The AGENTS.md convention (for agents without a profile of their own).
      const row = page.locator(`${QUICK_INPUT} .monaco-list-row`, {
        has: page.locator('.label-name', { hasText: /^\s*AGENTS\.md\s*$/ }),
      }).first();
      await row.click();
      await activeTab(page, 'AGENTS.md Context.md').waitFor({ state: 'visible' });
    },
    'memlens.listMemoryFiles': async () => {
      await commandInput(page, 'the memory file pick');
      // Every agent shown lists its own files: Claude Code's CLAUDE.md beside Gemini CLI's.
      await page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: 'CLAUDE.md' }).first()
        .waitFor({ state: 'visible' });
      const row = page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: 'GEMINI.md' }).first();
      await row.waitFor({ state: 'visible' });
      await shots('click-list-files');
      await row.click();
      await activeTab(page, 'GEMINI.md').waitFor({ state: 'visible' });
    },
    'memlens.addMemory': async () => {
      // Cancelled twice: at the fact, and (once the fact is typed) at the next question.
      await commandInput(page, 'the Add Memory input box');
      await page.keyboard.press('Escape');
      await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
      checkLog('Add Memory… cancelled at the fact');
      await runCommand(page, `Memory Lens: ${titleOf('memlens.addMemory')}`, { waitHidden: false });
      const input = await commandInput(page, 'the Add Memory input box');
      await input.fill('The click test never saves this.');
      await input.press('Enter');
      await page.locator(`${QUICK_INPUT}:not(.quick-input-widget-closing) .monaco-list-row`).first().waitFor({ state: 'visible' });
      await page.keyboard.press('Escape');
      await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
    },
    'memlens.setApiKey': async () => {
      // Not saved: the key is in code-server's secret storage, which other tests share.
      await commandInput(page, 'the API key input box');
      await page.keyboard.press('Escape');
      await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
    },
    'memlens.showAgentMatrix': async () => {
      // The panel is a webview: wait for its table, then close it, so that its frame cannot
      // take the focus the next steps' quick inputs need.
      const tab = page.locator('.tabs-container .tab', { hasText: 'Agent Matrix' }).first();
      await tab.waitFor({ state: 'visible' });
      await page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame')
        .locator('th.file').first().waitFor({ state: 'visible' });
      await tab.hover();
      await tab.locator('.tab-actions .action-label').first().click();
      await tab.waitFor({ state: 'detached' });
    },
    'memlens.openSkillsInbox': async () => viewPane(page, 'Skills').locator('.monaco-list-row', { hasText: 'Inbox' }).first().waitFor({ state: 'visible' }),
    'memlens.extractSkills': async () => {
      // No key in this environment: a message says so (never a silent failure).
      await page.locator('.notifications-toasts .notification-toast').first().waitFor({ state: 'visible' });
    },
    'memlens.restartServer': async () => {
      await page.waitForTimeout(1000);
      await waitForServer(page);
    },
  };
  for (const [command, when] of paletteOnlyWhen) {
    log(`click-everything: "${paletteTitle(COMMANDS.find((c) => c.command === command) ?? { title: command })}" is in the palette only when ${when}; skipped`);
  }
  const paletteCommands = COMMANDS.filter((c) => !hiddenFromPalette.has(c.command)
    && !paletteOnlyWhen.has(c.command));
  for (const command of paletteCommands) {
    const title = paletteTitle(command);
    step(`palette: "${title}"`);
    await quickOpenPath(page, path.join(workspace, 'GEMINI.md'));
    await runCommand(page, title, { waitHidden: false });
    if (drive[command.command]) {
      await drive[command.command]();
    } else {
      await page.waitForTimeout(1500);
    }
    await closeQuickInputAndDialogs();
    await page.waitForTimeout(500);
    checkLog(`palette: ${title}`);
    await clearNotifications();
  }

  // --- the views' title actions and item actions ----------------------------------------------
  step('open the Memory Lens views');
  await quickOpenPath(page, path.join(workspace, 'GEMINI.md'));
  // Open Skills Inbox has shown the container already: its activity bar icon would hide it.
  const container = page.locator('.part.sidebar .composite.title', { hasText: /Memory Lens/i }).first();
  if (!(await container.isVisible())) await openMemoryLens(page);
  const viewOf = { 'memlens.chat': 'Chat', 'memlens.memory': 'Memory', 'memlens.skills': 'Skills' };
  for (const name of Object.values(viewOf)) {
    const header = viewPane(page, name).locator('.pane-header');
    if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  }
  const titleActions = (contributes.menus?.['view/title'] ?? []).filter((m) => /\bview == memlens\./.test(m.when ?? ''));
  for (const action of titleActions) {
    const view = viewOf[/view == (memlens\.\w+)/.exec(action.when)[1]];
    const title = titleOf(action.command);
    step(`view/title of ${view}: "${title}"`);
    const pane = viewPane(page, view);
    if ((action.group ?? '').startsWith('navigation')) {
      const button = pane.locator(`.pane-header .actions .action-label[aria-label^="${title}"]`).first();
      if (!(await button.isVisible()) && /&&/.test(action.when)) {
        log(`click-everything: "${title}" is not shown now (when: ${action.when}); skipped`);
        continue;
      }
      await button.click();
    } else {
      await pane.locator('.pane-header .actions .action-label[aria-label="More Actions..."]').first().click();
      const item = page.locator('.context-view .action-item', { hasText: title }).first();
      if (!(await item.isVisible().catch(() => false)) && /&&/.test(action.when)) {
        await page.keyboard.press('Escape');
        log(`click-everything: "${title}" is not in the menu now (when: ${action.when}); skipped`);
        continue;
      }
      await item.click();
    }
    if (drive[action.command]) {
      await drive[action.command]();
    } else {
      await page.waitForTimeout(1500);
    }
    await closeQuickInputAndDialogs();
    await page.waitForTimeout(500);
    checkLog(`view/title ${view}: ${title}`);
    await clearNotifications();
  }

  step('view/item/context of Skills: "Accept Skill" on one inbox skill, "Reject Skill" on the other');
  const skills = viewPane(page, 'Skills');
  await skills.locator('.monaco-list-row[aria-expanded="true"]', { hasText: 'Inbox' }).first().waitFor({ state: 'visible' });
  // An inbox skill's row (level 2 under "Inbox"), not the one an accepted skill gets under
  // "Gemini CLI" (level 2 too, its tier "user" as description).
  const inboxRow = (name) => skills.locator('.monaco-list-row[aria-level="2"]').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${name}\\s*$`) }),
  }).filter({ hasNot: page.locator('.label-description', { hasText: /^\s*user\s*$/ }) }).first();
  const itemActions = (contributes.menus?.['view/item/context'] ?? []).filter((m) => /view == memlens\./.test(m.when ?? ''));
  const covered = new Set();
  for (const [name, command] of [['click-test-keep', 'memlens.acceptSkill'], ['click-test-drop', 'memlens.rejectSkill']]) {
    const row = inboxRow(name);
    await row.waitFor({ state: 'visible' });
    await row.hover();
    await row.locator(`.action-label[aria-label="${titleOf(command)}"]`).click();
    if (command === 'memlens.rejectSkill') {
      const dialog = page.locator(DIALOG);
      await dialog.waitFor({ state: 'visible' });
      await dialog.locator('.monaco-button', { hasText: 'Reject' }).first().click();
    }
    await row.waitFor({ state: 'detached' });
    covered.add(command);
    checkLog(`view/item/context: ${titleOf(command)} (${name})`);
  }
  await clearNotifications();
  const missed = itemActions.map((m) => m.command).filter((c) => !covered.has(c));
  if (missed.length) throw new Error(`view/item/context actions not clicked by this test: ${missed.join(', ')} (add them)`);

  step('the editor/title action and the status bar item');
  await quickOpenPath(page, path.join(workspace, 'GEMINI.md'));
  for (const action of contributes.menus?.['editor/title'] ?? []) {
    if (/memlens-proposed/.test(action.when ?? '')) {
      // Save / Cancel of an open Add Memory diff: add-memory.mjs clicks them there.
      log(`click-everything: "${titleOf(action.command)}" is shown only when ${action.when}; skipped`);
      continue;
    }
    await page.locator(`.editor-group-container.active .editor-actions .action-label[aria-label^="${titleOf(action.command)}"]`).first().click();
    if (drive[action.command]) await drive[action.command]();
    checkLog(`editor/title: ${titleOf(action.command)}`);
  }
  await quickOpenPath(page, path.join(workspace, 'GEMINI.md'));
  await page.locator(`${MEMORY_STATUS} a, ${MEMORY_STATUS}`).first().click();
  await activeTab(page, 'Merged Context.md').waitFor({ state: 'visible' });
  if ((await groups()) !== 2) throw new Error(`after every context command: ${await groups()} editor groups (want 2)`);

  step('the extension host log: no error from any click');
  await page.waitForTimeout(1500);
  checkLog('the end');
  if (failures.length) {
    throw new Error(`${failures.length} error(s) in the extension host log:\n${failures.map((f) => `after "${f.label}" (${f.file}): ${f.entry.split('\n')[0]}`).join('\n')}`);
  }
  log(`click-everything: ${paletteCommands.length} palette commands, ${titleActions.length} view/title actions, ${covered.size} item actions, 3 code lenses: no error in ${hostLog.dir}`);
}
