// A chat turn against the fake Gemini server
// (docs/reference.md "The chat agent", "The VS Code extension"): on a copy of the demo, the prompt
// typed in the Chat view reaches the fake, which streams text (two chunks, 0.6 s apart) and then
// calls write_file on a new file, services/api/NOTES.md. The panel must show the streamed text as
// it comes, then the write_file card waiting for approval with the unified diff, while the file
// does not exist yet; after "Approve" the file exists with exactly the proposed content, the card
// says done, a "memory loaded" chip names services/api/GEMINI.md (writing there loads that folder's
// memory just in time) and the model's final streamed text shows. The fake must have seen the right
// key (stored with the panel's "Set Gemini API Key" when the panel asks for one, as run-e2e.sh
// leaves GEMINI_API_KEY unset) and, in its second request, write_file's result.
// Then the view's title-bar actions, clicked as a user does (hover the Chat header, click the
// codicon): "Chat Approval Mode…" switches to autoEdit (the status line says so and the next
// write_file runs without a card asking), the status line's own link switches back; "New Chat"
// empties the panel; "Chat History…" lists the first chat in a quick pick and picking it shows
// it again. Last, a short window with the Memory and Skills views expanded too: the input and
// Send stay inside the Chat view and take a click, in the dark and the light theme.
// Screenshots (artifacts/e2e): chat-approval.png (waiting for approval), chat.png,
// chat-approval-mode.png and chat-history.png (the quick picks), chat-dark.png, chat-small.png (dark), chat-small-light.png.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openMemoryLens, viewPane, chatFrame, resizeSidebar,
  scriptConversation, fakeGeminiRequests, fakeGeminiUrl, settled, screenshot, quickOpen, quickInputTitled, waitInPage,
  runCommand,
} from './lib/vscode.mjs';

const FIRST = ['I will add a short notes file ', 'for the API service.'];
const FINAL = ['Created `services/api/NOTES.md` ', 'with the health-check note.'];
const CONTENT = '# API notes\n\n- Health check: `GET /healthz` answers `ok`.\n- Run locally with `python app.py`.\n';
const TODO = '# API to-do\n\n- Add a readiness probe.\n';

// Clicks an action of the Chat view's title bar by its title: VS Code shows a pane's actions
// while the mouse is over it, so hover the header first.
async function chatTitleAction(page, title) {
  const header = viewPane(page, 'Chat').locator('.pane-header');
  await header.hover();
  const action = header.locator(`.actions .action-label[aria-label^="${title}"]`).first();
  await action.waitFor({ state: 'visible' });
  await action.click();
}

// Picks the row of the open quick pick whose label contains `text`.
async function pickRow(page, text) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

