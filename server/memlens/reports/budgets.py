"""Budgets (issue 14): how much of an agent's context its memory takes.

Three figures for any text an agent is sent:

- **chars**: Unicode code points (Python's `len`), the unit Memory Lens has always counted
  in; an emoji outside the Basic Multilingual Plane is one char here (two UTF-16 units).
- **bytes**: the UTF-8 encoding's length — what Codex's `project_doc_max_bytes` counts.
- **tokens**: the agent's *own* estimate where its source has one, applied to the same text:

  * Gemini CLI (0.43 and 0.61 bundles, and `packages/core/src/utils/tokenCalculation.ts`,
    `estimateTextTokens` called by `estimateTokenCountSync`): per UTF-16 code unit, 1/4 token
    for a unit <= 127 and 1.5 for any other (`DEFAULT_CHARS_PER_TOKEN` 4,
    `NON_ASCII_TOKENS_PER_CHAR` 1.5); a text over 100,000 units counts units / 4; the sum is
    floored (`Math.floor`).
  * Claude Code 2.1.330 (a native binary; its embedded JavaScript, read with `strings`): the
    default estimate is `Math.round(length / 4)` over UTF-16 code units (bytes-per-token
    parameter defaulting to 4; 2 for JSON). A per-character-kind estimate exists behind a
    feature flag and is not modelled.
  * Codex (`codex-rs/utils/string/src/truncate.rs`, `approx_token_count`): UTF-8 bytes / 4
    rounded up (`APPROX_BYTES_PER_TOKEN` 4).
  * The AGENTS.md convention (no agent): Memory Lens's own estimate, code points / 4 rounded
    up, labelled as such.

  Every one of them is an estimate; only the model's own `countTokens` is exact
  (`count_exact`, with a Gemini API key).

A user budget (`memlens.budget`, tokens) warns with `context-over-budget` when a folder's
context passes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memlens.files.output import markdown_code
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity

OVER_BUDGET = "context-over-budget"

# Gemini CLI's constants (see the module docstring for where they are).
_GEMINI_ASCII = 0.25
_GEMINI_NON_ASCII = 1.5
_GEMINI_FULL_HEURISTIC_UNITS = 100_000


@dataclass(frozen=True)
class Estimator:
    agent: str
    label: str  # "Gemini CLI's estimate"
    source: str  # where in the agent's source the rule is


ESTIMATORS: dict[str, Estimator] = {
    "gemini": Estimator("gemini", "Gemini CLI's estimate",
                        "gemini-cli packages/core/src/utils/tokenCalculation.ts "
                        "(estimateTokenCountSync / estimateTextTokens)"),
    "claude": Estimator("claude", "Claude Code's estimate",
                        "Claude Code 2.1.330 bundle: Math.round(length / 4), "
                        "4 chars per token by default"),
    "codex": Estimator("codex", "Codex's estimate",
                       "codex-rs/utils/string/src/truncate.rs (approx_token_count)"),
    "agents": Estimator("agents", "Memory Lens's estimate",
                        "no agent: code points / 4, rounded up"),
    "pi": Estimator("pi", "pi's estimate",
                    "pi 0.73 dist/core/compaction/compaction.js (estimateTokens): UTF-16 "
                    "length / 4, rounded up"),
}


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _gemini_tokens(text: str) -> int:
    units = utf16_units(text)
    if units > _GEMINI_FULL_HEURISTIC_UNITS:
        return math.floor(units / 4)
    ascii_count = len(text.encode("ascii", "ignore"))  # the code points <= 127
    # A code point above U+FFFF is two UTF-16 units, each > 127.
    other_units = units - ascii_count
    return math.floor(ascii_count * _GEMINI_ASCII + other_units * _GEMINI_NON_ASCII)


def _js_round(value: float) -> int:
    """JavaScript's Math.round: halves go up (Python's round goes to even)."""
    return math.floor(value + 0.5)


def estimate_tokens(agent: str, text: str) -> int:
    """`text`'s tokens as `agent` estimates them (see the module docstring)."""
    if agent == "gemini":
        return _gemini_tokens(text)
    if agent == "claude":
        return _js_round(utf16_units(text) / 4)
    if agent == "codex":
        return -(-utf8_bytes(text) // 4)
    if agent == "pi":
        return -(-utf16_units(text) // 4)
    return -(-len(text) // 4)


def estimator_for(agent: str) -> Estimator:
    return ESTIMATORS.get(agent, ESTIMATORS["agents"])


@dataclass(frozen=True)
class Figures:
    chars: int  # code points
    bytes: int  # UTF-8
    tokens: int  # the agent's estimate


def measure(agent: str, text: str) -> Figures:
    return Figures(len(text), utf8_bytes(text), estimate_tokens(agent, text))


@dataclass(frozen=True)
class FileBudget:
    path: str
    label: str
    figures: Figures


@dataclass
class ContextBudget:
    """A folder's memory for one agent: each file's figures and the total, which measures the
    files' texts taken together (the estimate is applied once, as the agent applies it to a
    message, so it may differ by rounding from the sum of the rows)."""

    agent: str
    files: list[FileBudget] = field(default_factory=list)
    total: Figures = Figures(0, 0, 0)

    @property
    def estimator(self) -> Estimator:
        return estimator_for(self.agent)


def context_budget(agent: str, files: Iterable[tuple[str, str, str | None]]) -> ContextBudget:
    """The figures of `files` ((path, label, text or None when unreadable)) for `agent`."""
    rows = [(p, label, text) for p, label, text in files if text is not None]
    budget = ContextBudget(agent, [FileBudget(p, label, measure(agent, text))
                                   for p, label, text in rows])
    budget.total = measure(agent, "".join(text for _, _, text in rows))
    return budget


def summary(files: int, chars: int, tokens: int | None) -> str:
    """The line-1 code lens and status item: "3 memory files · 4,210 chars · ~1,050 tokens"
    (the `~` says it is an estimate)."""
    text = f"{files} memory file{'' if files == 1 else 's'} · {chars:,} chars"
    return text if tokens is None else f"{text} · ~{tokens:,} tokens"


def table(budget: ContextBudget, rel: dict[str, str] | None = None) -> str:
    """A Markdown table of the files' figures and the folder total, the estimate named."""
    rel = rel or {}
    lines = ["| File | Chars | Bytes | Tokens |", "|---|--:|--:|--:|"]
    for row in budget.files:
        f = row.figures
        name = markdown_code(rel.get(row.path, row.path), table=True)  # a name from disk
        lines.append(f"| {name} | {f.chars:,} | {f.bytes:,} | ~{f.tokens:,} |")
    t = budget.total
    lines.append(f"| **Folder total** | **{t.chars:,}** | **{t.bytes:,}** | **~{t.tokens:,}** |")
    lines += ["", f"*Tokens: {budget.estimator.label} ({budget.estimator.source}) — an "
                  "estimate, not the model's count. Chars: Unicode code points; bytes: UTF-8.*"]
    return "\n".join(lines)


def over_budget(budget: ContextBudget, limit: int, first_file: str | None,
                agent_label: str, *, source: str = "memlens.budget",
                severity: Severity = "warning") -> Diagnostic | None:
    """`context-over-budget` on line 1 of the folder's first memory file when the folder's
    estimated tokens pass `limit` (0: off). `source` names where the budget comes from
    (`memlens.budget` in the editor, `--budget` for `memlens check`, where it is an error: the
    user asked to gate on it)."""
    if limit <= 0 or first_file is None or budget.total.tokens <= limit:
        return None
    t = budget.total
    return Diagnostic(
        path=first_file, line=1, col=1, end_line=1, end_col=1, severity=severity,
        code=OVER_BUDGET,
        message=(f"This folder's memory is ~{t.tokens:,} tokens for {agent_label}, over the "
                 f"budget of {limit:,} ({source})"),
        detail=(f"{len(budget.files)} file(s), {t.chars:,} chars, {t.bytes:,} bytes; tokens: "
                f"{budget.estimator.label}"))


def lost_summary(paths: Sequence[str], sizes: Sequence[int]) -> str:
    """"2 files, 3,100 bytes" for what a cut loses."""
    return (f"{len(paths)} file{'' if len(paths) == 1 else 's'}, "
            f"{sum(sizes):,} bytes")
