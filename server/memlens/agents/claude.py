"""Claude Code as a `MemoryAgent`: CLAUDE.md files, `.claude/rules`, auto memory and `@path`
includes (`claude_loader` reads them exactly as Claude Code does)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from ..fsread import FileReader
from ..imports import ImportToken, relative_import
from ..model import MemorySettings
from ..nodecompat import dirname, is_subpath, resolve
from .base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    ListedFile,
    MemoryAgent,
    WorkspaceCheck,
)
from .claude_loader import (
    CLAUDE_FILE_NAMES,
    NESTED_NAMES,
    PAYLOAD_LABELS,
    ClaudeJitSession,
    ClaudeLoader,
    check_claude_folders,
    claude_home,
    claude_project_folders,
    find_includes,
    payload,
)


class ClaudeAgent(MemoryAgent):
    id = "claude"
    label = "Claude Code"
    receiver = "Claude Code"
    nothing_loads = "no Claude Code memory files load here"
    list_label_width = 10
    has_references = True
    expands_home = True

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return CLAUDE_FILE_NAMES

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
        scoped = "".join(f"\n- `{r.path}` applies to {', '.join(r.applies_to)}"
                         for r in load.conditional_rules)
        headline = (f"**{self.label} memory for `{folder}`** — {len(load.files)} file(s), "
                    f"{len(text):,} characters" + (f"\n\nRules scoped by `paths:`:{scoped}"
                                                   if scoped else ""))
        listing = [ListedFile(f.path, f.kind, len(f.content)) for f in load.files]
        listing += [ListedFile(r.path, "rule (paths: " + ", ".join(r.applies_to) + ")",
                               len(r.content)) for r in load.conditional_rules]
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="claude",
            files=[*(AgentFile(f.path, f.kind, f.content) for f in load.files), *later],
            text=text, diagnostics=load.diagnostics, headline=headline, listing=listing,
            details={"conditionalRules": [{"path": r.path, "paths": r.applies_to}
                                          for r in load.conditional_rules],
                     # What Claude Code 2.1.330 sends at start, byte for byte.
                     "payload": sent},
            payloads=[sent] if sent else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        """What it loads working in each root and in each folder a found CLAUDE.md puts it to
        work in (a subfolder's CLAUDE.md is checked as Claude Code loads it there)."""
        folders = claude_project_folders(found)
        checked = check_claude_folders(settings.home, list(dict.fromkeys([*roots, *folders])),
                                       reader)
        checked.found, checked.folders = found, folders
        return checked

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return ClaudeJitSession(settings.home, folder, reader)

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """Its start-up load for the folder, rules scoped by `paths:`, and the subfolder
        CLAUDE.md files it reads when it works there."""
        load = ClaudeLoader(settings.home, reader=reader).load(folder)
        rows = [AgentFile(f.path, f.kind, f.content) for f in load.files]
        rows += [AgentFile(r.path, r.kind, r.content, "applies to " + ", ".join(r.applies_to),
                           when="on-read") for r in load.conditional_rules]
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
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """Rules scoped by `paths:` (when a tool reads a file they match) and the memory files
        of the subfolders below the working folder (when it reads a file below them)."""
        below = memory.cwd.rstrip("/") + "/"
        return [r for r in self.view_files(memory.cwd, settings, reader, check,
                                           lambda p: memory.cwd)
                if r.when == "on-read" and (r.label != "nested" or r.path.startswith(below))]

    def section_starts(self, path: str) -> list[str]:
        return [f"Contents of {path}{label}:"
                for label in (*dict.fromkeys(PAYLOAD_LABELS.values()), "")]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files],
                **memory.details}
