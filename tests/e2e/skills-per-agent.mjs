// The Skills view per agent (docs/reference.md "Skills", "The VS Code extension"): with Claude Code
// and Codex in use (memlens.agents), a copy of the demo gets skills of its own — `.claude/skills`
// (one that a user skill of the same name hides) and `.agents/skills` (one without a description).
// The view shows a group per agent ("Gemini CLI", "Claude Code", "Codex"), each skill as that agent
// lists it, the dropped ones "not offered" with the agent's reason (from the server:
// memlens/agentSkills); clicking a dropped skill opens its SKILL.md. A `web/.claude/skills`
// below the folder: Claude Code lists its skill only when it reads a file under web/, and the
// view says so in the agent matrix's words ("◇ listed on read", the trigger in the tooltip).
// Screenshots: artifacts/e2e/skills-per-agent-{light,dark}.png (the dropped skill opened) and
// skills-per-agent-on-read-{light,dark}.png (the skill listed on read, its tooltip).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, isolatedWorkspace, openWorkbench, openMemoryLens, viewPane, treeRow,
  resizeSidebar, settled, hoverUntil,
} from './lib/vscode.mjs';
import { screenshotThemes } from './lib/themes.mjs';

function skill(root, rel, text) {
  const file = path.join(root, rel, 'SKILL.md');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

await runScenario('skills-per-agent', async ({ page, step, cleanup }) => {
  step('copy the demo with Claude Code and Codex in use; give it skills for each');
  const { root, workspace, home } = isolatedWorkspace({ settings: { 'memlens.agents': ['gemini', 'claude', 'codex'] } });
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  skill(workspace, '.claude/skills/release-notes', '---\ndescription: Draft the release notes from merged PRs.\n---\n');
  const hidden = skill(workspace, '.claude/skills/deploy', '---\ndescription: Deploy the project copy.\n---\n');
  skill(home, '.claude/skills/deploy', '---\ndescription: Deploy with the team runbook.\n---\n');
  skill(workspace, '.agents/skills/triage', '---\nname: triage\ndescription: Triage a failing CI job.\n---\n');
  skill(workspace, '.agents/skills/half-done', '---\nname: half-done\n---\nNo description yet.\n');
  skill(workspace, 'web/.claude/skills/lint-web', '---\ndescription: Lint the web code.\n---\n');

  step('open the workbench on the copy and the Skills view');
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  await openMemoryLens(page);
  await resizeSidebar(page, 620);
  for (const name of ['Chat', 'Memory']) {
    const other = viewPane(page, name).locator('.pane-header');
    if ((await other.getAttribute('aria-expanded')) === 'true') await other.click();
  }
  const skills = viewPane(page, 'Skills');
  const header = skills.locator('.pane-header');
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();

  step('a group per agent: what it offers and what it drops');
  const claude = treeRow(skills, 'Claude Code');
  // Listed on read: web/'s skill, and the user's deploy as `.home:deploy` (the demo's HOME is
  // the copy's .home/, below the folder: a read there finds its skills folder too).
  await claude.locator('.label-description', { hasText: '2 offered · 2 listed on read · 1 not offered' }).waitFor({ state: 'visible' });
  const codex = treeRow(skills, 'Codex');
  await codex.locator('.label-description', { hasText: /offered · 1 not offered/ }).waitFor({ state: 'visible' });
  const rows = skills.locator('.monaco-list-row[aria-level="2"]');
  const row = (name, text) => rows.filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${name}\\s*$`) }) })
    .filter({ hasText: text }).first();
  await row('deploy', 'user · Deploy with the team runbook.').waitFor({ state: 'visible' });
  const shadowed = row('deploy', 'project · not offered: shadowed');
  // Gemini CLI's own group: it reads .agents/skills too, and drops the skill without a description.
  await treeRow(skills, 'Gemini CLI').locator('.label-description', { hasText: 'not offered' }).waitFor({ state: 'visible' });
  await shadowed.waitFor({ state: 'visible' });
  await row('release-notes', 'project · Draft the release notes').waitFor({ state: 'visible' });
  await row('triage', 'repo · Triage a failing CI job.').waitFor({ state: 'visible' });
  await row('half-done', 'repo · not offered: no description').waitFor({ state: 'visible' });
  await row('half-done', 'workspace-agents · not offered').waitFor({ state: 'visible' });

  step('the skill below the folder: listed on read, the trigger in its tooltip');
  const onRead = row('lint-web', 'web/.claude/skills/lint-web · ◇ listed on read');
  await onRead.waitFor({ state: 'visible' });
  const tip = await hoverUntil(page, onRead, 'when Claude Code reads a file under web/');
  const tipText = await tip.innerText();
  if (!tipText.includes('Claude Code · ◇ listed on read when Claude Code reads a file under web/')
    || !tipText.includes('Lint the web code.')) throw new Error(`the on-read skill's tooltip: ${tipText}`);
  await screenshotThemes(page, workspace, 'skills-per-agent-on-read', async () => {
    await hoverUntil(page, onRead, 'when Claude Code reads a file under web/');
  });
  await page.mouse.move(5, 5);

  step('clicking the dropped skill opens its SKILL.md');
  await shadowed.click();
  const tab = page.locator('.tabs-container .tab', { hasText: 'SKILL.md' }).first();
  await tab.waitFor({ state: 'visible' });
  // The breadcrumbs name the folder: the project's deploy, not the user's.
  const crumbs = page.locator('.editor-group-container.active .monaco-breadcrumbs').first();
  await crumbs.filter({ hasText: /\.claude.*skills.*deploy.*SKILL\.md/s }).waitFor({ state: 'visible' });
  const trail = await crumbs.innerText();
  if (trail.includes('.home')) throw new Error(`opened ${trail}, not ${hidden}`);
  await page.locator('.editor-group-container.active .view-lines', { hasText: 'Deploy the project copy.' }).waitFor({ state: 'visible' });

  step('screenshots, light and dark');
  await screenshotThemes(page, workspace, 'skills-per-agent', async () => {
    await shadowed.hover();
    await settled(skills);
  });

  step('clicking the skill listed on read opens its SKILL.md');
  await onRead.click();
  await crumbs.filter({ hasText: /web.*\.claude.*skills.*lint-web.*SKILL\.md/s }).waitFor({ state: 'visible' });
  await page.locator('.editor-group-container.active .view-lines', { hasText: 'Lint the web code.' }).waitFor({ state: 'visible' });
});
