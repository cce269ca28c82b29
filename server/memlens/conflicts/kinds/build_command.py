"""`build-command`: the command that builds the project.

Reads "build with `pnpm build`", "to build: `make`"... "build command: `cargo build`". A
qualified build ("docs", "release", "the Docker image"), two commands on one line, or a hedge
reads nothing."""

from __future__ import annotations

from memlens.conflicts.commands import START, CommandKind

PHRASE = (START + r"(?:(?:to\s+)?build(?:\s+the\s+project)?|build\s+command|"
          r"building\s*(?=:)),?")


class BuildCommand(CommandKind):
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Build with `pnpm build`.", "build command (js-script)", "pnpm build"),
        ("- To build the project: `npm run build`", "build command (js-script)", "npm build"),
        ("Build command: `cargo build --release`", "build command (rust)", "cargo build"),
    )
    near_misses: tuple[str, ...] = (
        "Build the docs with `mkdocs build`.",
        "Build with `pnpm build` or `pnpm build:prod`.",
        "Build the Docker image with `make image`.",
        "Never build with `npm run build` in CI.",
    )

    def __init__(self) -> None:
        super().__init__("build-command", "build command", PHRASE)
