// A chat turn against the fake Gemini server (SPEC §9, §10.2): on a copy of the demo, the
// prompt typed in the Chat view reaches the fake, which streams text (two chunks, 0.6 s apart)
// and then calls write_file on a new file, services/api/NOTES.md. The panel must show the
// streamed text as it comes, then the write_file card waiting for approval with the unified
// diff, while the file does not exist yet; after "Approve" the file exists with exactly the
// proposed content, the card says done, a "memory loaded" chip names services/api/GEMINI.md
// (writing there loads that folder's memory just in time) and the model's final streamed text
// shows. The fake must have seen the right key (stored with the panel's "Set Gemini API Key"
// when the panel asks for one, as run-e2e.sh leaves GEMINI_API_KEY unset) and, in its second
// request, write_file's result.
// Screenshots: artifacts/e2e/chat-approval.png (waiting for approval), artifacts/e2e/chat.png.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openMemoryLens, viewPane, chatFrame, resizeSidebar,
  scriptConversation, fakeGeminiRequests, fakeGeminiUrl, settled, screenshot, quickOpen, quickInputTitled,
} from './lib/vscode.mjs';

const FIRST = ['I will add a short notes file ', 'for the API service.'];
const FINAL = ['Created `services/api/NOTES.md` ', 'with the health-check note.'];
const CONTENT = '# API notes\n\n- Health check: `GET /healthz` answers `ok`.\n- Run locally with `python app.py`.\n';

