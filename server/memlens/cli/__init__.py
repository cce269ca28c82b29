"""`memlens`: the engine on the command line (SPEC §7).

Errors are one line on stderr and exit status 2, never a traceback. Heavy modules (the
language server, google-genai) are imported only by the subcommands that need them: the
commands that run an agent live in agent_commands.py, their terminal side in terminal.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__
from ..agents import AGENT_IDS
from ..output import display_path, escape_controls

if TYPE_CHECKING:
    from ..agents.base import MemoryAgent
    from ..protocol.memory import Diagnostic

EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _common_options() -> _Parser:
    common = _Parser(add_help=False)
    group = common.add_argument_group("memory settings (SPEC §3.1)")
    group.add_argument("--home", metavar="DIR",
                       help="home folder (default: $GEMINI_CLI_HOME, else your home)")
    group.add_argument("--file-name", action="append", metavar="NAME", dest="file_names",
                       help="context file name (repeatable; default GEMINI.md)")
    group.add_argument("--mode", choices=["jit", "classic"],
                       help="discovery mode (default jit, or experimental.jitContext)")
    group.add_argument("--max-dirs", type=int, metavar="N",
                       help="classic mode's downward folder budget (default 200; -1: no cap)")
    group.add_argument("--boundary-marker", action="append", metavar="M", dest="markers",
                       help="project boundary marker (repeatable; default .git)")
    group.add_argument("--no-boundary-markers", action="store_true",
                       help="use no boundary markers")
    group.add_argument("--import-format", choices=["tree", "flat"])
    group.add_argument("--include", action="append", metavar="DIR", dest="includes",
                       help="extra workspace folder (repeatable)")
    group.add_argument("--extension-context", action="append", metavar="FILE",
                       dest="extension_files", help="extension context file (repeatable)")
    group.add_argument("--respect-git-ignore", action=argparse.BooleanOptionalAction,
                       default=None,
                       help="skip git-ignored folders (and .git) in the classic search, as "
                            "Gemini CLI does by default (context.fileFiltering."
                            "respectGitIgnore)")
    trust = group.add_mutually_exclusive_group()
    trust.add_argument("--trusted", action="store_true",
                       help="trust the workspace (your decision; default: Gemini CLI's folder "
                            "trust, where a folder no rule matches is untrusted)")
    trust.add_argument("--untrusted", action="store_true",
                       help="treat the workspace as untrusted")
    group.add_argument("--max-context-chars", type=int, metavar="N")
    group.add_argument("--dialect", choices=list(AGENT_IDS), default=None,
                       help="an alias of --agent NAME")
    group.add_argument("--agent", type=_agent_spec, metavar="NAME[@VERSION]",
                       help=f"the agent whose view to show ({', '.join(AGENT_IDS)}) and its "
                            "version or profile (gemini@0.43, gemini@0.44+, gemini@0.61.0, "
                            "claude@2.1, codex@0.169); default: the Gemini CLI on PATH, else "
                            "gemini@0.44+ (MEMLENS_AGENTS pins another)")
    return common


def _agent_spec(value: str) -> tuple[str, str | None]:
    """`--agent NAME[@VERSION]` (SPEC §7)."""
    from ..agent_versions import parse_agent_spec

    try:
        return parse_agent_spec(value)
    except (ValueError, KeyError) as err:
        raise argparse.ArgumentTypeError(str(err).strip("'\"")) from None


def _apply_agent(args: argparse.Namespace) -> None:
    """Whose view: `--agent` (`--dialect` stays as an alias), else the first agent pinned by
    MEMLENS_AGENTS, else Gemini CLI (the chosen agent when nothing is pinned, SPEC §4)."""
    spec = getattr(args, "agent", None)
    if not hasattr(args, "dialect"):
        return
    from ..settings import env_agent_pins

    pins = env_agent_pins()
    args.agent_pin = None
    if spec is not None:
        args.dialect, version = spec
        args.agent_pin = f"{args.dialect}@{version}" if version else args.dialect
    elif args.dialect is not None:
        args.agent_pin = args.dialect
    else:
        first = pins[0].partition("@")[0] if pins else AGENT_IDS[0]
        args.dialect = first if first in AGENT_IDS else AGENT_IDS[0]
    if args.agent_pin == args.dialect:
        # A name without a version takes the version MEMLENS_AGENTS pins for that agent.
        args.agent_pin = next((p for p in pins if p.partition("@")[0] == args.dialect),
                              args.dialect)


def _profile_info(args: argparse.Namespace, settings: Any) -> Any:
    """Which profile serves the agent shown, and whether it was verified on that version."""
    from ..agent_versions import profile_for
    from ..protocol.memory import AgentProfileInfo

    profile = next((p for p in settings.chosen_agents if p.agent == args.dialect), None)
    if profile is None:
        profile = profile_for(args.dialect, None)
    return AgentProfileInfo(agent=profile.agent, profile=profile.name,
                            version=profile.profile or None, installed=profile.installed,
                            verified=profile.verified, note=profile.note)


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = _Parser(prog="memlens", description="See what your coding agent's memory is.")
    parser.add_argument("--version", action="version", version=f"memlens {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    show = commands.add_parser("show", parents=[common], help="merged context for PATH")
    show.add_argument("path", nargs="?", default=".", metavar="PATH")
    show.add_argument("--render", choices=["flat", "prompt"], default="flat")
    show.add_argument("--json", action="store_true")
    show.add_argument("--count-exact", action="store_true",
                      help="with --json: also count the tokens with the model's countTokens "
                           "(needs GEMINI_API_KEY)")

    listing = commands.add_parser("list", parents=[common], help="memory files in load order")
    listing.add_argument("path", nargs="?", default=".", metavar="PATH")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--count-exact", action="store_true",
                         help="also count the tokens with the model's countTokens "
                              "(needs GEMINI_API_KEY)")

    check = commands.add_parser("check", parents=[common], help="every diagnostic")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    check.add_argument("--max-indexed-folders", type=_positive, metavar="N",
                       help="folders the walk for subfolder memory reads at most "
                            "(memlens.maxIndexedFolders, default 50,000)")

    jit = commands.add_parser("jit", parents=[common], help="what touching TARGETs loads")
    jit.add_argument("--cwd", default=".", metavar="DIR")
    jit.add_argument("targets", nargs="+", metavar="TARGET")
    jit.add_argument("--json", action="store_true")

    schema = commands.add_parser("schema", help="JSON schemas of every --json output")
    schema.add_argument("name", nargs="?", metavar="MODEL")

    add = commands.add_parser("add", parents=[common], help="save_memory")
    add.add_argument("fact")
    add.add_argument("--scope", choices=["global", "project"], default=None,
                     help="where to save (default global)")
    add.add_argument("--json", action="store_true")
    add.add_argument("--memory-manager", action="store_true",
                     help="let the memory manager agent route the fact (needs a Gemini key)")
    skills = commands.add_parser("skills", parents=[common], help="skills and the inbox")
    skills.add_argument("action", nargs="?", default="list")
    skills.add_argument("name", nargs="?")
    skills.add_argument("--json", action="store_true")
    chat = commands.add_parser("chat", parents=[common], help="one chat turn in the terminal")
    chat.add_argument("prompt", nargs="?")
    chat.add_argument("--json", action="store_true")
    chat.add_argument("--approval-mode", choices=["manual", "autoEdit", "deny"])
    serve = commands.add_parser("serve", help="the language server (stdio)")
    serve.add_argument("--tcp", metavar="HOST:PORT")
    bench = commands.add_parser("bench", help="the benchmarks (SPEC §13)")
    bench.add_argument("--scale", type=float, default=1.0,
                       help="fraction of the full synthetic monorepo to generate")
    bench.add_argument("--json", action="store_true")
    from .diff_command import add_parser as add_diff_parser

    add_diff_parser(commands)
    return parser


def _directory(path: str) -> str:
    if not os.path.exists(path):
        raise UsageError(f"no such file or directory: {path}")
    if not os.path.isdir(path):
        raise UsageError(f"not a directory: {path}")
    return os.path.realpath(path)


def _settings(args: argparse.Namespace, cwd: str) -> Any:
    from ..agent_versions import detect_installed
    from ..model import MemorySettings
    from ..settings import load_settings

    if args.home is not None and not os.path.isdir(args.home):
        raise UsageError(f"home folder not found: {args.home}")
    cli: dict[str, Any] = {
        "context_file_names": args.file_names,
        "jit_context": None if args.mode is None else args.mode == "jit",
        "discovery_max_dirs": args.max_dirs,
        "memory_boundary_markers": [] if args.no_boundary_markers else args.markers,
        "import_format": args.import_format,
        "include_directories": args.includes,
        "load_memory_from_include_directories": True if args.includes else None,
        "extension_context_files": (None if args.extension_files is None else
                                    [os.path.abspath(f) for f in args.extension_files]),
        "respect_git_ignore": args.respect_git_ignore,
        "trusted": False if args.untrusted else True if args.trusted else None,
        "max_context_chars": args.max_context_chars,
    }
    pin = getattr(args, "agent_pin", None)
    if pin is not None:
        cli["agents"] = [pin]
    settings: MemorySettings = load_settings(cwd, home=args.home, cli=cli,
                                             installed=detect_installed())
    home = settings.home
    if not os.path.isdir(home) and args.home is None and "GEMINI_CLI_HOME" in os.environ:
        raise UsageError(f"home folder not found: {home}")
    for problem in settings.problems:
        if problem.origin == "cli":
            raise UsageError(f"{problem.setting} {problem.value!r} {problem.reason}")
    shown = next((p for p in settings.chosen_agents
                  if p.agent == getattr(args, "dialect", None)), None)
    if shown is not None and shown.installed and not shown.verified and shown.note:
        print(f"memlens: note: {shown.note}", file=sys.stderr)  # agent-version-unverified
    if getattr(args, "dialect", AGENT_IDS[0]) == AGENT_IDS[0]:
        _settings_notes(settings, cwd)
    return settings


def _settings_notes(settings: Any, cwd: str) -> None:
    """Tell the user, on stderr, what the settings left out and which folders they add."""
    from ..trust import decide_trust, how_to_trust, untrusted_reason

    trusted, source = decide_trust(cwd, settings.home, explicit=settings.trusted,
                                   folder_trust_enabled=settings.folder_trust_enabled)
    if not trusted:
        ignored = ("its .gemini/settings.json, project memory and skills are ignored; only "
                   "global, extension and private project memory load")
        if source == "setting":
            print(f"memlens: {cwd} is not trusted (--untrusted): {ignored}", file=sys.stderr)
        else:
            print(f"memlens: {cwd} is not trusted "
                  f"({untrusted_reason(source, settings.home)}): {ignored}; "
                  f"{how_to_trust(cwd, settings.home)}", file=sys.stderr)
    for problem in settings.problems:
        if problem.severity != "info":
            print(f"memlens: warning: {problem.message}", file=sys.stderr)
    if settings.include_directories:
        # JSON literals: a folder name cannot smuggle control characters onto the terminal.
        listed = "; ".join(f"{json.dumps(d, ensure_ascii=False)} from "
                           f"{settings.include_origins.get(d, 'settings')}"
                           for d in settings.include_directories)
        print(f"memlens: include directories: {listed}", file=sys.stderr)


def _print(text: str) -> None:
    sys.stdout.write(text)


def _print_json(value: Any) -> None:
    from ..output import json_safe

    sys.stdout.write(json.dumps(json_safe(value), ensure_ascii=False, indent=2) + "\n")


def _other_dialect(args: argparse.Namespace, cwd: str, settings: Any, what: str) -> int:
    """show / list for another agent's --dialect (claude, agents)."""
    from ..agents import agent_by_id
    from ..views import truncate

    agent = agent_by_id(args.dialect)
    memory = agent.load(cwd, settings)
    if what == "show":
        text, _ = truncate(memory.text, settings.max_context_chars, agent.receiver)
        if args.json:
            _print_json({"cwd": cwd, "dialect": agent.id, **agent.show_json(memory, text)})
        elif text:
            _print(text + "\n")
        else:
            print(f"memlens: {agent.nothing_loads}", file=sys.stderr)
        return 0
    if args.json:
        _print_json({"cwd": cwd, "dialect": agent.id, "files": [
            {"path": f.path, "tier": f.label, **({} if f.chars is None else {"chars": f.chars})}
            for f in memory.listing]})
        return 0
    for f in memory.listing:
        size = "" if f.chars is None else f"{f.chars:>9}  "
        _print(f"{escape_controls(f.label):<{agent.list_label_width}} {size}"
               f"{display_path(f.path)}\n")
    return 0


