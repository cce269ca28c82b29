// Accepting a skill from the inbox (docs/reference.md "Skills", "The VS Code extension"): an
// extracted skill waits in HOME/.gemini/tmp/<project>/memory/skills-inbox/<name>/SKILL.md (the
// project folder as Gemini CLI's registry assigns it, claimed with the server's own code). The
// Skills view lists it under "Inbox"; its inline "Accept Skill" action validates and moves it to
// the user's skills, HOME/.gemini/skills/<name>/ (where Gemini CLI's own inbox puts it), after
// which the inbox is empty and the skill is listed with tier "user" (offered to the agent), and a
// notification says so.
// Works on a copy of the demo with a HOME of its own (memlens.home in the copy's settings).
// Screenshots: artifacts/e2e/skills-inbox-before.png and artifacts/e2e/skills-inbox.png.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openMemoryLens, viewPane, treeRow,
  projectPython, resizeSidebar, settled, screenshot,
} from './lib/vscode.mjs';

const NAME = 'flaky-test-triage';
const DESCRIPTION = 'Triage a flaky test in the orders API — reproduce, isolate the shared state, fix and prove it.';
const SKILL = `---
name: ${NAME}
description: ${DESCRIPTION}
---

# Flaky test triage

## When to Use
A test in services/api passes alone but fails in the full run, or fails one run in ten.

## Procedure
1. Re-run the single test 20 times in a loop: \`for i in $(seq 20); do pytest -x TEST || break; done\`.
2. Run the whole suite in random order and note the test that runs just before the failure.
3. Look for state shared between the two (module globals, the database, the clock).

## Pitfalls and Fixes
- A fixture with \`scope="module"\` leaks rows between tests: make it function-scoped.

## Verification
The test passes 50 runs in random order.
`;

await runScenario('skills-inbox', async ({ page, step, cleanup }) => {
  step('copy the demo with a HOME of its own; seed the skills inbox');
  const { root, workspace, home } = isolatedWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const inbox = execFileSync(projectPython(), ['-c',
    'import sys; from memlens.agents.gemini.inbox import inbox_dir; print(inbox_dir(sys.argv[1], sys.argv[2], claim=True))',
    home, workspace], { encoding: 'utf8' }).trim();
  if (!inbox.startsWith(path.join(home, '.gemini', 'tmp'))) throw new Error(`unexpected inbox folder: ${inbox}`);
  const seeded = path.join(inbox, NAME, 'SKILL.md');
  mkdirSync(path.dirname(seeded), { recursive: true });
  writeFileSync(seeded, SKILL);
  const accepted = path.join(home, '.gemini', 'skills', NAME, 'SKILL.md');

  step('open the workbench on the copy and the Skills view');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openMemoryLens(page);
  await resizeSidebar(page, 560);
  // Only the Skills view open: the screenshots show it at full height.
  for (const name of ['Chat', 'Memory']) {
    const other = viewPane(page, name).locator('.pane-header');
    if ((await other.getAttribute('aria-expanded')) === 'true') await other.click();
  }
  const skills = viewPane(page, 'Skills');
  const header = skills.locator('.pane-header');
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();

  step('the inbox lists the extracted skill');
  const inboxRow = treeRow(skills, 'Inbox');
  await inboxRow.locator('.label-description', { hasText: '1 extracted skill to review' }).waitFor({ state: 'visible' });
  // A filled inbox opens by itself (also when the view was first drawn before the server
  // answered, with an empty inbox).
  await skills.locator('.monaco-list-row[aria-expanded="true"]', { hasText: 'Inbox' }).first().waitFor({ state: 'visible' });
  const pending = skills.locator('.monaco-list-row[aria-level="2"]').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${NAME}\\s*$`) }),
  }).first();
  await pending.waitFor({ state: 'visible' });
  const pendingText = await pending.innerText();
  if (!pendingText.includes(DESCRIPTION.slice(0, 30))) throw new Error(`the inbox row shows problems or no description: ${pendingText}`);
  // Not among Gemini CLI's skills yet: the inbox's row is the only one of that name.
  const named = skills.locator('.monaco-list-row[aria-level="2"]').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${NAME}\\s*$`) }),
  });
  if (await named.count() !== 1) {
    throw new Error(`${NAME} is listed as a skill before it was accepted`);
  }
  await pending.hover();
  const accept = pending.locator('.action-label[aria-label="Accept Skill"]');
  await accept.waitFor({ state: 'visible' });
  await settled(skills);
  await screenshot(page, 'skills-inbox-before');

  step('"Accept Skill" (inline action)');
  await accept.click();
  const toast = page.locator('.notifications-toasts .notification-toast', {
    hasText: `Accepted ${NAME}; the agent is offered it from now on.`,
  }).first();
  await toast.waitFor({ state: 'visible' });

  step('the inbox is empty; the skill is listed with tier "user"');
  await inboxRow.locator('.label-description', { hasText: 'nothing to review' }).waitFor({ state: 'visible' });
  // The inbox's row is gone: the one row of that name is Gemini CLI's skill (the Skills view
  // groups skills by agent).
  await named.nth(1).waitFor({ state: 'detached' });
  const skillRow = named.first();
  await skillRow.locator('.label-description', { hasText: /^\s*user\s*$/ }).waitFor({ state: 'visible' });
  const description = await skillRow.locator('.label-description').innerText();
  if (description.trim() !== 'user') throw new Error(`the accepted skill's row says "${description}", not "user" (offered, no problems)`);

  step('on disk: moved from the inbox to the user\'s skills');
  if (existsSync(seeded) || existsSync(path.dirname(seeded))) throw new Error(`${seeded} is still in the inbox`);
  if (!existsSync(accepted)) throw new Error(`${accepted} does not exist`);

  step('screenshot');
  await skillRow.hover();
  await settled(toast);
  await screenshot(page, 'skills-inbox');
});
