"""The diagnostics that say what Memory Lens did not walk of VS Code chat's instruction
locations, and why (`locations`; docs/reference.md, "VS Code chat"):

- `vscode-chat-location-outside`: a location not walked, or a link in one not followed — a
  warning when the repository decides it (its settings named the location, or the path lies in
  the workspace) or it is a system folder; info when the user's own settings name a folder
  outside the workspace and home. On the settings file's line naming it, else on the path.
- `vscode-chat-walk-truncated` (warning): a walk stopped at its budget.
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
from memlens.model import Severity
from memlens.protocol.memory import Diagnostic

LOCATION_OUTSIDE = "vscode-chat-location-outside"
WALK_TRUNCATED = "vscode-chat-walk-truncated"


def _naming(source: str, name: str, reader: FileReader) -> tuple[int, int, int]:
    """Where `source` first writes `name` as a JSON string: (line, column, end column),
    1-based; (1, 1, 1) when it does not (another spelling, escapes)."""
    text = reader.read(source).content or ""
    quoted = json.dumps(name, ensure_ascii=False)
    for number, line in enumerate(text.splitlines(), 1):
        col = line.find(quoted)
        if col >= 0:
            return number, col + 1, col + 1 + len(quoted)
    return 1, 1, 1


def _one(load: ChatLoad, item: NotWalked, reader: FileReader) -> Diagnostic:
    link = item.why == LINK_OUT
    from_repository = item.scope == "workspace" or is_subpath(load.workspace, item.path)
    severity: Severity = "warning" if from_repository or item.why == SYSTEM else "info"
    path, (line, col, end_col) = item.path, (1, 1, 1)
    if not link and item.source is not None:
        path, (line, col, end_col) = item.source, _naming(item.source, item.location, reader)
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
    out = [_one(load, item, reader) for item in load.not_walked]
    budgets = load.walked.budget, load.walked.folders
    for budget, what in zip(budgets, ("instruction files after {:,} directory entries",
                                      "nested AGENTS.md files after {:,} folders"),
                            strict=True):
        if budget.stopped_in is not None:
            out.append(Diagnostic(
                path=budget.stopped_in, line=1, col=1, end_line=1, end_col=1,
                severity="warning", code=WALK_TRUNCATED,
                message=f"Memory Lens stopped looking for VS Code chat's "
                        f"{what.format(budget.limit)}, in this folder: the files past it "
                        "are not shown"))
    return out
