"""`lint-command`: the command that lints.

Reads "lint with `pnpm lint`", "run the linter: `ruff check .`", "lint command: `make
lint`". Two commands on one line or a hedge reads nothing."""

from __future__ import annotations

from memlens.conflicts.commands import START, CommandKind

PHRASE = (START + r"(?:(?:to\s+)?lint(?:\s+the\s+code)?|run\s+the\s+linters?|"
          r"lint(?:ing)?\s+command|linting\s*(?=:)|linters?\s*(?=:)),?")


class LintCommand(CommandKind):
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Lint with `pnpm lint`.", "lint command (js-script)", "pnpm lint"),
        ("- Run the linter: `ruff check .`", "lint command (python)", "ruff check"),
        ("Lint command: `make lint`", "lint command (make)", "make lint"),
    )
    near_misses: tuple[str, ...] = (
        "Lint with `pnpm lint` and `pnpm typecheck`.",
        "Lint the docs with `markdownlint`.",
        "Fix lint errors reported by `eslint` before committing, unless they are in tests.",
    )

    def __init__(self) -> None:
        super().__init__("lint-command", "lint command", PHRASE)
