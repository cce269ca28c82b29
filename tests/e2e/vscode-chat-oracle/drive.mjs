// Drives the oracle attempt (scripts/vscode/chat-oracle.sh starts code-server first): opens the
// workbench on MEMLENS_VSCODE_URL, waits for the recording model to receive a request
// (MEMLENS_ORACLE_OUT/request-1.json) or for the time to run out, and says how far it got.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { launch, openWorkbench, screenshot, log } from '../lib/vscode.mjs';

const out = process.env.MEMLENS_ORACLE_OUT;
const wait = Number(process.env.MEMLENS_ORACLE_WAIT_S || 90);
const { page, close } = await launch('vscode-chat-oracle');
let status = 1;
try {
  await openWorkbench(page, process.env.MEMLENS_VSCODE_URL);
  log('workbench open');
  const deadline = Date.now() + wait * 1000;
  let sentByHand = false;
  while (Date.now() < deadline) {
    if (existsSync(path.join(out, 'request-1.json'))) { status = 0; break; }
    await page.waitForTimeout(1000);
    if (!sentByHand && Date.now() > deadline - wait * 500) {
      // Half the time gone and nothing recorded: try the chat input by hand.
      sentByHand = true;
      await page.keyboard.press('Control+Alt+I').catch(() => {});
      await page.waitForTimeout(3000);
      await screenshot(page, 'vscode-chat-oracle-chat');
    }
  }
  await screenshot(page, 'vscode-chat-oracle');
} finally {
  await close();
}
const progress = path.join(out, 'progress.log');
log('progress:\n' + (existsSync(progress) ? readFileSync(progress, 'utf8') : '(the test extension never wrote: not activated)'));
log(status === 0 ? 'oracle: the recording model received a request' : 'oracle: no request reached the recording model');
process.exit(status);
