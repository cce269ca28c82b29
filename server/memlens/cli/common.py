"""What every `memlens` command shares: the usage error, the memory-settings options
(docs/reference.md "The command line") and `--agent`, the settings they resolve to (with the notes
printed on stderr), and output.

Nothing heavy is imported here: each command imports the engine parts it needs when it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from memlens.agents import AGENT_IDS

EXIT_USAGE = 2
PIN_PROBLEM = "settings-invalid-agent"  # a MEMLENS_AGENTS / memlens.agents pin dropped


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def common_options() -> Parser:
    common = Parser(add_help=False)
    group = common.add_argument_group("memory settings")
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
    group.add_argument("--agent", type=agent_spec, metavar="NAME[@VERSION]",
                       help=f"the agent whose view to show ({', '.join(AGENT_IDS)}) and its "
                            "version or profile (gemini@0.43, gemini@0.44+, gemini@0.61.0, "
                            "claude@2.1, codex@0.169); default: the agents on PATH and every "
                            "agent whose files apply here (MEMLENS_AGENTS pins them)")
    return common


def agent_spec(value: str) -> tuple[str, str | None]:
    """`--agent NAME[@VERSION]` (docs/reference.md "The command line")."""
    from memlens.agent_versions import parse_agent_spec

    try:
        return parse_agent_spec(value)
    except (ValueError, KeyError) as err:
        raise argparse.ArgumentTypeError(str(err).strip("'\"")) from None


def apply_agent(args: argparse.Namespace) -> None:
    """Whose view (`args.agent_id`) and the pin that chooses its profile (`args.agent_pin`):
    `--agent`, else the first agent pinned by MEMLENS_AGENTS. With neither
    (`args.agent_default`), the agent shown is decided per folder (`shown_agent`: the first
    agent in use or with files there); `agent_id` holds Gemini CLI until then, the agent of
    the commands that are its own (add, chat, skills). Commands without the common options
    have none."""
    if not hasattr(args, "agent"):
        return
    from memlens.agents.gemini.settings import env_agent_pins

    pins = env_agent_pins()
    args.agent_pin = None
    args.agent_default = False
    if args.agent is not None:
        args.agent_id, version = args.agent
        args.agent_pin = f"{args.agent_id}@{version}" if version else args.agent_id
    else:
        first = pins[0].partition("@")[0] if pins else None
        args.agent_default = first not in AGENT_IDS
        args.agent_id = "gemini" if first is None or args.agent_default else first
    if args.agent_pin == args.agent_id:
        # A name without a version takes the version MEMLENS_AGENTS pins for that agent.
        args.agent_pin = next((p for p in pins if p.partition("@")[0] == args.agent_id),
                              args.agent_id)


def shows_gemini(args: argparse.Namespace) -> bool:
    """The agent shown is Gemini CLI, whose own output applies: its commands (add, chat,
    skills), `show --json`'s ShowResult schema and `--render prompt`, its JIT and check
    output (a command without the common options is one of its own)."""
    return bool(getattr(args, "agent_id", "gemini") == "gemini")


def profile_info(args: argparse.Namespace, settings: Any) -> Any:
    """Which profile serves the agent shown, and whether it was verified on that version."""
    from memlens.agent_versions import profile_for
    from memlens.protocol.memory import AgentProfileInfo

    profile = next((p for p in settings.chosen_agents if p.agent == args.agent_id), None)
    if profile is None:
        profile = profile_for(args.agent_id, None)
    return AgentProfileInfo(agent=profile.agent, profile=profile.name,
                            version=profile.profile or None, installed=profile.installed,
                            verified=profile.verified, note=profile.note)


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def directory(path: str) -> str:
    if not os.path.exists(path):
        raise UsageError(f"no such file or directory: {path}")
    if not os.path.isdir(path):
        raise UsageError(f"not a directory: {path}")
    return os.path.realpath(path)


def settings_for(args: argparse.Namespace, cwd: str, *, notes: bool = True) -> Any:
    """The settings in force for `cwd` (docs/reference.md "The command line") with the command
    line's options on top. `notes`: print Gemini CLI's notes (trust, settings problems) now; a
    command covering several agents prints them itself (`gemini_notes`) once it knows Gemini CLI is
    one."""
    from memlens.agent_versions import detect_installed
    from memlens.agents.gemini.settings import load_settings
    from memlens.model import MemorySettings

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
    if args.mode == "classic" and settings.gemini_profile == "0.44+":
        # The option would otherwise be dropped in silence (model.py's profile rules).
        print("memlens: note: --mode classic: Gemini CLI 0.44 and later load memory just in "
              "time only (the classic search is gone); showing that. --agent gemini@0.43 "
              "shows the classic search", file=sys.stderr)
    for problem in settings.problems:
        if problem.code == PIN_PROBLEM:  # a bad pin concerns every agent, not Gemini CLI's
            print(f"memlens: warning: {problem.message}", file=sys.stderr)
    shown = next((p for p in settings.chosen_agents
                  if p.agent == getattr(args, "agent_id", None)), None)
    if shown is not None and shown.installed and not shown.verified and shown.note:
        print(f"memlens: note: {shown.note}", file=sys.stderr)  # agent-version-unverified
    if notes and shows_gemini(args):  # Gemini CLI's own commands (add, chat, skills)
        gemini_notes(settings, cwd)
    return settings


def in_use(args: argparse.Namespace, settings: Any) -> list[str]:
    """The agents in use: the one `--agent` names; else those pinned, else those on PATH (in
    the registry's order)."""
    from memlens.workspace.agents_here import chosen_ids

    if args.agent is not None:
        return [args.agent_id]
    pinned = [] if getattr(args, "agent_default", False) else [args.agent_id]
    return list(dict.fromkeys([*pinned, *chosen_ids(settings)]))


def covered_agents(args: argparse.Namespace, cwd: str, settings: Any) -> list[str]:
    """The agents a command covers in `cwd`: the one `--agent` names; without it the agents
    in use and every agent whose files apply there: in the folder, below it, or above it
    where the agent looks, or in HOME (workspace/agents_here.py). None at all: one line on
    stderr says so and names `--agent`. Asked once per folder and run."""
    if args.agent is not None:
        return [args.agent_id]
    known: dict[str, list[str]] = args.__dict__.setdefault("covered_in", {})
    if cwd not in known:
        from memlens.workspace.agents_here import agents_shown, agents_with_files

        known[cwd] = agents_shown(in_use(args, settings), cwd, settings,
                                  agents_with_files([cwd], settings))
        if not known[cwd]:
            print(f"memlens: no agent here: none is on PATH or pinned (MEMLENS_AGENTS), and "
                  f"no agent's memory files apply in {_home_relative(cwd)}; --agent NAME "
                  f"shows one ({', '.join(AGENT_IDS)})", file=sys.stderr)
    return known[cwd]


def shown_agent(args: argparse.Namespace, cwd: str, settings: Any) -> str | None:
    """The one agent a single-agent output shows in `cwd` (JSON, `jit`): `--agent`'s, else the
    first pinned, else the first of `covered_agents` (None: no agent here; `args.agent_id`
    stays Gemini CLI, as `apply_agent` left it, whose JSON schema an empty answer then
    uses)."""
    if not getattr(args, "agent_default", False):
        return str(args.agent_id)
    agents = covered_agents(args, cwd, settings)
    if agents:
        args.agent_id = agents[0]
    return agents[0] if agents else None


def profile_name(agent_id: str, settings: Any) -> str:
    """What `--agent` takes for the profile serving `agent_id` (`gemini@0.44+`, `claude@2.1`,
    `agents`)."""
    from memlens.agent_versions import profile_for

    profile = next((p for p in settings.chosen_agents if p.agent == agent_id), None)
    return str((profile or profile_for(agent_id, None)).name)


def section_header(agent_id: str, settings: Any) -> str:
    """The line that starts one agent's section when a command covers several."""
    from memlens.agents import agent_by_id

    return f"==> {agent_by_id(agent_id).label} ({profile_name(agent_id, settings)}) <=="


def nothing_note(args: argparse.Namespace, cwd: str, settings: Any) -> None:
    """The agent shown loads nothing here: say so, and when other agents' files are here,
    whose they are and the option that shows them (one line)."""
    from memlens.agents import agent_by_id
    from memlens.workspace.agents_here import agents_with_files

    line = f"memlens: {agent_by_id(args.agent_id).nothing_loads}"
    others = [a for a in agents_with_files([cwd], settings) if a != args.agent_id]
    if others:
        options = " or ".join(f"--agent {a}" for a in others)
        labels = " and ".join(agent_by_id(a).label for a in others)
        line += f"; {labels} files are here: {options} (no --agent: every agent)"
    print(line, file=sys.stderr)


def _home_relative(path: str) -> str:
    real_home = os.path.expanduser("~")
    if real_home not in ("", "/") and path.startswith(real_home.rstrip("/") + "/"):
        return "~" + path[len(real_home.rstrip("/")):]
    return path


def trust_note(cwd: str, settings: Any, *, checking: bool = False) -> str | None:
    """One short line when Gemini CLI would not trust `cwd` (None when it would)."""
    from memlens.agents.gemini.trust import NO_RULE, decide_trust, trusted_folders_path

    trusted, source = decide_trust(cwd, settings.home, explicit=settings.trusted,
                                   folder_trust_enabled=settings.folder_trust_enabled)
    if trusted:
        return None
    rules = _home_relative(trusted_folders_path(settings.home))
    why = {"setting": "--untrusted", NO_RULE: f"no rule in {rules}",
           "file": f"DO_NOT_TRUST in {rules}"}.get(source or "", "marked untrusted")
    if checking:
        return (f"memlens: note: {cwd} is not trusted ({why}): checked anyway; Gemini CLI will "
                "not load its project memory until you trust it")
    return (f"memlens: {cwd} is not trusted ({why}): Gemini CLI loads no project memory or "
            "settings here; --trusted to see them")


def gemini_notes(settings: Any, cwd: str, *, checking: bool = False) -> None:
    """Tell the user, on stderr, what the settings left out and which folders they add."""
    note = trust_note(cwd, settings, checking=checking)
    if note is not None:
        print(note, file=sys.stderr)
    for problem in settings.problems:
        if problem.severity != "info" and problem.code != PIN_PROBLEM:
            print(f"memlens: warning: {problem.message}", file=sys.stderr)
    if settings.include_directories:
        # JSON literals: a folder name cannot smuggle control characters onto the terminal.
        listed = "; ".join(f"{json.dumps(d, ensure_ascii=False)} from "
                           f"{settings.include_origins.get(d, 'settings')}"
                           for d in settings.include_directories)
        print(f"memlens: include directories: {listed}", file=sys.stderr)


def print_text(text: str) -> None:
    sys.stdout.write(text)


def print_json(value: Any) -> None:
    from memlens.files.output import json_safe

    sys.stdout.write(json.dumps(json_safe(value), ensure_ascii=False, indent=2) + "\n")
