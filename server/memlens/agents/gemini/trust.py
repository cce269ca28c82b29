"""Gemini CLI's folder trust (`checkPathTrust`), read-only."""

from __future__ import annotations

import contextlib
import json
import os
from enum import StrEnum

from memlens.agents.gemini.jsonc import read_json_file
from memlens.files.nodecompat import dirname, is_subpath, to_absolute


class TrustLevel(StrEnum):
    TRUST_FOLDER = "TRUST_FOLDER"
    TRUST_PARENT = "TRUST_PARENT"
    DO_NOT_TRUST = "DO_NOT_TRUST"


NO_RULE = "no-rule"


class TrustDecision:
    def __init__(self, trusted: bool | None, source: str | None, rule: str | None = None):
        self.trusted = trusted
        self.source = source
        self.rule = rule


def trusted_folders_path(home: str) -> str:
    return os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        home, ".gemini", "trustedFolders.json")


def _real(path: str) -> str:
    """Gemini CLI's `getRealPath` then `normalizePath`: the real path when it exists."""
    with contextlib.suppress(OSError, ValueError):
        if os.path.exists(path):
            return to_absolute(os.path.realpath(path))
    return to_absolute(path)


def check_path_trust(path: str, home: str, *, folder_trust_enabled: bool = True) -> TrustDecision:
    """Trust as Gemini CLI decides it (`checkPathTrust`); `trusted=None` means no rule matched.

    Each rule's folder is its key made absolute (relative to the working folder) — for
    TRUST_PARENT, that folder's parent — followed through symlinks; of the rules whose folder
    holds `path`, the one with the longest key wins (the first of equal length), whatever its
    level. Two keys naming the same folder: the later level counts, at the earlier place."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE", "") == "true":
        return TrustDecision(True, "env")
    if not folder_trust_enabled:
        return TrustDecision(True, None)
    rules = read_json_file(trusted_folders_path(home))
    if not isinstance(rules, dict):
        return TrustDecision(None, None)
    normalized: dict[str, tuple[str, str]] = {}
    for key, level in rules.items():
        if level not in TrustLevel.__members__:
            continue
        rule_path = to_absolute(key)  # normalizePath: a backslash is a separator
        first = normalized.get(rule_path)
        normalized[rule_path] = (level, first[1] if first else key)
    target = _real(path)
    best: tuple[int, bool, str] | None = None
    for rule_path, (level, key) in normalized.items():
        effective = _real(dirname(rule_path) if level == "TRUST_PARENT" else rule_path)
        if is_subpath(effective, target) and (best is None or len(rule_path) > best[0]):
            best = (len(rule_path), level != "DO_NOT_TRUST", key)
    if best is None:
        return TrustDecision(None, None)
    return TrustDecision(best[1], "file", best[2])


EDITOR = "editor"


def decide_trust(cwd: str, home: str, *, explicit: bool | None, folder_trust_enabled: bool,
                 editor: bool | None = None) -> tuple[bool, str | None]:
    """The trust Memory Lens uses: an explicit choice, else the editor's, else Gemini CLI's
    rules.

    As in Gemini CLI, a folder no rule matches is untrusted ("no-rule") until the user trusts
    it: a rule in the trusted folders file, `GEMINI_CLI_TRUST_WORKSPACE=true`,
    `memlens --trusted`, or VS Code's workspace trust in the editor (`editor`). The editor's
    trust is the window's, so it is an upper bound: a folder that the trusted folders file
    marks DO_NOT_TRUST stays untrusted in a trusted window — Gemini CLI started there would
    not read its project memory, and would not even ask.
    """
    if explicit is not None:
        return explicit, "setting"
    if editor is False:
        return False, EDITOR
    decision = check_path_trust(cwd, home, folder_trust_enabled=folder_trust_enabled)
    if editor and not (decision.trusted is False and decision.source == "file"):
        return True, EDITOR
    if decision.trusted is None:
        return False, NO_RULE
    return decision.trusted, decision.source


def how_to_trust(cwd: str, home: str) -> str:
    """The ways a user trusts `cwd`, for the message that says it is not trusted."""
    rules = trusted_folders_path(home)
    return (f"to trust it, add {{{json.dumps(cwd)}: \"TRUST_FOLDER\"}} to {rules}, set "
            "GEMINI_CLI_TRUST_WORKSPACE=true, or pass --trusted")


def untrusted_reason(source: str | None, home: str) -> str:
    """Why `cwd` is untrusted, in words (`source` as `decide_trust` returns it)."""
    if source == NO_RULE:
        return f"no rule in {trusted_folders_path(home)} matches it"
    if source == "file":
        return f"{trusted_folders_path(home)} marks it DO_NOT_TRUST"
    if source == EDITOR:
        return "the editor does not trust the workspace (Restricted Mode)"
    return "the workspace is marked untrusted"


def restricted_notice(shown_files: int, source: str | None = None, home: str = "") -> str:
    """What an editor says about an untrusted folder: why its project memory is missing and
    what is shown anyway. VS Code's Restricted Mode, or (`source` "file") a DO_NOT_TRUST rule
    in Gemini CLI's trusted folders file, which holds even in a trusted window."""
    shown = (f"your global memory ({shown_files} file{'' if shown_files == 1 else 's'})"
             if shown_files else "nothing (you have no global memory)")
    if source == "file":
        return (f"Not trusted: {trusted_folders_path(home)} marks this folder DO_NOT_TRUST, so "
                f"its GEMINI.md files are not read (as Gemini CLI does). Shown anyway: {shown}. "
                "Change that rule to see its project memory.")
    return ("Restricted Mode: this folder is not trusted, so its GEMINI.md files are not "
            f"read (as Gemini CLI does). Shown anyway: {shown}. Trust the folder to see its "
            "project memory.")


def untrusted_label(source: str | None) -> str:
    """A few words for a lens or a status item: why this folder's project memory is not read."""
    return "untrusted by trustedFolders.json" if source == "file" else "Restricted Mode"


def rules_file_to_open(source: str | None, home: str) -> str | None:
    """The trusted folders file, when a DO_NOT_TRUST rule in it (not the editor) is why a
    folder is untrusted: that file, not VS Code's trust editor, is where the user changes it."""
    return trusted_folders_path(home) if source == "file" else None


def memory_summary(files: int, chars: int) -> str:
    """The one way Memory Lens counts memory: files loaded and the characters they bring
    (each file with its imports expanded; the merged context adds only source markers)."""
    return f"{files} memory file{'' if files == 1 else 's'} · {chars:,} chars"
