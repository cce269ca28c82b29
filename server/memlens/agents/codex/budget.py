"""Codex's byte budget for project docs as a diagnostic (docs/reference.md "Budgets"):
`payload-budget-exceeded` where the cut falls, naming every file it drops."""

from __future__ import annotations

import os
import posixpath

from memlens.agents.codex.load import FILE_NAMES, CodexLoad, load_codex
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname
from memlens.files.roots import in_skill_folder
from memlens.protocol.memory import Diagnostic


def _position(text: str) -> tuple[int, int]:
    """The 1-based line and column just after `text`."""
    return text.count("\n") + 1, len(text) - (text.rfind("\n") + 1) + 1


def _lost_names(target: str, lost: list[str], sizes: list[int]) -> str:
    """Each file not sent, by name: relative to the folder of the file the diagnostic sits
    on (the deeper files Codex drops are below it), with its bytes when there are several."""
    folder = posixpath.dirname(target)

    def name(path: str) -> str:
        if path == target:
            return "this file"
        return posixpath.relpath(path, folder) if path.startswith(folder + "/") else path

    if len(lost) == 1:
        return name(lost[0])
    return ", ".join(f"{name(p)} ({n:,} bytes)" for p, n in zip(lost, sizes, strict=True))


def cut_diagnostics(load: CodexLoad, reader: FileReader) -> list[Diagnostic]:
    """`payload-budget-exceeded` where the cut falls: in the file cut (at the last character
    sent), else at the start of the first file not sent at all; it names what is lost, the
    cut file's remaining bytes and each later file with its bytes."""
    cut = next((d for d in load.docs if d.cut), None)
    if cut is None and not load.lost:
        return []
    lost = load.lost
    target = cut.path if cut else lost[0]
    content = reader.read(target).content or ""
    kept = cut.text.removesuffix("\ufffd") if cut else ""
    line, col = _position(kept)
    end_line, end_col = _position(content)
    sizes = [_size(p) for p in lost]
    parts = []
    if cut:
        parts.append(f"the last {cut.size - cut.sent_bytes:,} of this file's {cut.size:,} "
                     "bytes")
    if lost:
        parts.append(f"{len(lost)} later file{'' if len(lost) == 1 else 's'} "
                     f"({sum(sizes):,} bytes): {_lost_names(target, lost, sizes)}")
    lost_bytes = (cut.size - cut.sent_bytes if cut else 0) + sum(sizes)
    message = (f"Codex sends only {load.budget:,} bytes of project docs "
               f"(project_doc_max_bytes): {lost_bytes:,} bytes are not sent — "
               + " and ".join(parts))
    detail = ("cut here" if cut else "not sent") + (
        "; not sent: " + ", ".join(f"{p} ({n:,} bytes)" for p, n in zip(lost, sizes, strict=True))
        if lost else "")
    return [Diagnostic(path=target, line=line, col=col, end_line=end_line, end_col=end_col,
                       severity="warning", code="payload-budget-exceeded", message=message,
                       detail=detail)]


def budget_diagnostics(home: str, roots: list[str], found: list[str],
                       reader: FileReader) -> list[Diagnostic]:
    """`payload-budget-exceeded` for Codex started in each workspace folder and in each folder
    holding an AGENTS file found there (a file's cut depends only on the docs above it, so it
    is the same from any start below; the deepest start loses the most files, and its
    diagnostic, naming the most, is kept)."""
    # Nobody starts Codex inside a skill folder: an AGENTS.md there is the skill's material.
    starts = list(dict.fromkeys([*roots, *(dirname(p) for p in found
                                           if posixpath.basename(p) in FILE_NAMES
                                           and not in_skill_folder(p))]))
    best: dict[tuple[str, int, int], tuple[int, Diagnostic]] = {}
    for start in starts:
        load = load_codex(start, home, reader)
        for diagnostic in cut_diagnostics(load, reader):
            key = (diagnostic.path, diagnostic.line, diagnostic.col)
            if key not in best or len(load.lost) > best[key][0]:
                best[key] = (len(load.lost), diagnostic)
    return [d for _, d in best.values()]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
