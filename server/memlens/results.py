"""Output models of the CLI's --json and the language server's custom requests."""

from __future__ import annotations

from pydantic import Field

from .model import Diagnostic, HierarchicalMemory, Mode, Tier, Wire


class ShowResult(Wire):
    cwd: str
    mode: Mode
    trusted: bool
    files: list[str]
    file_count: int
    content: str
    hierarchical: HierarchicalMemory
    prompt: str
    session_memory: str
    truncated: bool = False
    diagnostics: list[Diagnostic] = Field(default_factory=list)


class ContextSection(Wire):
    """Where one file's text lies in a rendered context (0-based lines): `start_line` is the
    line naming `path` (`--- Context from: <path> ---`, `Contents of <path> (…):`,
    `--- <path> ---`), `end_line` the section's last line (its end marker, when it has one).
    The editor links the path on `start_line` without parsing the text."""
    path: str
    start_line: int
    end_line: int


class ListedFile(Wire):
    path: str
    tier: Tier
    chars: int | None  # None: listed by Gemini CLI but not readable (e.g. a directory)


class ListResult(Wire):
    cwd: str
    mode: Mode
    files: list[ListedFile]
    file_count: int


class JitEntry(Wire):
    target: str
    files: list[str]
    context: str


class JitFile(Wire):
    path: str
    chars: int


class ClaudeJitEntry(Wire):
    """A file Claude Code adds while working on the opened file, and why."""

    path: str
    chars: int
    reason: str


class JitLoadedEvent(Wire):
    """`memlens/jitLoaded`: what opening `uri` loads just in time (Gemini CLI's JIT files and
    the appended context; `claude`: what Claude Code adds for that file, when it has memory
    in the workspace)."""

    uri: str
    files: list[JitFile]
    context: str
    claude: list[ClaudeJitEntry] = Field(default_factory=list)
