"""`test-command`: the command that runs the tests.

Reads "run tests with `pnpm test`", "to run the tests: `pytest`", "test command: `make
test`", "tests: `cargo test`". A qualified suite ("unit", "e2e", "a single test"), two
commands on one line, or a hedge reads nothing; see conflicts/commands.py for which commands
are compared."""

from __future__ import annotations

from memlens.conflicts.commands import START, CommandKind

PHRASE = (START + r"(?:(?:to\s+)?run(?:ning)?\s+(?:the\s+)?tests?|test\s+command|"
          r"tests?(?:\*\*|__)?\s*(?=:)|testing(?:\*\*|__)?\s*(?=:))(?:\s+suite)?,?")


class TestCommand(CommandKind):
    __test__ = False  # not a pytest class
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Run tests with `pnpm test`.", "test command (js-script)", "pnpm test"),
        ("- To run the tests: `uv run pytest -q`", "test command (python)", "pytest"),
        ("Test command: `make test`", "test command (make)", "make test"),
        ("**Tests**: `cargo test`", "test command (rust)", "cargo test"),
        ("Run the tests with `npm run test`", "test command (js-script)", "npm test"),
    )
    near_misses: tuple[str, ...] = (
        "- Watch mode for tests: `pnpm test --watch`",
        "Run unit tests with `pnpm test:unit`.",
        "Run tests with `pytest` or `tox`.",
        "Run the e2e tests with `pnpm e2e`.",
        "If you changed the API, run tests with `pytest`.",
        "Run tests with `pnpm test` and lint with `pnpm lint`.",
        "Run a single test with `pytest -k name`.",
        "Test files live in `tests/`.",
    )

    def __init__(self) -> None:
        super().__init__("test-command", "test command", PHRASE)
