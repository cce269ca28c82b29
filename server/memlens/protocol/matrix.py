"""The agent matrix (`memlens report --json`, the editor's `memlens/matrix`): every memory and
instruction file of a workspace folder × every agent, each cell saying when that agent reads
the file and why (or why not); and per agent a context map of what it loads at start."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Inbound, Wire

# "listed": a read lists the file without sending it (Claude Code's skills found on a read:
# their name and description; the skill is sent when used).
CellState = Literal["startup", "on-read", "on-demand", "listed", "not-read"]


class MatrixCell(Wire):
    state: CellState
    # the cell's words: "at start-up", "on read", "on demand", "listed on read", "not read"
    word: str
    why: str  # one line: the label, the globs or folder it applies to, or why it is not read
    # On read (or listed on read): what makes it load (the globs, the folder a read must fall
    # in), also when no file matches it today (`why` then says so).
    trigger: str | None = None
    cut: str | None = None  # "cut at line 201" when the agent sends only part of it
    # Not read because it is not this agent's kind of file at all (the cell's `why` is "not its
    # file"): nothing to tell, so the editor draws the cell empty (the reason in its tooltip) —
    # with ten agents, a row is mostly such cells.
    foreign: bool = False
    # A long reason several cells share is said once under the table (MatrixResult.notes):
    # the number of its note, and what the cell still says after it ("" when the whole
    # reason is the note) (reports/notes.py).
    note: int | None = None
    note_rest: str = ""


class MatrixRow(Wire):
    path: str
    relative: str  # to the folder, or `~/…` for files in HOME
    owner: str | None  # the agent whose file it is by name (None: an included file)
    cells: dict[str, MatrixCell]  # by agent id
    problems: int = 0  # errors and warnings on the file


class MapSegment(Wire):
    path: str
    relative: str
    chars: int
    tokens: int


class ContextMap(Wire):
    """An agent's start-up memory, in tokens by its own estimate, against its limits."""

    tokens: int
    chars: int
    estimator: str  # "Gemini CLI's estimate", …
    segments: list[MapSegment]
    limit: int | None = None  # in tokens, when a limit applies (the user's budget)
    limit_label: str | None = None
    cuts: list[str] = Field(default_factory=list)  # "Codex cuts at 32 KiB: AGENTS.md …"


class MatrixAgent(Wire):
    id: str
    label: str  # "Claude Code"
    why: str  # why it is a column: "chosen", "its files are here", "installed"
    map: ContextMap


class MatrixResult(Wire):
    folder: str
    home: str
    agents: list[MatrixAgent]
    rows: list[MatrixRow]
    diagnostics: list[Diagnostic]
    # hidden-text / hidden-comment findings, each with what the hidden text says decoded
    hidden: list[Diagnostic] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # note N is notes[N - 1]


class MatrixParams(Inbound):
    """`memlens/matrix`: the workspace folder; a single-root window's request may leave it out
    (a multi-root window's without one is refused: InvalidParams)."""

    folder: str | None = None
