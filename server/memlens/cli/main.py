"""`memlens`'s entry point: the parser, built from each command's own module, and the
dispatch. Errors are one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator, Sequence

from memlens import __version__
from memlens.cli.common import EXIT_USAGE, Parser, UsageError, apply_agent, common_options
from memlens.files.output import display_path, escape_controls
from memlens.files.secrets import install_stream_redaction
from memlens.files.tree import one_walk

# Each command is a module of this package with `add_parser(commands, common, summary)` and
# `run(args)`. Only the module of the command being run is imported (the others are listed by
# their summary), and a command's engine imports happen in its `run`.
COMMANDS = {
    "show": "what each agent reads at start-up in PATH, merged as it receives it",
    "list": "the memory files each agent loads, in order, with their sizes",
    "check": "every problem in the memory files (text, JSON, SARIF, GitHub)",
    "jit": "what an agent loads later when a tool reads or writes TARGET",
    "schema": "JSON schemas of every --json output",
    "add": "save a fact to GEMINI.md, as Gemini CLI's save_memory does",
    "skills": "the skills each agent offers, and Gemini CLI's skills inbox",
    "chat": "one chat turn in the terminal",
    "serve": "the language server (stdio)",
    "mcp": "the Model Context Protocol server (stdio): what each agent reads, for agents",
    "bench": "the speed benchmarks (from the source tree)",
    "diff": "what each agent reads, per folder, between two git revisions",
    "verify": "run your installed agents offline on this workspace and compare what they "
              "send with the prediction",
    "conflicts": "rules one agent receives together that disagree, and which it sees last",
    "report": "every memory file x every agent, and each agent's context, as HTML, JSON or "
              "Markdown",
}
_MODULE_OF = {"list": "listing"}
# Commands that write nothing a walk could see: each lists a folder once per run, whichever
# agent walks it (files/tree.py).
_ONE_WALK = frozenset({"show", "list", "check", "jit", "report", "conflicts"})

_OPTION_OF = {"max_context_chars": "--max-context-chars", "discovery_max_dirs": "--max-dirs",
              "context_file_names": "--file-name", "import_format": "--import-format"}


# A read-only command keeps every folder's listing until it ends and makes almost no garbage
# cycles, while the cycle collector, at its default pace, walks the young objects every 700
# allocations and the whole growing heap now and then: about a tenth of `check`'s CPU time
# with every agent at 100,000 files (`memlens bench`). Within such a command it runs every
# this many allocations.
_COLLECT_EVERY = 100_000


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Within the block: what was loaded before it (modules, classes) is never walked by the
    cycle collector, which runs once per `_COLLECT_EVERY` new objects; as before after it."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(_COLLECT_EVERY, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _module(command: str) -> object:
    return importlib.import_module(f"memlens.cli.{_MODULE_OF.get(command, command)}")


class _CommandsHelp(argparse.HelpFormatter):
    """The help column starts past the longest command name, listed under COMMAND (argparse
    measures the names one indent short)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog)
        self._action_max_length = 4 + max(len(c) for c in COMMANDS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser: the command `only` with its own arguments, every other command by name and
    summary (`memlens --help` lists them; none of them is what runs)."""
    common = common_options()
    parser = Parser(prog="memlens", description="See what your coding agent's memory is.",
                    formatter_class=_CommandsHelp)
    parser.add_argument("--version", action="version", version=f"memlens {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for command, summary in COMMANDS.items():
        if command == only:
            _module(command).add_parser(commands, common, summary)  # type: ignore[attr-defined]
        else:
            commands.add_parser(command, help=summary)
    return parser


def commands_list() -> str:
    """Every command with its one-line description, one a line (`memlens` alone prints it)."""
    import textwrap

    width = max(len(c) for c in COMMANDS)
    indent = " " * (width + 4)
    return "commands:\n" + "".join(
        textwrap.fill(summary, 79, initial_indent=f"  {c:<{width}}  ",
                      subsequent_indent=indent) + "\n"
        for c, summary in COMMANDS.items())


def _command_in(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option), when it is one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic scans every installed distribution for plugins on first use; we use none.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # A name that is not UTF-8 is written as its own bytes (text output of show / jit, which
    # must be the agent's exact string), never a crash; JSON and line-based output escape it.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")
    words = sys.argv[1:] if argv is None else list(argv)
    command = _command_in(words)
    # No key the process knows (GEMINI_API_KEY, GOOGLE_API_KEY, a value that environment
    # expansion put into a context file name) reaches the terminal or a CI log; `serve`
    # redacts its own stderr (its stdout is JSON-RPC).
    # `mcp` redacts its answers (mcp/answers.py): its stdout is JSON-RPC too.
    install_stream_redaction(stdout=command not in ("serve", "mcp"), stderr=command != "serve")
    parser = build_parser(command)
    try:
        args = parser.parse_args(words)
        read_only = args.command in _ONE_WALK
        with (one_walk() if read_only else contextlib.nullcontext(),
              _few_collections() if read_only else contextlib.nullcontext()):
            apply_agent(args)
            return int(_module(args.command).run(args))  # type: ignore[attr-defined]
    except UsageError as err:
        if command is None and str(err).endswith("required: COMMAND"):
            # No command given (`memlens` alone, or options only): what there is to run.
            sys.stderr.write(parser.format_usage() + "\n" + commands_list() + "\n")
            print("memlens: error: no command given; memlens COMMAND --help describes one",
                  file=sys.stderr)
            return EXIT_USAGE
        print(f"memlens: error: {escape_controls(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as err:  # pydantic's ValidationError: a setting out of range
        errors = getattr(err, "errors", None)
        if callable(errors):
            first = errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or "setting"
            where = _OPTION_OF.get(field, field)
            print(f"memlens: error: invalid {where}: {first.get('msg')}", file=sys.stderr)
        else:
            print(f"memlens: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as err:
        where = display_path(str(err.filename)) if err.filename else ""
        print(f"memlens: error: {err.strerror or err}: {where}".rstrip(": "), file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
