"""Gemini CLI's folder trust (`checkPathTrust`), read-only."""

from __future__ import annotations

import contextlib
import os
from enum import StrEnum

from .jsonc import read_json_file
from .nodecompat import dirname, is_subpath, resolve


class TrustLevel(StrEnum):
    TRUST_FOLDER = "TRUST_FOLDER"
    TRUST_PARENT = "TRUST_PARENT"
    DO_NOT_TRUST = "DO_NOT_TRUST"


class TrustDecision:
    def __init__(self, trusted: bool | None, source: str | None, rule: str | None = None):
        self.trusted = trusted
        self.source = source
        self.rule = rule


def trusted_folders_path(home: str) -> str:
    return os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        home, ".gemini", "trustedFolders.json")


def check_path_trust(path: str, home: str, *, folder_trust_enabled: bool = True) -> TrustDecision:
    """Trust as Gemini CLI decides it; `trusted=None` means no rule matched."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return TrustDecision(True, "env")
    if not folder_trust_enabled:
        return TrustDecision(True, None)
    rules = read_json_file(trusted_folders_path(home))
    if not isinstance(rules, dict):
        return TrustDecision(None, None)
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):
        target = resolve(path)
    best: tuple[int, bool, str] | None = None
    for key, level in rules.items():
        if level not in TrustLevel.__members__:
            continue
        rule_path = resolve(key)
        with contextlib.suppress(OSError, ValueError):
            rule_path = os.path.realpath(rule_path)
        effective = dirname(rule_path) if level == "TRUST_PARENT" else rule_path
        if is_subpath(effective, target) and (best is None or len(effective) > best[0]):
            best = (len(effective), level != "DO_NOT_TRUST", key)
    if best is None:
        return TrustDecision(None, None)
    return TrustDecision(best[1], "file", best[2])


def decide_trust(cwd: str, home: str, *, explicit: bool | None,
                 folder_trust_enabled: bool) -> tuple[bool, str | None]:
    """The trust Memory Lens uses: an explicit choice, else Gemini CLI's rules, else trusted.

    Gemini CLI asks the user when no rule matches; we assume the answer is "trust" so the
    preview shows what a user who accepts will get (README).
    """
    if explicit is not None:
        return explicit, "setting"
    decision = check_path_trust(cwd, home, folder_trust_enabled=folder_trust_enabled)
    if decision.trusted is None:
        return True, "assumed"
    return decision.trusted, decision.source
