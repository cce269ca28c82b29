// The reference agents for the tests that run "Verify What My Agents Read" (verify.mjs,
// verify-no-sandbox.mjs): the conformance suite's (tests/conformance/agents.py: the newest
// pinned release per agent, or those MEMLENS_AGENT_VERSIONS names), asked of that module so
// the versions live in one place.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO, projectPython } from './vscode.mjs';

// Each reference agent, in the order memlens verifies them (agent_versions.COMMANDS): its
// label, pinned version, bin folder and whether scripts/agents/install.sh installed it.
export function referenceAgents() {
  const script = `
import json
from memlens.agent_versions import AGENT_LABELS, COMMANDS
from tests.conformance.agents import PINNED, agent_binary, is_installed
print(json.dumps([{"agent": a, "label": AGENT_LABELS[a], "version": PINNED[a][0],
                   "bin": str(agent_binary(a, PINNED[a][0]).parent),
                   "installed": is_installed(a, PINNED[a][0])} for a in COMMANDS if a in PINNED]))
`;
  return JSON.parse(execFileSync(projectPython(), ['-c', script], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: [REPO, path.join(REPO, 'server')].join(path.delimiter) },
  }));
}

// The reference agents, every one installed; else an error naming what is missing and how to
// install it (a run without them has not tested the command: it fails, it does not skip).
export function installedReferenceAgents() {
  const agents = referenceAgents();
  const missing = agents.filter((a) => !a.installed);
  if (agents.length === 0 || missing.length > 0) {
    const names = (missing.length ? missing : agents).map((a) => `${a.label} ${a.version}`).join(', ');
    const specs = missing.map((a) => `${a.agent}@${a.version}`).join(' ');
    throw new Error(`not installed: ${names || 'no reference agent is pinned'} — this scenario runs the real agents: `
      + `bash scripts/agents/install.sh ${specs} (CI does, in scripts/test.sh's conformance step)`);
  }
  return agents;
}

// PATH with the agents' bin folders first, as a user has them installed.
export function agentsPath(agents) {
  return [...agents.map((a) => a.bin), process.env.PATH].join(path.delimiter);
}
