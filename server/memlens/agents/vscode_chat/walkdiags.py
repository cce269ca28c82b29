"""The diagnostics that say what Memory Lens did not walk of VS Code chat's instruction
locations, and why (`locations`; docs/reference.md, "VS Code chat"):

- `vscode-chat-location-outside`: a location not walked, or a link in one not followed — a
  warning when the repository decides it (its settings named the location, or the path lies in
  the workspace) or it is a system folder; info when the user's own settings name a folder
  outside the workspace and home. On the settings file's line naming it, else on the path.
- `vscode-chat-walk-truncated` (warning): a walk stopped at its budget (locations considered,
  directory entries, folders searched for nested AGENTS.md).
"""

from __future__ import annotations

import json

from memlens.agents.vscode_chat.discovery import ChatLoad
from memlens.agents.vscode_chat.locations import (
    LINK_OUT,
    SYSTEM,
    NotWalked,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity

LOCATION_OUTSIDE = "vscode-chat-location-outside"
WALK_TRUNCATED = "vscode-chat-walk-truncated"


def _strings(text: str) -> dict[str, tuple[int, int, int]]:
    """Where each JSON string of `text` is first written: (line, column, end column), 1-based.
    One linear pass (a settings file may name thousands of locations); a string left open
    ends its line."""
    where: dict[str, tuple[int, int, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        start = line.find('"')
        while start >= 0:
            end = start + 1
            while end < len(line) and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            if end >= len(line):
                break
            try:
                value = json.loads(line[start:end + 1])
            except ValueError:
                value = None
            if isinstance(value, str):
                where.setdefault(value, (number, start + 1, end + 2))
            start = line.find('"', end + 1)
    return where


class _Positions:
    """The JSON strings' positions in each settings file, read once."""

    def __init__(self, reader: FileReader) -> None:
        self.reader = reader
        self.files: dict[str, dict[str, tuple[int, int, int]]] = {}

    def of(self, source: str, name: str) -> tuple[int, int, int]:
        if source not in self.files:
            self.files[source] = _strings(self.reader.read(source).content or "")
        return self.files[source].get(name, (1, 1, 1))


def _one(load: ChatLoad, item: NotWalked, positions: _Positions) -> Diagnostic:
    link = item.why == LINK_OUT
    from_repository = item.scope == "workspace" or is_subpath(load.workspace, item.path)
    severity: Severity = "warning" if from_repository or item.why == SYSTEM else "info"
    path, (line, col, end_col) = item.path, (1, 1, 1)
    if not link and item.source is not None:
        path, (line, col, end_col) = item.source, positions.of(item.source, item.location)
    if link:
        message = (f"not followed: {item.path} is {item.why}; VS Code's chat may read it, "
                   "Memory Lens does not")
    else:
        message = (f"not walked: {item.path} (`{item.location}` in "
                   f"chat.instructionsFilesLocations) is {item.why}; VS Code's chat may list "
                   "instruction files from it, Memory Lens does not read them")
    return Diagnostic(path=path, line=line, col=col, end_line=line, end_col=end_col,
                      severity=severity, code=LOCATION_OUTSIDE, message=message)


def walk_diagnostics(load: ChatLoad, reader: FileReader) -> list[Diagnostic]:
    positions = _Positions(reader)
    out = [_one(load, item, positions) for item in load.not_walked]
    stops = ((load.walked.locations, "stopped after {:,} locations of "
                                      "chat.instructionsFilesLocations, in this file"),
             (load.walked.budget, "stopped looking for VS Code chat's instruction files after "
                                  "{:,} directory entries, in this folder"),
             (load.walked.folders, "stopped looking for VS Code chat's nested AGENTS.md files "
                                   "after {:,} folders, in this folder"))
    for budget, what in stops:
        if budget.stopped_in is not None:
            out.append(Diagnostic(
                path=budget.stopped_in, line=1, col=1, end_line=1, end_col=1,
                severity="warning", code=WALK_TRUNCATED,
                message=f"Memory Lens {what.format(budget.limit)}: the files past it are not "
                        "shown"))
    return out
