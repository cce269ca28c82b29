"""`memlens conflicts --json`: rules one agent receives together that disagree, and agents
told different things (docs/reference.md "Rules that disagree")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memlens.protocol.wire import Wire


class ConflictRule(Wire):
    """One rule: where it is and what it says."""

    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_col: int
    value: str  # as a message says it: "pnpm", "never npm", "never"
    quote: str  # the line (quotations blanked)


class ConflictSide(Wire):
    """One agent's side: when it receives the rules, and the one it sees last (later in its
    payload) — for `agents-disagree`, the rule it is told."""

    agent: str  # the agent's id
    label: str
    when: Literal["startup", "on-read"]
    scope: str  # "at start-up", "when Claude Code reads a file in web/"
    seen_last: ConflictRule


class ConflictFinding(Wire):
    code: Literal["instruction-conflict", "agents-disagree"]
    severity: Literal["warning", "info"]
    kind: str  # the decision kind's id: "package-manager"
    subject: str  # "package manager (JavaScript)"
    rules: list[ConflictRule]
    agents: list[ConflictSide]


class ModelFinding(Wire):
    """A contradiction the model found between two files one agent receives together
    (`memlens conflicts --model`): its judgement, never mixed with the rule set's findings.
    Both quotes were found verbatim in the files."""

    judgement: Literal["model"] = "model"
    model: str
    rules: list[ConflictRule]  # the two quoted rules
    explanation: str
    agents: list[str]  # who receives both, and when: "Claude Code at start-up"
    cached: bool = False  # answered from the cache (the same two texts, model and prompt)


class ConflictsResult(Wire):
    folder: str
    agents: list[str] = Field(default_factory=list)  # the agents compared (ids)
    findings: list[ConflictFinding] = Field(default_factory=list)
    # `--model` only: the model's findings, and what it could not do (a pair skipped).
    model_findings: list[ModelFinding] | None = None
    model_notes: list[str] | None = None
