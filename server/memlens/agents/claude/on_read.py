"""What Claude Code adds after its Read tool reads a file: subfolder memory, `paths:` rules
that match, nested AGENTS.md through the agents-md hook — each file once — and the skills of
the `.claude/skills` folders between (`skills_on_read.py`)."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from memlens.agents.base import AgentJitSession, JitFile, JitLoad
from memlens.agents.claude.memory_folder import claude_home
from memlens.agents.claude.messages import ClaudeFile, sent_text
from memlens.agents.claude.rules import globs_match
from memlens.agents.claude.skills_on_read import SkillDiscovery
from memlens.agents.claude.startup import (
    AGENTS_NAMES,
    CLAUDE_NAMES,
    ClaudeLoader,
    ancestors,
    dedupe_against,
)
from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, is_subpath, resolve
from memlens.files.walk import walk

NESTED_NAMES = CLAUDE_NAMES


@dataclass
class ClaudeJitFile:
    file: ClaudeFile
    reason: str
    hook: bool = False  # sent by the agents-md plugin's hook, not as a memory reminder


def on_read_payloads(entries: list[ClaudeJitFile], skills: str = "") -> list[str]:
    """What Claude Code 2.1.330 adds after the Read, text block by text block: one
    `<system-reminder>` per memory file beside the tool result, then one system message: the
    agents-md plugin's nested AGENTS.md, then (a blank line after it) the skills the read
    found (`skills`, "" without)."""
    reminders = [f"<system-reminder>\nContents of {e.file.path}:\n\n"
                 f"{sent_text(e.file.content)}\n</system-reminder>"
                 for e in entries if not e.hook]
    hooked = [f"Contents of {e.file.path}:\n\n{sent_text(e.file.content)}"
              for e in entries if e.hook]
    # Each reminder is a text block of its own; all but the last end with a line break.
    parts = [r + "\n" for r in reminders[:-1]] + reminders[-1:]
    system = ["tool.call hook additional context: " + "\n".join(hooked)] if hooked else []
    if skills:
        system.append(skills)
    if system:
        parts.append("\n\n".join(system))
    return parts


def on_read_text(entries: list[ClaudeJitFile], skills: str = "") -> str:
    """The text blocks added after the Read, as one text (the reminders as they follow one
    another, the system message a line after them)."""
    parts = on_read_payloads(entries, skills)
    system = 1 if skills or any(e.hook for e in entries) else 0
    reminders = "".join(parts[:len(parts) - system])
    return "\n".join([reminders, *parts[len(parts) - system:]] if reminders else parts)


class ClaudeJitSession(AgentJitSession):
    """What Claude Code adds after its Read tool reads a file, as 2.1.330 does it: the user's
    `paths:` rules that match; for each folder between the working folder (excluded) and the
    file, top first, its CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md (with their includes),
    its `.claude/rules` and those of its rules whose `paths:` match; then the matching `paths:`
    rules of the working folder and the folders above it. Without CLAUDE.md at start (the
    agents-md plugin's fallback), the AGENTS.md files of the folders between follow. Nothing
    already in context is sent again."""

    def __init__(self, home: str, root: str, reader: FileReader | None = None):
        self.root = resolve(root)
        self.home = resolve(home)
        self.reader = reader
        self.loader = ClaudeLoader(home, reader=reader)
        self.startup = self.loader.load(self.root)
        self.in_context = list(self.startup.files)
        self.loaded = {f.path for f in self.startup.files}
        self.agents_mode = not self.loader.is_claude_project(self.root, self.startup.files)
        self.skills = SkillDiscovery(self.home, self.root, reader)

    def load_for(self, path: str) -> JitLoad:
        """`touch` in the shape every agent's JIT session has (Claude Code appends no text
        to the tool's output: the files join its context)."""
        entries = self.touch(path)
        skills = self.skills.on_read(resolve(path))
        added = [JitFile(e.file.path, e.file.content, e.reason) for e in entries]
        return JitLoad(resolve(path), added, on_read_text(entries, skills),
                       on_read_payloads(entries, skills))

    def _conditional(self, rules_dir: str, base: str, target: str, kind: str
                     ) -> list[ClaudeFile]:
        """`rules_dir`'s `paths:` rules that match `target` (relative to `base`)."""
        found: list[ClaudeFile] = []
        self.loader._rules(rules_dir, base, [], found, kind)
        return [r for r in found if globs_match(r.applies_to, base, target)]

    def touch(self, path: str) -> list[ClaudeJitFile]:
        path = resolve(path)
        if not is_subpath(self.root, path):
            return []  # only a file in the working folder brings memory in
        loader = self.loader
        loader.begin(self.root)
        loader.approved = False  # what loads on read never follows includes out of the project
        found: list[tuple[ClaudeFile, str]] = []
        user_rules = posixpath.join(claude_home(self.home), "rules")
        for rule in self._conditional(user_rules, self.root, path, "userRule"):
            found.append((rule, "paths: " + ", ".join(rule.applies_to)))
        nested: list[str] = []
        current = dirname(path)
        while current != self.root and dirname(current) != current:
            if is_subpath(self.root, current):
                nested.insert(0, current)
            current = dirname(current)
        for folder in nested:
            here = f"{posixpath.relpath(folder, self.root)}/ is read"
            files: list[ClaudeFile] = []
            for name in NESTED_NAMES:
                loader.add(posixpath.join(folder, name),
                           "local" if name == "CLAUDE.local.md" else "project", files)
            rules_dir = posixpath.join(folder, ".claude", "rules")
            # The unconditional rules and the `paths:` ones are two walks from the same
            # start (what one reads does not hide a file from the other).
            before = set(loader.processed)
            loader._rules(rules_dir, folder, files, [])
            found += [(f, "included" if f.kind == "include" else here) for f in files]
            after, loader.processed = loader.processed, before
            for rule in self._conditional(rules_dir, folder, path, "rule"):
                found.append((rule, "paths: " + ", ".join(rule.applies_to)))
            loader.processed |= after
        for folder in ancestors(self.root):
            rules_dir = posixpath.join(folder, ".claude", "rules")
            for rule in self._conditional(rules_dir, folder, path, "rule"):
                found.append((rule, "paths: " + ", ".join(rule.applies_to)))
        added: list[ClaudeJitFile] = []
        for entry, reason in found:
            if entry.path in self.loaded or entry.path == path:
                continue
            self.loaded.add(entry.path)
            added.append(ClaudeJitFile(entry, reason))
        self.loaded.add(path)
        if self.agents_mode:
            added += self._nested_agents(path)
        return added

    def _nested_agents(self, path: str) -> list[ClaudeJitFile]:
        """The agents-md plugin: AGENTS.md of the folders strictly between the working folder
        and the read file, where no CLAUDE.md is."""
        if not path.startswith(self.root.rstrip("/") + "/"):
            return []
        folders: list[str] = []
        current = dirname(path)
        while current.startswith(self.root.rstrip("/") + "/"):
            folders.insert(0, current)
            current = dirname(current)
        loader = ClaudeLoader(self.home, reader=self.reader)
        loader.begin(self.root)
        keep = {f.path for f in self.in_context if f.kind in ("managed", "user")}
        agents: list[ClaudeFile] = []
        claude: list[ClaudeFile] = []
        for folder in folders:
            loader.processed = set(keep)
            mine: list[ClaudeFile] = []
            for name in CLAUDE_NAMES:
                loader.add(posixpath.join(folder, name), "project", mine)
            claude += mine
            loader.processed = set(keep)
            theirs: list[ClaudeFile] = []
            for name in AGENTS_NAMES:
                loader.add(posixpath.join(folder, name), "project", theirs)
            if not mine:
                agents += theirs
        out: list[ClaudeJitFile] = []
        for entry in dedupe_against(agents, [*self.in_context, *claude]):
            if entry.path in self.loaded or entry.path == path:
                continue
            self.loaded.add(entry.path)
            out.append(ClaudeJitFile(entry, "AGENTS.md (no CLAUDE.md here)", hook=True))
        return out


SKIPPED_FOLDERS = frozenset({".git", "node_modules"})


def nested_memory_folders(cwd: str, limit: int = 50_000) -> list[str]:
    """The folders below `cwd` whose read brings memory in: each holding a CLAUDE.md,
    .claude/CLAUDE.md, CLAUDE.local.md, an AGENTS.md or a `.claude/rules` folder (bounded)."""
    return list(_folders_below(cwd, limit)[0])


def skill_folders(cwd: str, limit: int = 50_000) -> list[str]:
    """The folders below `cwd` holding a `.claude/skills` folder: where a read finds skills
    (`skills_on_read.py`; bounded)."""
    return list(_folders_below(cwd, limit)[1])


def _folders_below(cwd: str, limit: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Both of the above from one walk, once per run (`files.tree.run_memo`: they depend only
    on which files exist)."""
    return tree.run_memo(("claude.folders_below", cwd, limit),
                         lambda: _walk_folders_below(cwd, limit))


def _walk_folders_below(cwd: str, limit: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # A name with a folder in it (`.claude/CLAUDE.md`) is found as the `.claude` folder's file.
    names = frozenset(n for n in (*CLAUDE_NAMES, *AGENTS_NAMES) if "/" not in n)
    inside = cwd.rstrip("/") + "/"  # a folder the walk of `cwd` yields below it
    memory: list[str] = []
    skills: list[str] = []
    for count, (folder, dirs, files) in enumerate(walk(cwd)):
        # `walk` hands this call its own list: sorted in place (most folders skip nothing)
        if SKIPPED_FOLDERS.isdisjoint(dirs):
            dirs.sort()
        else:
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        if count >= limit:
            break
        if (".claude" in dirs and folder.startswith(inside)
                and os.path.isdir(posixpath.join(folder, ".claude", "skills"))):
            skills.append(folder)
        claude = folder.endswith("/.claude") or folder == ".claude"
        owner = dirname(folder) if claude else folder
        if owner == cwd or not (owner.startswith(inside) or is_subpath(cwd, owner)):
            continue
        if not names.isdisjoint(files) or (claude and "rules" in dirs):
            memory.append(owner)
    return tuple(sorted(dict.fromkeys(memory))), tuple(sorted(skills))


def on_read_entries(home: str, cwd: str, folders: list[str], reader: FileReader | None = None
                    ) -> list[tuple[ClaudeJitFile, str]]:
    """What reading a file in each of `folders` (below `cwd`) loads, as the JIT session loads
    it, each with the folder a read must fall in; the `paths:` rules (nested or not) come with
    `applies_to` set, for their globs to say when."""
    out: list[tuple[ClaudeJitFile, str]] = []
    seen: set[str] = set()
    for folder in folders:
        # A path in the folder no file has: only the folder's own memory, includes, rules
        # and the AGENTS.md between come with it (no `paths:` glob names it).
        session = ClaudeJitSession(home, cwd, reader)
        for entry in session.touch(posixpath.join(folder, "\0")):
            if entry.file.path not in seen and not entry.file.applies_to:
                seen.add(entry.file.path)
                out.append((entry, folder))
        loader = session.loader
        loader.begin(session.root)
        found: list[ClaudeFile] = []
        loader._rules(posixpath.join(folder, ".claude", "rules"), folder, [], found, "rule")
        for rule in found:
            if rule.path not in seen:
                seen.add(rule.path)
                out.append((ClaudeJitFile(rule, "paths: " + ", ".join(rule.applies_to)),
                            folder))
    return out
