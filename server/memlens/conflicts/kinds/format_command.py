"""`format-command`: the command that formats the code.

Reads "format with `pnpm format`", "format the code: `ruff format`", "formatter: `black
.`". Two commands on one line or a hedge reads nothing."""

from __future__ import annotations

from memlens.conflicts.commands import START, CommandKind

PHRASE = (START + r"(?:(?:to\s+)?format(?:\s+(?:the\s+)?code)?|format(?:ting)?\s+"
          r"command|formatter\s*(?=:)|formatting\s*(?=:)),?")


class FormatCommand(CommandKind):
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Format with `pnpm format`.", "format command (js-script)", "pnpm format"),
        ("- Format the code: `ruff format`", "format command (python)", "ruff format"),
        ("Formatter: `black .`", "format command (python)", "black"),
        ("Format code with `npx prettier --write .`", "format command (js)", "prettier"),
    )
    near_misses: tuple[str, ...] = (
        "- Check formatting: `bun run format:check`",
        "Format with `black` or `ruff format`.",
        "Format dates with `Intl.DateTimeFormat`.",
        "The format of `CHANGELOG.md` is Keep a Changelog.",
    )

    def __init__(self) -> None:
        super().__init__("format-command", "format command", PHRASE)
