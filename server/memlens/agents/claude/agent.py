"""Claude Code as a `MemoryAgent`: CLAUDE.md files, `.claude/rules`, auto memory and `@path`
includes (the modules beside this one read them exactly as Claude Code does)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence

from memlens.agents.base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    ListedFile,
    MemoryAgent,
    WorkspaceCheck,
    files_figures,
    ignores_file,
)
from memlens.agents.claude.includes import find_includes
from memlens.agents.claude.markdown import follow_claude_version
from memlens.agents.claude.memory_folder import claude_home
from memlens.agents.claude.memory_topics import topic_note
from memlens.agents.claude.memory_view import auto_memory_facts, grouped_rows
from memlens.agents.claude.messages import (
    PAYLOAD_LABELS,
    ClaudeFile,
    is_blank,
    owner_folder,
    payload,
    strips_comment,
)
from memlens.agents.claude.on_read import (
    NESTED_NAMES,
    ClaudeJitSession,
    nested_memory_folders,
    on_read_entries,
    skill_folders,
)
from memlens.agents.claude.rules import globs_match, skipped_rule_files
from memlens.agents.claude.skills_on_read import SkillOnRead, skills_on_read
from memlens.agents.claude.startup import (
    AGENTS_NAMES,
    CLAUDE_FILE_NAMES,
    CLAUDE_NAMES,
    ClaudeLoader,
    ancestors,
    check_claude_folders,
    claude_project_folders,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, is_subpath, resolve
from memlens.files.output import markdown_code, markdown_text
from memlens.files.roots import broad_reason
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.text.references import ImportToken, relative_import

# Claude Code's default `instructionFiles` (the only one `startup.py` reproduces).
_AGENTS_RULE = ("it reads AGENTS.md only where no CLAUDE.md is in force (its default "
                "instructionFiles, claude-md-or-agents-md)")


def ignored_agents_files(home: str, roots: list[str], found: list[str],
                         reader: FileReader) -> list[Diagnostic]:
    """AGENTS.md (and .claude/AGENTS.md) files Claude Code never reads because a CLAUDE.md is
    in force, as `startup.py` reproduces its default `instructionFiles` rule: a non-blank
    CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md in the file's own folder hides it wherever
    Claude Code starts; one in a workspace folder or above hides every AGENTS.md Claude Code
    started there could read (the folder's, those above it, and those it reads later below
    it). Blank AGENTS.md files are not reported (nothing would be sent anyway), nor one a
    CLAUDE.md includes."""
    loader = ClaudeLoader(home, reader=reader)
    folders = [resolve(r) for r in roots]
    # What it reads anyway, as a CLAUDE.md's include (`@./AGENTS.md`) or otherwise: loaded
    # where it starts (the roots) and where its own files put it to work (each CLAUDE.md's
    # and AGENTS.md's folder) — as its own workspace check does — not in every folder that
    # holds some other agent's file (a monorepo's 1,000 GEMINI.md folders were 1,000 loads).
    own = [p for p in found if posixpath.basename(p) in (*CLAUDE_FILE_NAMES, "AGENTS.md")]
    read_anyway = set(check_claude_folders(
        home, list(dict.fromkeys([*folders, *claude_project_folders(own)])), reader).sources)
    candidates = [p for p in found if posixpath.basename(p) == "AGENTS.md"]
    candidates += [posixpath.join(folder, name) for root in folders
                   for folder in ancestors(root) for name in AGENTS_NAMES]
    out: list[Diagnostic] = []
    for path in dict.fromkeys(candidates):
        read = reader.read(path)
        if read.content is None or is_blank(read.content) or path in read_anyway:
            continue
        folder = owner_folder(path)
        real = os.path.realpath(path)
        if any(os.path.realpath(posixpath.join(folder, n)) == real for n in CLAUDE_NAMES):
            continue  # a CLAUDE.md links to it: Claude Code reads it under that name
        here = next((n for n in CLAUDE_NAMES
                     if (c := reader.read(posixpath.join(folder, n)).content) is not None
                     and not is_blank(c)), None)
        if here is not None:
            out.append(ignores_file(path, f"Claude Code does not read this AGENTS.md: {here} "
                                          f"is in the same folder, and {_AGENTS_RULE}"))
            continue
        starts = [r for r in folders if is_subpath(r, folder) or is_subpath(folder, r)]
        blockers = [loader.claude_file_above(r) for r in starts]
        if starts and all(blockers):
            out.append(ignores_file(
                path, f"Claude Code does not read this AGENTS.md: {blockers[0]} is in force "
                      f"where it starts, and {_AGENTS_RULE}",
                f"Started in {starts[0]}, Claude Code loads {blockers[0]}; an AGENTS.md is read "
                "only in a project with no CLAUDE.md, CLAUDE.local.md or .claude/CLAUDE.md in "
                "the working folder or above"))
    return out


def ignored_rule_files(home: str, roots: list[str], found: list[str]) -> list[Diagnostic]:
    """Files in a `.claude/rules` folder that are not `*.md` (Claude Code reads only those):
    the user's rules, the rules of each workspace folder and the folders above it, and of
    each folder holding a memory file the walk found (the walk looks for memory files by
    name, so a rules folder elsewhere is not seen)."""
    rules_dirs = [posixpath.join(claude_home(resolve(home)), "rules")]
    owners = [resolve(r) for r in roots]
    owners = [folder for root in owners for folder in ancestors(root)]
    owners += claude_project_folders(found)
    rules_dirs += [posixpath.join(folder, ".claude", "rules") for folder in owners]
    out: list[Diagnostic] = []
    for rules_dir in dict.fromkeys(rules_dirs):
        for path in skipped_rule_files(rules_dir):
            out.append(ignores_file(path, "Claude Code does not read this file: it loads only "
                                          f"the .md files of {rules_dir}"))
    return out


def skills_found_below(home: str, folder: str, reader: FileReader | None = None
                       ) -> list[SkillOnRead]:
    """The SKILL.md files of the `.claude/skills` folders below `folder`: each listed when
    Claude Code, working in `folder`, reads a file under its folder, or not offered, and why
    (`skills_on_read.skills_on_read`)."""
    cwd = resolve(folder)
    return skills_on_read(resolve(home), cwd, skill_folders(cwd), reader)


def skills_listed_on_read(home: str, folder: str, reader: FileReader) -> list[AgentFile]:
    """`skills_found_below` as the views' rows: listed on read (its name and description; the
    skill is sent when used), or not offered and why. What it sends of one is its listing
    line (the row's text, so its size)."""
    return [AgentFile(s.path, "skill", s.line, s.trigger, when="listed", why=s.why,
                      offered=s.offered)
            for s in skills_found_below(home, folder, reader)]


def _rule_reads_on(rule: ClaudeFile) -> Callable[[str], bool]:
    """Whether reading a path loads the `paths:` rule (relative to its project folder)."""
    base = rule.rule_base or dirname(dirname(dirname(rule.path)))
    return lambda target: globs_match(rule.applies_to, base, target)


class ClaudeAgent(MemoryAgent):
    id = "claude"
    label = "Claude Code"
    receiver = "Claude Code"
    nothing_loads = "no Claude Code memory files load here"
    list_label_width = 10
    has_references = True
    expands_home = True
    skips_blank_files = True

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return CLAUDE_FILE_NAMES

    def sends_comment(self, text: str, start: int, end: int) -> bool:
        return not strips_comment(text, start, end)

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return posixpath.basename(path) in CLAUDE_FILE_NAMES

    def claims(self, path: str) -> bool:
        # Its files, its auto-memory index, anything under a `.claude` folder (rules).
        return (posixpath.basename(path) in (*CLAUDE_FILE_NAMES, "MEMORY.md")
                or "/.claude/" in path)

    def home_folder(self, home: str) -> str | None:
        return claude_home(home)

    def home_change_matters(self, path: str, home: str) -> bool:
        # Claude Code rewrites its transcripts and state under ~/.claude all the time; of that
        # folder only Markdown (CLAUDE.md, rules, auto memory) matters.
        return not path.startswith(claude_home(home) + "/") or path.endswith(".md")

    def find_references(self, text: str) -> list[ImportToken]:
        return find_includes(text)

    def resolve_reference(self, source: str, written: str, home: str) -> str:
        if written.startswith("~/"):
            return resolve(home, written[2:])
        return resolve(dirname(source), written)

    def rewrite_reference(self, written: str, from_dir: str, target: str, home: str) -> str:
        """In the form it was written: `@~/…`, `@/abs`, `@./rel`, `@rel`."""
        if written.startswith("~/") and is_subpath(home, target):
            return "~/" + posixpath.relpath(target, home)
        if written.startswith(("/", "~/")):
            return target
        relative = relative_import(from_dir, target)
        return relative if written.startswith(".") else relative.removeprefix("./")

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        """With `target`, the rules whose `paths:` match it load too."""
        follow_claude_version(settings.agent_version("claude"))
        loader = ClaudeLoader(settings.home, reader=reader)
        load = loader.load(folder)
        # The text is what Claude Code sends: its start-up reminder, then (with a target) the
        # reminders it adds after a Read of the target.
        sent = payload(load.files)
        text, later = sent, []
        if target is not None:
            read = ClaudeJitSession(settings.home, folder, reader).load_for(target)
            text = "\n".join(p for p in [sent, *read.payloads] if p)
            later = [AgentFile(f.path, "on read", f.content, f.reason, when="on-read")
                     for f in read.files]
        scoped = "".join(f"\n- {markdown_code(r.path)} applies to "
                         f"{markdown_text(', '.join(r.applies_to))}"
                         for r in load.conditional_rules)
        startup = [AgentFile(f.path, f.kind, f.content) for f in load.files]
        headline = (f"**{self.label} memory for {markdown_code(folder)}** — "
                    f"{files_figures(self.label, startup, sent)}"
                    + (f"\n\nRules scoped by `paths:`:{scoped}" if scoped else ""))
        listing = [ListedFile(f.path, f.kind, len(f.content), f.content) for f in load.files]
        listing += [ListedFile(r.path, "rule (paths: " + ", ".join(r.applies_to) + ")",
                               len(r.content), r.content) for r in load.conditional_rules]
        listing += [ListedFile(t.path, f"memory ({t.type or 'no type'})", t.chars, t.content)
                    for t in load.topics]
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="claude",
            files=[*startup, *later],
            text=text, diagnostics=load.diagnostics, headline=headline, listing=listing,
            details={"conditionalRules": [{"path": r.path, "paths": r.applies_to}
                                          for r in load.conditional_rules],
                     "autoMemory": auto_memory_facts(load),
                     # What Claude Code 2.1.330 sends at start, byte for byte.
                     "payload": sent},
            payloads=[sent] if sent else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        """What it loads working in each root and in each folder a found CLAUDE.md puts it to
        work in (a subfolder's CLAUDE.md is checked as Claude Code loads it there)."""
        follow_claude_version(settings.agent_version("claude"))
        folders = claude_project_folders(found)
        checked = check_claude_folders(settings.home, list(dict.fromkeys([*roots, *folders])),
                                       reader)
        checked.found, checked.folders = found, folders
        return checked

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        follow_claude_version(settings.agent_version("claude"))
        return ClaudeJitSession(settings.home, folder, reader)

    def walk_for_views(self, folder: str) -> None:
        nested_memory_folders(resolve(folder))
        skill_folders(resolve(folder))

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """AGENTS.md files a CLAUDE.md hides (`ignored_agents_files`) and non-`.md` files in
        its rules folders (`ignored_rule_files`)."""
        return [*ignored_agents_files(settings.home, roots, found, reader),
                *ignored_rule_files(settings.home, roots, found)]

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """Its start-up load for the folder, rules scoped by `paths:`, and the subfolder
        CLAUDE.md files it reads when it works there."""
        follow_claude_version(settings.agent_version("claude"))
        load = ClaudeLoader(settings.home, reader=reader).load(folder)
        rows = [AgentFile(f.path, f.kind, f.content) for f in load.files]
        rows += [AgentFile(r.path, r.kind, r.content, "applies to " + ", ".join(r.applies_to),
                           when="on-read", reads_on=_rule_reads_on(r))
                 for r in load.conditional_rules]
        rows += [AgentFile(t.path, "memory", t.content, topic_note(t), when="on-demand")
                 for t in load.topics]
        for memory in load.agent_memory:
            read = reader.read(memory.index)
            if read.content is not None:
                rows.append(AgentFile(memory.index, "agent memory", read.content,
                                      f"{memory.agent} subagent ({memory.scope}): in its "
                                      "prompt when it runs", when="on-demand"))
        listed = {f.path for f in rows}
        for sub in check.folders:
            for name in NESTED_NAMES:
                path = posixpath.join(sub, name)
                read = reader.read(path)
                if path not in listed and read.content is not None:
                    rows.append(AgentFile(path, "nested", read.content,
                                          f"when a tool reads a file in "
                                          f"{posixpath.relpath(sub, folder)}/",
                                          when="on-read"))
        if settings.allow_broad_workspace or broad_reason(folder, settings.home) is None:
            # Not below `/` or HOME as a workspace folder: a walk of the whole disk (the index
            # refuses those folders, workspace/index.py).
            rows += skills_listed_on_read(settings.home, folder, reader)
        return grouped_rows(rows, load.topics)

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """Rules scoped by `paths:` (when a tool reads a file they match), the topic files
        (on demand), the skills a read below the working folder lists (`skills_listed_on_read`)
        and what reading a file in a subfolder of the working folder brings in, as its JIT
        session brings it: the subfolder's memory files with their includes and rules, and
        (without a CLAUDE.md at start) the AGENTS.md files between."""
        rows = [r for r in self.view_files(memory.cwd, settings, reader, check,
                                           lambda p: memory.cwd)
                if r.when in ("on-read", "on-demand", "listed") and r.label != "nested"]
        listed = {r.path for r in rows} | {f.path for f in memory.files}
        folders = nested_memory_folders(memory.cwd)
        for entry, folder in on_read_entries(settings.home, memory.cwd, folders, reader):
            file = entry.file
            if file.path in listed:
                continue
            listed.add(file.path)
            rel = posixpath.relpath(folder, memory.cwd)
            if file.applies_to:
                rows.append(AgentFile(file.path, file.kind, file.content,
                                      f"in {rel}/: applies to {', '.join(file.applies_to)}",
                                      when="on-read", reads_on=_rule_reads_on(file)))
            else:
                what = {"include": "included, ", "project": ""}.get(file.kind, "")
                rows.append(AgentFile(file.path, "nested", file.content,
                                      f"{what}when a tool reads a file in {rel}/",
                                      when="on-read"))
        return rows

    def section_starts(self, path: str) -> list[str]:
        return [f"Contents of {path}{label}:"
                for label in (*dict.fromkeys(PAYLOAD_LABELS.values()), "")]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files],
                **memory.details}