await runScenario('chat', async ({ page, step, cleanup }) => {
  fakeGeminiUrl(); // fails at once, saying why, without the fake server

  step('copy the demo (with its own HOME) and script the fake Gemini server');
  const { root, workspace } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const target = path.join(workspace, 'services/api/NOTES.md');
  const marker = `e2e-${randomUUID().slice(0, 8)}`;
  const prompt = `Write a short notes file for the API service (${marker}).`;
  await scriptConversation(marker, [
    [
      { text: FIRST[0] }, { delay: 0.6 }, { text: FIRST[1] },
      { functionCall: { name: 'write_file', args: { file_path: target, content: CONTENT } } },
    ],
    [{ text: FINAL[0] }, { delay: 0.6 }, { text: FINAL[1] }],
  ]);

  step('open the workbench on the copy and the Chat view');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md', 'services'] });
  await openMemoryLens(page);
  // The Chat view gets the side bar's height (the two trees are collapsed) and width enough
  // for the diff to be read in the screenshots.
  await resizeSidebar(page, 640);
  for (const name of ['Memory', 'Skills']) {
    const header = viewPane(page, name).locator('.pane-header');
    if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
  }
  const chat = chatFrame(page);
  // The server's status (it names the model) says whether a key is set.
  await chat.locator('#model', { hasText: /\S/ }).waitFor({ state: 'visible' });
  if (await chat.locator('#key-state:not([hidden])').isVisible()) {
    step('store the fake server\'s key with "Set Gemini API Key" (the panel asks for one)');
    await chat.locator('#set-key').click();
    const keyBox = await quickInputTitled(page, 'Gemini API Key');
    await keyBox.fill(process.env.MEMLENS_FAKE_GEMINI_KEY || 'e2e-fake-gemini-key');
    await keyBox.press('Enter');
    await chat.locator('#key-state').waitFor({ state: 'hidden' });
  }
  await chat.locator('#chat-input:not([disabled])').waitFor({ state: 'visible' });

  step('send the prompt');
  // Every state of the model's answer, to see it stream (a MutationObserver in the webview).
  await chat.locator('#messages').evaluate((messages) => {
    window.seenAnswers = [];
    new MutationObserver(() => {
      const bubble = messages.querySelector('.message.model .bubble.markdown');
      const text = bubble ? bubble.textContent : '';
      if (text && window.seenAnswers[window.seenAnswers.length - 1] !== text) window.seenAnswers.push(text);
    }).observe(messages, { subtree: true, childList: true, characterData: true });
  });
  await chat.locator('#chat-input').fill(prompt);
  await chat.locator('#send').click();
  await chat.locator('.message.user', { hasText: marker }).waitFor({ state: 'visible' });
  await chat.locator('#stop').waitFor({ state: 'visible' });

  step('the write_file card waits for approval, with the diff; the file is not written yet');
  const card = chat.locator('.tool-card[data-tool="write_file"]').first();
  const approval = card.locator('.approval');
  await chat.locator('.tool-card[data-tool="write_file"][data-status="waiting"] .approval').waitFor({ state: 'visible' });
  // A unified diff as Gemini CLI makes it (jsdiff's createPatch): "--- NOTES.md\tCurrent",
  // "+++ NOTES.md\tProposed", then every line of the new file added.
  const diff = (await approval.locator('pre.diff').textContent()).split('\n');
  const missing = [/^--- NOTES\.md\s+Current$/, /^\+\+\+ NOTES\.md\s+Proposed$/, /^@@ -0,0 \+1,4 @@$/]
    .filter((re) => !diff.some((l) => re.test(l)))
    .concat(CONTENT.trimEnd().split('\n').map((l) => `+${l}`).filter((l) => !diff.includes(l)));
  if (missing.length) throw new Error(`the approval diff lacks ${missing.join(', ')}:\n${diff.join('\n')}`);
  const title = await approval.locator('.approval-title').innerText();
  if (!title.includes('NOTES.md')) throw new Error(`approval title: ${title}`);
  if (existsSync(target)) throw new Error(`${target} exists before the write was approved`);
  const streamed = await chat.locator('#messages').evaluate(() => window.seenAnswers);
  const first = FIRST.join('');
  if (!streamed.some((t) => t.includes(FIRST[0].trim()) && !t.includes(FIRST[1]))) {
    throw new Error(`the first answer did not stream (states seen: ${JSON.stringify(streamed)})`);
  }
  if (!streamed.some((t) => t.includes(first))) throw new Error(`the answer "${first}" did not show: ${JSON.stringify(streamed)}`);
  await settled(card);
  await screenshot(page, 'chat-approval');

  step('approve: the file is written, the turn goes on');
  await approval.locator('button[data-outcome="approve"]').click();
  await chat.locator('.tool-card[data-tool="write_file"][data-status="ok"]').waitFor({ state: 'visible' });
  await chat.locator('.message.model .bubble', { hasText: FINAL.join('').replace(/`/g, '') }).waitFor({ state: 'visible' });
  await chat.locator('#chat-input:not([disabled])').waitFor({ state: 'visible' }); // the turn ended
  if (!existsSync(target)) throw new Error(`${target} was not written after "Approve"`);
  const written = readFileSync(target, 'utf8');
  if (written !== CONTENT) throw new Error(`${target} holds ${JSON.stringify(written)}, not ${JSON.stringify(CONTENT)}`);
  const result = await card.locator('.approval-result').innerText();
  if (!/^Approved/.test(result)) throw new Error(`approval result: ${result}`);
  const toolResult = await card.locator('.tool-result').innerText();
  if (!toolResult.includes('NOTES.md')) throw new Error(`write_file result: ${toolResult}`);

  step('a "memory loaded" chip for services/api/GEMINI.md');
  const chip = chat.locator('.chip', { hasText: 'api/GEMINI.md' }).first();
  await chip.waitFor({ state: 'visible' });
  const chipTitle = await chip.getAttribute('title');
  if (!chipTitle.startsWith(path.join(workspace, 'services/api/GEMINI.md'))) throw new Error(`chip title: ${chipTitle}`);

  step('the fake saw the key, the prompt, and then write_file\'s result');
  const requests = await fakeGeminiRequests(marker);
  if (requests.length !== 2) throw new Error(`the fake got ${requests.length} request(s) for this chat: ${JSON.stringify(requests)}`);
  if (!requests.every((r) => r.apiKeyMatches === true && r.status === 200)) {
    throw new Error(`unexpected key or status: ${JSON.stringify(requests.map((r) => [r.apiKeyMatches, r.status]))}`);
  }
  const responses = requests[1].functionResponses;
  const written2 = JSON.stringify(responses);
  if (responses.length !== 1 || responses[0].name !== 'write_file' || !written2.includes('created and wrote to new file')) {
    throw new Error(`write_file's result sent back to the model: ${written2}`);
  }

  step('open the written file beside the chat; screenshot');
  await quickOpen(page, 'services/api/NOTES.md');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines', { hasText: 'Health check' }).first()
    .waitFor({ state: 'visible' });
  await settled(chat.locator('#messages'));
  // No tooltip left over from the Quick Open click (it lands on the new tab's close button).
  await page.mouse.move(1200, 500);
  await page.locator('.workbench-hover-container, .monaco-hover:not(.hidden)').first().waitFor({ state: 'hidden' });
  await screenshot(page, 'chat');
});

