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
