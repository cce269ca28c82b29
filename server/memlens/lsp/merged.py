"""What loads for a file's folder, counted one way for the hover and the code lens (and, on
the client, the status bar and the Memory view)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..trust import memory_summary, untrusted_label

if TYPE_CHECKING:
    from .server import MemlensServer


def memory_for(ls: MemlensServer, path: str) -> tuple[str, int, int, int, bool]:
    """What loads for `path`'s folder: (merged text, files, chars, JIT files, trusted).
    Chars count the files' text with imports expanded, as the status bar and the Memory
    view do (the merged text adds the source markers)."""
    index = ls.service.index_for(path)
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


def memory_lens_title(ls: MemlensServer, path: str) -> str:
    """The code lens on line 1 of a memory file: the same count as the status bar."""
    _, count, chars, _, trusted = memory_for(ls, path)
    return memory_summary(count, chars) + ("" if trusted else
                                           f" · {untrusted_label(trust_source(ls, path))}")


def trust_source(ls: MemlensServer, path: str) -> str | None:
    """Why the folder of `path` is trusted or not (trust.decide_trust's source)."""
    state = ls.service.index_for(path).folder_state(path)
    return state.load.trust_source if state else None
