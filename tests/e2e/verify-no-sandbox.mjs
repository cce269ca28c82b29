// "Memory Lens: Verify What My Agents Read" where no sandbox can run (issue 30): the language
// server refuses to run the agents ("no sandbox can run here …"), and the editor asks in a
// modal ("No sandbox can run your agents here."), naming the risk (a repository's files could
// make your agents run commands as you), how to get the sandbox and the folder, with "Run
// Without a Sandbox". Clicked as a user, with the real agents (lib/agents.mjs, as verify.mjs):
// Cancel → nothing runs (no progress notification, no result, nothing remembered); run it
// again → "Run Without a Sandbox" → the agents run (a progress notification), the result says
// "Identical (run without a sandbox): …" naming every agent, and the report ("Show Report")
// marks each agent's line UNSANDBOXED (as root the run still cuts the network with `unshare
// -n`: "UNSANDBOXED: network cut, nothing else"; elsewhere "UNSANDBOXED: offline flags, model
// on 127.0.0.1").
//
// Its own code-server (lib/vscode.mjs startCodeServer, as verify.mjs), started with
// MEMLENS_NO_BWRAP=1 (memlens.verify.sandbox.bubblewrap: the server believes bubblewrap is
// missing, as on a machine without it), the agents' bin folders first on PATH, VSCODE_CLI=1
// (so that PATH reaches the language server) and MEMLENS_VERIFICATIONS a scratch record.
// Workspace trust is off (VS Code's default here: every folder trusted), so the command runs.
// No agent installed: FAILS, naming what is missing (as verify.mjs).
//
// Screenshots (artifacts/e2e): verify-no-sandbox-modal-{light,dark}.png (the modal),
// verify-no-sandbox-result.png (the result notification), verify-no-sandbox-report.png.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, copyWorkspace, startCodeServer, openWorkbench, openFromExplorer, waitForServer,
  runCommand, activeTab, waitInPage, waitForEditorText, visibleLines, settled, screenshot, log,
} from './lib/vscode.mjs';
import { installedReferenceAgents, agentsPath } from './lib/agents.mjs';
import { screenshotThemes } from './lib/themes.mjs';

const TITLE = 'Memory Lens: Verify What My Agents Read';
const DIALOG = '.monaco-dialog-box';
const RUN_UNSANDBOXED = 'Run Without a Sandbox';
const TOAST = '.notifications-toasts .notification-toast';
// What a notification of a run says: the progress, and each result (verify.ts summary()).
const RUN_TEXT = /running your agents offline|verifying what your agents read|^(Identical|Not identical|Memory Lens could not verify)/;

