"""What loads for a file's folder, counted one way for the hover and the code lens (and, on
the client, the status bar and the Memory view)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlens.agents.gemini.trust import untrusted_label
from memlens.files.nodecompat import is_subpath
from memlens.protocol.memory import Diagnostic
from memlens.reports.budgets import ContextBudget, context_budget, over_budget, summary

if TYPE_CHECKING:
    from memlens.workspace.service import WorkspaceService


def memory_for(service: WorkspaceService, path: str) -> tuple[str, int, int, int, bool]:
    """What loads for `path`'s folder: (merged text, files, chars, JIT files, trusted).
    Chars count the files' text with imports expanded, as the status bar and the Memory
    view do (the merged text adds the source markers)."""
    index = service.index_for(path)
    merged, files, jit = index.merged_for(path)
    state = index.folder_state(path)
    loaded = [f for f in state.load.files if f.content is not None] if state else []
    chars = sum(len(f.content or "") for f in loaded)
    jit_count = 0
    if jit is not None:
        jit_count = len(jit.files)
        chars += sum(len(f.content or "") for f in jit.files)
    trusted = state.load.trusted if state else True
    return merged, len(files), chars, jit_count, trusted


def folder_budget(service: WorkspaceService, path: str) -> ContextBudget:
    """The figures of what Gemini CLI loads for `path`'s folder (the files `memory_for`
    counts: startup memory, then what JIT adds), tokens by Gemini CLI's estimate."""
    return context_budget("gemini", folder_texts(service, path))


def folder_texts(service: WorkspaceService, path: str) -> list[tuple[str, str, str | None]]:
    """(path, tier, text) of each file `memory_for` counts for `path`'s folder."""
    index = service.index_for(path)
    state = index.folder_state(path)
    rows: list[tuple[str, str, str | None]] = []
    if state is not None:
        rows += [(f.path, f.tier, f.content) for f in state.load.files]
    _, _, jit = index.merged_for(path)
    if jit is not None:
        rows += [(f.path, "jit", f.content) for f in jit.files]
    return rows


def memory_lens_title(service: WorkspaceService, path: str) -> str:
    """The code lens on line 1 of a memory file: the same count as the status bar, with
    Gemini CLI's token estimate ("3 memory files · 4,210 chars · ~1,050 tokens")."""
    _, count, chars, _, trusted = memory_for(service, path)
    tokens = folder_budget(service, path).total.tokens
    return summary(count, chars, tokens) + ("" if trusted else
                                            f" · {untrusted_label(trust_source(service, path))}")


def trust_source(service: WorkspaceService, path: str) -> str | None:
    """Why the folder of `path` is trusted or not (trust.decide_trust's source)."""
    state = service.index_for(path).folder_state(path)
    return state.load.trust_source if state else None


def budget_diagnostics(service: WorkspaceService, path: str) -> list[Diagnostic]:
    """`context-over-budget` on line 1 of `path` when it is the folder's first memory file
    (the first it loads inside the workspace folder and outside HOME, else the first it
    loads) and the folder's context passes `memlens.budget` (Gemini CLI's estimate)."""
    settings = service.settings_for(path)
    if settings.budget <= 0 or not service.is_memory_file(path):
        return []
    state = service.index_for(path).folder_state(path)
    if state is None:
        return []
    loaded = [f.path for f in state.load.files if f.content is not None]
    # The folder's own files: inside it and not the user's (a HOME may lie inside it).
    inside = [p for p in loaded if is_subpath(state.folder, p)
              and not is_subpath(settings.home, p)]
    first = (inside or loaded)[0] if loaded else None
    if first != path:
        return []
    found = over_budget(folder_budget(service, path), settings.budget, first, "Gemini CLI")
    return [found] if found else []
