// `memlens mcp` registered with VS Code's MCP support (extension/src/mcp.ts, docs/mcp.md "VS
// Code"): in a trusted copy of the demo, "MCP: List Servers" lists Memory Lens without any
// mcp.json, VS Code starts it (the extension's interpreter and bundled server, in the
// workspace folder), and its output channel in VS Code ("MCP: Memory Lens") says it is
// running and found its four tools; then an untrusted copy (Restricted Mode), where VS Code
// asks the provider and it offers nothing.
// Its own code-server with VS Code's AI features on (the suite's has them off, which hides
// the MCP commands). Screenshots: artifacts/e2e/mcp.png, mcp-output.png, mcp-untrusted.png.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, isolatedWorkspace, startCodeServer, openWorkbench, openFromExplorer, waitForServer,
  runCommand, waitInPage, screenshot, log,
} from './lib/vscode.mjs';

const LABEL = 'Memory Lens';
const AI_ON = JSON.stringify({ 'chat.disableAIFeatures': false, 'chat.agent.enabled': true });

// The extension's "Memory Lens" output channel, as code-server logs it under user-data.
function extensionLog(state) {
  const found = [];
  const walk = (dir) => {
    for (const name of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, name.name);
      if (name.isDirectory()) walk(full);
      else if (/^\d+-Memory Lens\.log$/.test(name.name)) found.push(readFileSync(full, 'utf8'));
    }
  };
  walk(path.join(state, 'user-data', 'logs'));
  return found.join('\n');
}

async function pickRow(page, text) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ state: 'visible' });
  return row;
}

await runScenario('mcp', async ({ page, step, cleanup }) => {
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step('a code-server with VS Code\'s AI features on; open GEMINI.md, wait for the language server');
  const { url, state } = await startCodeServer(workspace, cleanup, { MEMLENS_VSCODE_SETTINGS: AI_ON });
  await openWorkbench(page, url, { expect: ['GEMINI.md'] });
  await openFromExplorer(page, 'GEMINI.md');
  await waitForServer(page);

  step('"MCP: List Servers" lists Memory Lens, with no mcp.json anywhere');
  await runCommand(page, 'MCP: List Servers', { waitHidden: false });
  const row = await pickRow(page, LABEL);
  const shown = (await row.innerText()).replace(/\s+/g, ' ');
  await screenshot(page, 'mcp');
  await row.click();

  step('start it from its actions');
  const actions = page.locator('.quick-input-widget .monaco-list-row');
  await actions.first().waitFor({ state: 'visible' });
  const names = (await actions.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  const start = names.findIndex((t) => /^Start Server/.test(t));
  if (start < 0) throw new Error(`no "Start Server" among the actions of ${shown}: ${JSON.stringify(names)}`);
  await actions.nth(start).click();

  step('VS Code\'s output for the server (shown on start) says it found the four tools');
  await waitInPage(page, 'the server\'s output with its tools', () => {
    const text = [...document.querySelectorAll('.output-view .view-lines, .panel .view-lines')]
      .map((el) => el.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return /Connection state: Running/.test(text) && /Discovered 4 tools/.test(text) ? text : null;
  }, undefined, {
    describe: () => [...document.querySelectorAll('.panel .view-lines')].map((el) => el.textContent).join('\n').slice(-800),
  });
  await screenshot(page, 'mcp-output');

  step('the extension offered the bundled server\'s `mcp` in the workspace folder');
  const offered = extensionLog(state).split('\n').find((l) => l.includes('[mcp] offered to VS Code:'));
  if (!offered || !offered.includes(`/server/launch.py mcp in ${workspace}`)) {
    throw new Error(`the extension's log: ${offered ?? extensionLog(state).slice(-1500)}`);
  }

  step('an untrusted copy (Restricted Mode): Memory Lens is not among the MCP servers');
  const second = isolatedWorkspace();
  cleanup(() => rmSync(second.root, { recursive: true, force: true }));
  const untrusted = await startCodeServer(second.workspace, cleanup,
    { MEMLENS_VSCODE_SETTINGS: AI_ON, MEMLENS_WORKSPACE_TRUST: '1' });
  const page2 = await page.context().newPage();
  cleanup(() => page2.close());
  await openWorkbench(page2, untrusted.url, { expect: ['GEMINI.md'] });
  await page2.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ state: 'visible' });
  await openFromExplorer(page2, 'GEMINI.md');
  for (const deadline = Date.now() + 120_000; !extensionLog(untrusted.state).includes('[mcp] registered');) {
    if (Date.now() > deadline) throw new Error(`the extension did not register its provider: ${extensionLog(untrusted.state).slice(-1500)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  await runCommand(page2, 'MCP: List Servers', { waitHidden: false });
  await pickRow(page2, 'Add Server');
  const rows = (await page2.locator('.quick-input-widget .monaco-list-row').allInnerTexts()).join(' | ');
  await screenshot(page2, 'mcp-untrusted');
  if (rows.includes(LABEL)) throw new Error(`listed in Restricted Mode: ${rows}`);
  const asked = extensionLog(untrusted.state).includes('[mcp] not offered to VS Code');
  log(`mcp: in Restricted Mode VS Code ${asked ? 'asked the provider, which offered nothing' : 'did not ask the provider'}`);
  if (extensionLog(untrusted.state).includes('[mcp] offered to VS Code:')) {
    throw new Error('the extension offered the server in Restricted Mode');
  }
});