await runScenario('verify-no-sandbox', async ({ page, step, cleanup }) => {
  step('find the reference agents (tests/conformance/agents.py)');
  const agents = installedReferenceAgents();
  log(`verify-no-sandbox: agents ${agents.map((a) => `${a.label} ${a.version}`).join(', ')}`);

  step('copy the demo; start a code-server with the agents on PATH and MEMLENS_NO_BWRAP=1');
  const { root, workspace } = copyWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const record = path.join(root, 'verified-here.json');
  const { url } = await startCodeServer(workspace, cleanup, {
    PATH: agentsPath(agents),
    MEMLENS_NO_BWRAP: '1',
    MEMLENS_VERIFICATIONS: record,
    // As in verify.mjs: without it, the login shell's PATH replaces this one.
    VSCODE_CLI: '1',
  });
  log(`verify-no-sandbox: code-server at ${url}`);

  step('open the folder (trusted: workspace trust is off)');
  await openWorkbench(page, url, { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md', { contains: 'project memory' });
  await waitForServer(page);

  // Every notification the page shows from now on, in order (a MutationObserver, so one that
  // comes and goes between two looks is seen too).
  await page.evaluate(() => {
    window.__memlensToasts = [];
    const seen = new WeakSet();
    const look = () => {
      for (const el of document.querySelectorAll('.notifications-toasts .notification-list-item-message')) {
        if (seen.has(el)) continue;
        seen.add(el);
        window.__memlensToasts.push(el.textContent.replace(/\u00a0/g, ' ').trim());
      }
    };
    new MutationObserver(look).observe(document.body, { childList: true, subtree: true, characterData: true });
    look();
  });
  const toastsSince = async (from) => (await page.evaluate(() => window.__memlensToasts)).slice(from);
  const toastCount = async () => page.evaluate(() => window.__memlensToasts.length);

  // Runs the command and returns the modal once it shows.
  const askModal = async () => {
    await runCommand(page, TITLE);
    const dialog = page.locator(DIALOG).first();
    await dialog.waitFor({ state: 'visible' });
    await settled(dialog);
    return dialog;
  };

  step('run the command: a modal says no sandbox can run here and names the risk');
  const atStart = await toastCount();
  let dialog = await askModal();
  const dialogText = (await dialog.innerText()).replace(/\u00a0/g, ' ');
  log(`verify-no-sandbox: the modal: ${dialogText.replace(/\n/g, ' | ')}`);
  for (const want of [
    'No sandbox can run your agents here.',
    'a repository\'s files could make your agents run commands as you',
    'Run them only on a folder you trust.',
    'to get it: apt-get install bubblewrap',
    `Folder: ${workspace}`,
  ]) {
    if (!dialogText.includes(want)) throw new Error(`the modal does not say "${want}": ${dialogText}`);
  }
  // The CLI's flag means nothing in the editor; the server's text (with it) is not shown.
  if (/--unsafe|`/.test(dialogText)) throw new Error(`the modal shows the CLI's text: ${dialogText}`);
  // The editor shows "running your agents offline…" only once a request has taken 0.5 s
  // (verify.ts withQuietProgress), so a quick refusal shows the modal alone; how quick the
  // server is depends on the machine's load, so this is reported, not asserted.
  const beforeModal = (await toastsSince(atStart)).filter((t) => RUN_TEXT.test(t));
  if (beforeModal.length) log(`verify-no-sandbox: note: before the modal, shown: ${beforeModal.join(' | ')}`);
  const buttons = (await dialog.locator('.dialog-buttons .monaco-button').allInnerTexts()).map((b) => b.trim());
  if (!buttons.includes(RUN_UNSANDBOXED) || !buttons.includes('Cancel')) throw new Error(`the modal's buttons: ${buttons.join(', ')}`);
  if (existsSync(record)) throw new Error(`an agent ran before the user answered: ${record} was written`);
  // (A progress notification of the refused request, if one showed, closes by itself.)
  await waitInPage(page, 'no progress notification beside the modal', () => ![...document.querySelectorAll(
    '.notifications-toasts .notification-list-item-message')].some((el) => /running your agents offline/.test(el.textContent)));
  const shots = await screenshotThemes(page, workspace, 'verify-no-sandbox-modal', () => settled(dialog));

  step('Cancel: nothing runs (no progress, no result, nothing remembered)');
  const atCancel = await toastCount();
  await dialog.locator('.dialog-buttons .monaco-button', { hasText: /^\s*Cancel\s*$/ }).first().click();
  await dialog.waitFor({ state: 'hidden' });
  // The notification center keeps every message shown: a result would be listed there.
  await runCommand(page, 'Notifications: Show Notifications');
  const center = page.locator('.notifications-center');
  await center.waitFor({ state: 'visible' });
  const listed = (await center.locator('.notification-list-item-message').allInnerTexts()).map((t) => t.trim());
  const results = listed.filter((t) => RUN_TEXT.test(t));
  if (results.length) throw new Error(`after Cancel, the notification center lists: ${results.join(' | ')}`);
  await page.keyboard.press('Escape');
  await center.waitFor({ state: 'hidden' });
  const afterCancel = (await toastsSince(atCancel)).filter((t) => RUN_TEXT.test(t));
  if (afterCancel.length) throw new Error(`after Cancel, shown: ${afterCancel.join(' | ')}`);
  if (existsSync(record)) throw new Error(`an agent ran after Cancel: ${record} was written`);

  step(`again: "${RUN_UNSANDBOXED}": the agents run; the result says identical for each`);
  dialog = await askModal();
  const atRun = await toastCount();
  await dialog.locator('.dialog-buttons .monaco-button', { hasText: RUN_UNSANDBOXED }).first().click();
  await dialog.waitFor({ state: 'hidden' });
  const expected = `Identical (run without a sandbox): ${agents.map((a) => `${a.label} ${a.version} identical`).join(', ')}`;
  const message = await waitInPage(page, 'the result notification', () => {
    const found = [...document.querySelectorAll('.notifications-toasts .notification-list-item-message')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ').trim())
      .find((t) => /^(Identical|Not identical|Memory Lens could not verify)/.test(t));
    return found || null;
  }, undefined, {
    describe: () => [...document.querySelectorAll('.notifications-toasts .notification-list-item-message')]
      .map((el) => el.textContent),
  });
  log(`verify-no-sandbox: ${message}`);
  if (message !== expected) throw new Error(`the result notification says "${message}", expected "${expected}"`);
  const progress = (await toastsSince(atRun)).filter((t) => /running your agents offline/.test(t));
  if (!progress.length) throw new Error('no progress notification while the agents ran');
  const toast = page.locator(TOAST, { hasText: expected }).first();
  const show = toast.locator('.monaco-button', { hasText: 'Show Report' }).first();
  await show.waitFor({ state: 'visible' });
  await toast.hover();
  await settled(toast);
  await screenshot(page, 'verify-no-sandbox-result');

  step('"Show Report": each agent identical, each line UNSANDBOXED');
  await show.click();
  await activeTab(page, `${path.basename(workspace)} — verification.diff`).waitFor({ state: 'visible' });
  await waitForEditorText(page, 'the report\'s header and one line per agent', [
    `Memory Lens: what your agents read in ${workspace}`,
    ...agents.map((a) => `${a.label} ${a.version}: identical (UNSANDBOXED: `),
  ], { ordered: true });
  const lines = await visibleLines(page);
  log(`verify-no-sandbox: the report:\n  ${lines.join('\n  ')}`);
  const agentLines = lines.filter((l) => agents.some((a) => l.startsWith(`${a.label} ${a.version}: `)));
  if (agentLines.length !== agents.length || agentLines.some((l) => !l.includes('(UNSANDBOXED: '))) {
    throw new Error(`not every agent's line says UNSANDBOXED: ${agentLines.join(' | ')}`);
  }
  if (lines.some((l) => l.includes('sandboxed: no network'))) throw new Error('the report claims a sandbox');
  if (lines.some((l) => /differs|^[-+@]{1,3}/.test(l))) throw new Error('the report shows a difference');
  await page.mouse.move(1200, 600);
  await screenshot(page, 'verify-no-sandbox-report');
  console.log(`verify-no-sandbox: screenshots ${shots.join(', ')}`);
});
