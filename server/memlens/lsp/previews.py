"""How editor previews show a rendered context (shared by the hovers and memlens/show): hidden
characters as visible escapes (`⟦U+200B⟧`, `⟦tags: "…"⟧`) and a `⚠ from outside the
repository: PATH` line before text from outside the repository (`hidden.visible_preview`).
The CLI's `memlens show` stays byte-exact: only editor previews change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlens.agents import workspace_file_names
from memlens.files.nodecompat import dirname
from memlens.files.roots import repository_root
from memlens.protocol.memory import ContextSection
from memlens.text.hidden import visible_preview

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer


def repository_of(ls: MemlensServer, path: str) -> str:
    """The repository holding `path` (its git root), else its workspace folder, else its
    folder."""
    folder = ls.service.folder_for(path) or dirname(path)
    return repository_root(folder) or folder


def visible(ls: MemlensServer, path: str, text: str, base_file: str | None = None) -> str:
    """`text`, a preview for `path`'s folder, as the editor shows it."""
    names = set(workspace_file_names(ls.service.settings_for(path)))
    return visible_preview(text, repository_of(ls, path), names, base_file)[0]


def visible_sections(ls: MemlensServer, path: str, text: str,
                     sections: list[ContextSection]) -> tuple[str, list[ContextSection]]:
    """`visible` for a memlens/show answer: its sections moved past the lines added."""
    names = set(workspace_file_names(ls.service.settings_for(path)))
    shown, line_map = visible_preview(text, repository_of(ls, path), names)
    moved = [s.model_copy(update={"start_line": line_map[s.start_line],
                                  "end_line": line_map[s.end_line]}) for s in sections
             if s.start_line < len(line_map) and s.end_line < len(line_map)]
    return shown, moved