// Neither clipped nor hidden by an ellipsis: the whole text of the element shows.
async function unabridged(locator, what) {
  const cut = await locator.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
  if (cut) throw new Error(`${what} is cut off: ${await locator.innerText()}`);
}

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

  step('the status line names the model and the approval mode in full');
  const model = chat.locator('#model');
  const mode = chat.locator('#approval-mode');
  if ((await model.innerText()).trim() !== 'gemini-flash-latest') throw new Error(`model: ${await model.innerText()}`);
  if ((await mode.innerText()).trim() !== 'Ask before every write') throw new Error(`approval mode: ${await mode.innerText()}`);
  await unabridged(model, 'the model');
  await unabridged(mode, 'the approval mode');

  step('"Chat Approval Mode…" in the view title: pick "Apply file edits"');
  await chatTitleAction(page, 'Chat Approval Mode');
  await quickInputTitled(page, 'Chat Approval Mode');
  await settled(page.locator('.quick-input-widget'));
  await screenshot(page, 'chat-approval-mode');
  await pickRow(page, 'Apply file edits');
  await chat.locator('#approval-mode[data-mode="autoEdit"]', { hasText: 'Apply file edits' }).waitFor({ state: 'visible' });

  step('in autoEdit a write_file runs without asking');
  const todo = path.join(workspace, 'services/api/TODO.md');
  const marker2 = `e2e-${randomUUID().slice(0, 8)}`;
  await scriptConversation(marker2, [
    [{ text: 'Adding a to-do file.' }, { functionCall: { name: 'write_file', args: { file_path: todo, content: TODO } } }],
    [{ text: 'Done: `services/api/TODO.md`.' }],
  ]);
  await chat.locator('#chat-input').fill(`Add a to-do file for the API (${marker2}).`);
  await chat.locator('#send').click();
  await chat.locator('.message.model .bubble', { hasText: 'Done: services/api/TODO.md.' }).waitFor({ state: 'visible' });
  await chat.locator('#chat-input:not([disabled])').waitFor({ state: 'visible' });
  const autoCard = chat.locator('.tool-card[data-tool="write_file"]').last();
  if ((await autoCard.getAttribute('data-status')) !== 'ok') throw new Error(`autoEdit write_file: ${await autoCard.innerText()}`);
  if (await autoCard.locator('.approval').count()) throw new Error('autoEdit still asked for approval');
  if (!existsSync(todo) || readFileSync(todo, 'utf8') !== TODO) throw new Error(`${todo} was not written in autoEdit`);

  step('the status line\'s approval mode is a link to the same quick pick: back to "Ask before every write"');
  await mode.click();
  await quickInputTitled(page, 'Chat Approval Mode');
  await pickRow(page, 'Ask before every write');
  await chat.locator('#approval-mode[data-mode="manual"]').waitFor({ state: 'visible' });

  step('"New Chat" in the view title empties the panel');
  await chatTitleAction(page, 'New Chat');
  await chat.locator('.empty-state', { hasText: 'Memory Lens Chat' }).waitFor({ state: 'visible' });
  if (await chat.locator('.message').count()) throw new Error('"New Chat" left messages in the panel');

  step('"Chat History…" lists the first chat; picking it shows it again');
  await chatTitleAction(page, 'Chat History');
  await quickInputTitled(page, 'Chat History');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: marker }).first();
  await row.waitFor({ state: 'visible' });
  const rowText = await row.innerText();
  if (!/\d+ messages/.test(rowText)) throw new Error(`history row: ${rowText}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'New Chat' }).first().waitFor({ state: 'visible' });
  await settled(page.locator('.quick-input-widget'));
  await screenshot(page, 'chat-history');
  await pickRow(page, marker);
  await chat.locator('.message.user', { hasText: marker }).waitFor({ state: 'visible' });
  await chat.locator('.message.user', { hasText: marker2 }).waitFor({ state: 'visible' });
  await chat.locator('.message.model .bubble', { hasText: FINAL.join('').replace(/`/g, '') }).waitFor({ state: 'visible' });

  step('from the palette too: "Chat History…" and "Chat Approval Mode…" close on Escape and change nothing');
  for (const [command, title] of [['Memory Lens: Chat History…', 'Chat History'], ['Memory Lens: Chat Approval Mode…', 'Chat Approval Mode']]) {
    await runCommand(page, command, { waitHidden: false });
    const box = await quickInputTitled(page, title);
    await box.press('Escape');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }
  await chat.locator('.message.user', { hasText: marker2 }).waitFor({ state: 'visible' });
  await chat.locator('#approval-mode[data-mode="manual"]').waitFor({ state: 'visible' });

  // The theme: the copy's workspace settings (VS Code applies a change at once).
  const settingsFile = path.join(workspace, '.vscode', 'settings.json');
  const setTheme = async (theme, workbenchClass) => {
    const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
    writeFileSync(settingsFile, `${JSON.stringify({ ...settings, 'workbench.colorTheme': theme }, null, 2)}\n`);
    await page.locator(`.monaco-workbench.${workbenchClass}`).waitFor({ state: 'attached' });
    await chat.locator(`body.${workbenchClass === 'vs' ? 'vscode-light' : 'vscode-dark'}`).waitFor({ state: 'attached' });
    await page.mouse.move(1200, 500);
  };

  // The workbench starts in the light theme here (chat.png); the dark one, by name.
  step('dark theme: screenshot');
  await setTheme('Default Dark Modern', 'vs-dark');
  await settled(chat.locator('#messages'));
  await screenshot(page, 'chat-dark');

  step('a short window with Chat, Memory and Skills expanded: the input and Send stay in view and take a click');
  await page.setViewportSize({ width: 1100, height: 560 });
  for (const name of ['Memory', 'Skills']) {
    const header = viewPane(page, name).locator('.pane-header');
    if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  }
  const body = viewPane(page, 'Chat').locator('.pane-body');
  const inside = async (locator, what) => {
    const [outer, inner] = [await body.boundingBox(), await locator.boundingBox()];
    if (!outer || !inner) throw new Error(`${what} is not shown`);
    const fits = inner.y >= outer.y - 1 && inner.y + inner.height <= outer.y + outer.height + 1 && inner.y + inner.height <= 560
      && inner.x >= outer.x - 1 && inner.x + inner.width <= outer.x + outer.width + 1;
    if (!fits) throw new Error(`${what} (${JSON.stringify(inner)}) is outside the Chat view (${JSON.stringify(outer)})`);
  };
  await waitInPage(page, 'the Chat view to shrink', () => {
    const pane = [...document.querySelectorAll('.part.sidebar .pane')]
      .find((p) => p.querySelector('.pane-header[aria-label^="Chat Section"]'));
    const h = pane?.querySelector('.pane-body')?.getBoundingClientRect().height;
    return h && h < 300;
  });
  await chat.locator('#messages').evaluate((m) => { m.scrollTop = 0; });
  const chatHeight = (await body.boundingBox()).height;
  for (const [selector, what] of [['#chat-input', 'the input'], ['#send', 'Send'], ['#model', 'the model'], ['#approval-mode', 'the approval mode']]) {
    await inside(chat.locator(selector), `${what} (Chat view ${Math.round(chatHeight)} px high)`);
  }
  await unabridged(model, 'the model');
  // Playwright's click checks that nothing covers the target.
  await chat.locator('#chat-input').click();
  await page.keyboard.type('still here');
  if ((await chat.locator('#chat-input').inputValue()) !== 'still here') throw new Error('the input did not take typing');
  await chat.locator('#send').click({ trial: true });
  await chat.locator('#chat-input').fill('');
  await page.mouse.move(1000, 300);
  await screenshot(page, 'chat-small');

  step('light theme, short window: screenshot');
  await setTheme('Default Light Modern', 'vs');
  await inside(chat.locator('#chat-input'), 'the input');
  await settled(chat.locator('#messages'));
  await screenshot(page, 'chat-small-light');
});