def _agent_show(args: argparse.Namespace, cwd: str, settings: Any) -> int:
    """`show --agent A --json` (SPEC §7): the agent's files at start and on read, and the
    exact strings it sends."""
    from ..agents import agent_by_id
    from ..views import agent_show

    _print_json(agent_show(agent_by_id(args.dialect), cwd, settings,
                           _profile_info(args, settings)).wire())
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from ..views import show

    cwd = _directory(args.path)
    settings = _settings(args, cwd)
    if args.json and getattr(args, "agent", None) is not None:
        return _agent_show(args, cwd, settings)
    if args.dialect != AGENT_IDS[0]:
        return _other_dialect(args, cwd, settings, "show")
    result = show(cwd, settings, with_diagnostics=args.json)
    if args.json and args.count_exact:
        from .budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        _print_json(result.wire())
        return 0
    text = result.content if args.render == "flat" else result.prompt + result.session_memory
    if text:
        _print(text + "\n")
    else:
        print("memlens: no memory files loaded", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ..views import list_files

    cwd = _directory(args.path)
    settings = _settings(args, cwd)
    if args.dialect != AGENT_IDS[0]:
        return _other_dialect(args, cwd, settings, "list")
    result = list_files(cwd, settings)
    if args.count_exact:
        from .budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        _print_json(result.wire())
        return 0
    from .budget_output import tokens_cell

    for f in result.files:
        chars = "-" if f.chars is None else str(f.chars)
        _print(f"{f.tier:<17} {chars:>9} {tokens_cell(f.tokens):>8}  {display_path(f.path)}\n")
    if result.exact_tokens is not None:
        _print(f"{'exact':<17} {'':>9} {result.exact_tokens:>8}  ({result.exact_model})\n")
    return 0


def _display_path(path: str) -> str:
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def _text_path(path: str) -> str:
    """A diagnostic's path for a text line: relative when inside the working folder, quoted
    when it holds a control character (output.display_path)."""
    return display_path(_display_path(path))


def _gh_data(text: str) -> str:
    """GitHub workflow-command escaping of a message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """GitHub workflow-command escaping of a property value (also ':' and ',')."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _check_agent_tree(agent: MemoryAgent, root: str, settings: Any) -> list[Diagnostic]:
    """Another agent's memory for `root`, checked: what it loads working there and in every
    subfolder its files put it to work in (Claude Code: each folder holding a CLAUDE.md)."""
    from ..discovery import MemoryEngine
    from ..fsread import FileReader
    from ..views import agent_hidden_check, workspace_files_named

    names = list(agent.file_names(settings))
    found = workspace_files_named(MemoryEngine(settings), [root], names)
    reader = FileReader()
    check = agent.check_workspace(settings, [root], [p for n in names for p in found[n]],
                                  reader)
    return [*check.diagnostics, *agent_hidden_check(agent, check, reader)]


def _profile_diagnostics(agent: MemoryAgent, root: str, settings: Any) -> list[Diagnostic]:
    """What the chosen profile of `agent` says about `root` (`agent-ignores-file`,
    `agent-version-unverified`)."""
    from ..agents import workspace_file_names
    from ..discovery import MemoryEngine
    from ..fsread import FileReader
    from ..views import profile_diagnostics, workspace_files_named

    reader = FileReader()
    names = workspace_file_names(settings)
    found = workspace_files_named(MemoryEngine(settings, reader), [root], names)
    return profile_diagnostics(settings, [root], [p for n in names for p in found[n]], reader,
                               only=agent.id)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _check_settings(args: argparse.Namespace, cwd: str) -> Any:
    settings = _settings(args, cwd)
    if args.max_indexed_folders is not None:
        settings = settings.model_copy(update={"max_indexed_folders": args.max_indexed_folders})
    return settings


def _with_detail(d: Diagnostic) -> str:
    """A terminal or CI log has room for the detail the Problems panel keeps apart."""
    return f"{d.message} — {d.detail}" if d.detail else d.message


def cmd_check(args: argparse.Namespace) -> int:
    from ..agents import agent_by_id, primary
    from ..views import check, check_file

    agent = agent_by_id(args.dialect)
    other = agent is not primary()
    diagnostics = []
    for raw in args.paths:
        if not os.path.exists(raw):
            raise UsageError(f"no such file or directory: {raw}")
        real = os.path.realpath(raw)
        if os.path.isdir(real):
            settings = _check_settings(args, real)
            diagnostics += _profile_diagnostics(agent, real, settings)
            if not other:
                diagnostics += check(real, settings)
            else:  # its own checks (Codex: its byte budget), and hidden content even in
                # files without references (AGENTS.md)
                diagnostics += _check_agent_tree(agent, real, settings)
        elif other and not agent.has_references:
            continue
        else:
            diagnostics += check_file(real, _check_settings(args, os.path.dirname(real)))
    unique = {(d.path, d.line, d.col, d.code): d for d in diagnostics}
    ordered = sorted(unique.values(), key=lambda d: d.sort_key())
    if args.format == "json":
        _print_json([d.wire() for d in ordered])
    elif args.format == "sarif":
        from ..sarif import sarif_log

        _print_json(sarif_log(ordered, [os.path.realpath(p) for p in args.paths]))
    elif args.format == "github":
        for d in ordered:
            level = {"error": "error", "warning": "warning", "info": "notice"}[d.severity]
            _print(f"::{level} file={_gh_property(_display_path(d.path))},line={d.line},"
                   f"col={d.col},endLine={d.end_line},endColumn={d.end_col},"
                   f"title={_gh_property(d.code)}::{_gh_data(_with_detail(d))}\n")
    else:
        for d in ordered:
            # One line each (SPEC §7): the short message, then its detail.
            _print(f"{_text_path(d.path)}:{d.line}:{d.col}: {d.severity}[{d.code}] "
                   f"{escape_controls(_with_detail(d))}\n")
        errors = sum(d.severity == "error" for d in ordered)
        warnings = sum(d.severity == "warning" for d in ordered)
        print(f"memlens: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return 1 if any(d.severity == "error" for d in ordered) else 0


def cmd_jit(args: argparse.Namespace) -> int:
    from ..agents import agent_by_id
    from ..views import agent_jit, jit

    cwd = _directory(args.cwd)
    settings = _settings(args, cwd)
    if args.json and getattr(args, "agent", None) is not None:
        from ..views import agent_jit_payloads

        _print_json([e.wire() for e in agent_jit_payloads(agent_by_id(args.dialect), cwd,
                                                          args.targets, settings)])
        return 0
    if args.dialect != AGENT_IDS[0]:
        entries = agent_jit(agent_by_id(args.dialect), cwd, args.targets, settings)
    else:
        if not settings.jit_context:
            print("memlens: classic mode loads no memory just in time", file=sys.stderr)
        entries = jit(cwd, args.targets, settings)
    if args.json:
        _print_json([e.wire() for e in entries])
        return 0
    text = "".join(e.context for e in entries)
    if text:
        _print(text + "\n")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter

    from ..model import MemorySettings
    from ..protocol.context_diff import DiffResult
    from ..protocol.memory import (
        AgentJitEntry,
        AgentShowResult,
        Diagnostic,
        JitEntry,
        ListResult,
        ShowResult,
    )

    models: dict[str, Any] = {
        "ShowResult": ShowResult, "ListResult": ListResult, "JitResult": list[JitEntry],
        "AgentShowResult": AgentShowResult, "AgentJitResult": list[AgentJitEntry],
        "CheckResult": list[Diagnostic], "Diagnostic": Diagnostic,
        "MemorySettings": MemorySettings, "DiffResult": DiffResult,
    }
    if args.name is not None and args.name not in models:
        raise UsageError(f"unknown model {args.name!r}; choose from {', '.join(models)}")
    chosen = {args.name: models[args.name]} if args.name else models
    _print_json({name: TypeAdapter(kind).json_schema(by_alias=True)
                 for name, kind in chosen.items()})
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "bench" / "run.py").is_file() and str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    try:
        from bench.run import main as bench_main  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise UsageError("the benchmarks live in the source checkout: run it from the "
                         "project's root folder") from err
    return int(bench_main(scale=args.scale, as_json=args.json))


def cmd_chat(args: argparse.Namespace) -> int:
    from .agent_commands import run_chat

    prompt = args.prompt
    if prompt is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("give a PROMPT (or pipe one on standard input)")
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    cwd = _directory(".")
    settings = _settings(args, cwd)
    return run_chat(cwd, settings, prompt, as_json=args.json, approval_mode=args.approval_mode)


def cmd_add(args: argparse.Namespace) -> int:
    from ..writing import EMPTY_FACT_ERROR, Scope, memory_target, save_memory

    if not args.fact.strip():
        raise UsageError(EMPTY_FACT_ERROR)
    cwd = _directory(".")
    settings = _settings(args, cwd)
    if args.memory_manager or settings.memory_manager:
        from .agent_commands import run_managed_add

        return run_managed_add(cwd, settings, args.fact, args.scope)
    scope: Scope = "project" if args.scope == "project" else "global"
    path = memory_target(settings.home, settings.context_file_names, cwd, scope)
    outcome = save_memory(args.fact, path, scope, home=settings.home)
    if args.json:
        _print(outcome.llm_content + "\n")
    elif outcome.success:
        _print(outcome.return_display + "\n")
    else:
        print(outcome.return_display, file=sys.stderr)
    return 0 if outcome.success else 1


def cmd_skills(args: argparse.Namespace) -> int:
    from .. import inbox
    from ..protocol.skills import InboxEntry, SkillEntry
    from ..skills import discover_skills
    from ..trust import decide_trust

    action = args.action
    if action not in ("list", "inbox", "accept", "reject", "extract"):
        raise UsageError(f"unknown skills action {action!r} (list, inbox, accept, reject, "
                         "extract)")
    cwd = _directory(".")
    settings = _settings(args, cwd)
    home = settings.home
    # Workspace skills load only in a trusted folder (Gemini CLI's folder trust).
    trusted, _ = decide_trust(cwd, home, explicit=settings.trusted,
                              folder_trust_enabled=settings.folder_trust_enabled)
    if action == "list":
        skills = [SkillEntry(**s.to_dict(), tier=tier)
                  for s, tier in discover_skills(home, cwd, trusted)]
        if args.json:
            _print_json([s.wire() for s in skills])
        else:
            for item in skills:
                _print(f"{escape_controls(item.name)} ({item.tier}) — "
                       f"{escape_controls(item.description)}\n"
                       f"  {display_path(item.location)}\n")
        return 0
    if action == "inbox":
        items = inbox.list_inbox(home, cwd)
        if args.json:
            _print_json([InboxEntry(name=i.name, path=i.path, description=i.description,
                                    problems=i.problems).wire() for i in items])
        else:
            for i in items:
                status = f"{len(i.problems)} problem(s)" if i.problems else "ready to accept"
                _print(f"{escape_controls(i.name)} — {escape_controls(i.description)} "
                       f"[{status}]\n  {display_path(i.path)}\n")
            if not items:
                print("memlens: the skills inbox is empty", file=sys.stderr)
        return 0
    if action in ("accept", "reject"):
        if not args.name:
            raise UsageError(f"'memlens skills {action}' needs a skill NAME")
        try:
            if action == "accept":
                target = inbox.accept(home, cwd, args.name)
                _print(f"Accepted {escape_controls(args.name)}: {display_path(target)}\n")
            else:
                inbox.reject(home, cwd, args.name)
                _print(f"Rejected {escape_controls(args.name)}\n")
        except inbox.InboxError as err:
            raise UsageError(str(err)) from err
        return 0
    if action == "extract":
        from .agent_commands import run_extraction

        return run_extraction(cwd, settings, as_json=args.json)
    raise UsageError(f"unknown skills action {action!r} (list, inbox, accept, reject, "
                     "extract)")


def cmd_not_yet(args: argparse.Namespace) -> int:
    raise UsageError(f"'memlens {args.command}' is not yet available in this version")


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from ..lsp.server import create_server

    logging.basicConfig(level=os.environ.get("MEMLENS_LOG_LEVEL", "WARNING"),
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if "MEMLENS_LOG_LEVEL" not in os.environ:
        # The editor shows stderr in its output channel: pygls's protocol chatter ("Cancel
        # notification for unknown message id", a late response) is noise there, not news.
        logging.getLogger("pygls").setLevel(logging.ERROR)
    from ..lsp.chat import install_log_redaction

    server = create_server()
    install_log_redaction(server)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        server.start_tcp(host, int(port))
        return 0
    return server.start_io()


def cmd_diff(args: argparse.Namespace) -> int:
    from .diff_command import run_diff

    return run_diff(args)


HANDLERS = {"show": cmd_show, "list": cmd_list, "check": cmd_check, "jit": cmd_jit,
            "schema": cmd_schema, "bench": cmd_bench, "serve": cmd_serve, "chat": cmd_chat,
            "add": cmd_add, "skills": cmd_skills}
HANDLERS["diff"] = cmd_diff


_OPTION_OF = {"max_context_chars": "--max-context-chars", "discovery_max_dirs": "--max-dirs",
              "context_file_names": "--file-name", "import_format": "--import-format"}


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic scans every installed distribution for plugins on first use; we use none.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # A name that is not UTF-8 is written as its own bytes (text output of show / jit, which
    # must be the agent's exact string), never a crash; JSON and line-based output escape it.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        _apply_agent(args)
        handler = HANDLERS.get(args.command, cmd_not_yet)
        return handler(args)
    except UsageError as err:
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
