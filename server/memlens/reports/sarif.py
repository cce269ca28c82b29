"""`memlens check --format sarif`: diagnostics as one SARIF 2.1.0 log (OASIS standard), the
format code-scanning dashboards (GitHub code scanning, Azure DevOps) upload.

Pure mapping: one run; `tool.driver` is memlens with its version and a rule for every
diagnostic code Memory Lens has (`RULES`); each result has its rule, level (error, warning,
note for info), message (with the detail after " — "; its square brackets escaped, so a
name from disk is never an embedded link) and a physical location whose
`artifactLocation.uri` is relative to the repository holding the checked path (else the
checked folder) under `uriBaseId` `SRCROOT` (`ROOT2`, `ROOT3`… for more checked paths in other
repositories), or an absolute `file:` URI for a file outside them (HOME memory). Regions are
1-based; columns count Unicode code points (`columnKind: unicodeCodePoints`), as the CLI's.
"""

from __future__ import annotations

import os
import pathlib
import posixpath
import urllib.parse
from collections.abc import Sequence
from typing import Any

from memlens import __version__
from memlens.files.nodecompat import is_subpath
from memlens.files.roots import repository_root
from memlens.protocol.memory import Diagnostic

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"

# Every diagnostic code (docs/reference.md "Diagnostics") with its short description: the SARIF
# rules.
RULES: dict[str, str] = {
    "import-not-found": "An @import names a file that does not exist",
    "import-outside-root": "An @import reaches outside the project root (traversal, absolute "
                           "path, symlink escape)",
    "import-url": "An @import is a URL, which the agent never fetches",
    "import-cycle": "An @import closes an import cycle",
    "import-too-deep": "An @import stays literal text past the import depth limit",
    "import-unreadable": "An @import target is a directory, binary, not UTF-8 or unreadable",
    "import-in-prose": "An @word in prose that the agent tries to import",
    "import-diamond": "A file is imported more than once through different paths",
    "file-unreadable": "A memory file cannot be read (FIFO, permissions, binary, bad UTF-8)",
    "file-too-large": "A memory file or import is large enough to crowd every prompt",
    "folder-unreadable": "A folder the agent searches cannot be read",
    "search-budget-exhausted": "The agent's folder search stops before reaching memory files",
    "index-budget-exhausted": "Memory Lens stopped walking the workspace at its folder limit",
    "workspace-not-indexed": "A folder too broad to walk (the file system root, HOME)",
    "read-above-root": "A memory file outside the workspace or repository is read",
    "context-over-budget": "A folder's memory passes the token budget (--budget, "
                           "memlens.budget)",
    "context-truncated": "The merged context passes memlens.maxContextChars",
    "memory-duplicate-entry": "The same saved memory appears twice",
    "settings-invalid-file-name": "A context file name in settings.json is ignored",
    "settings-include-not-found": "An include directory in settings.json does not exist",
    "settings-file-name-path": "A context file name in settings.json is a relative path",
    "settings-include-home": "An include directory in settings.json contains HOME",
    "settings-include-directory": "An include directory in settings.json adds a folder",
    "settings-unreadable": "A settings.json cannot be read (not a regular file, too large, "
                           "nested too deeply, not JSON): it is ignored",
    "frontmatter-unreadable": "A rule's frontmatter cannot be read (nested too deeply, too "
                              "large)",
    "skill-invalid-yaml": "A SKILL.md frontmatter is not valid YAML",
    "skill-missing-field": "A SKILL.md lacks a required field",
    "skill-invalid-name": "A skill name breaks the naming rules",
    "skill-invalid-description": "A skill description is not valid",
    "skill-name-mismatch": "A skill name differs from its folder name",
    "skill-field-too-long": "A SKILL.md field is longer than allowed",
    "skill-unknown-field": "A SKILL.md frontmatter field the agent ignores",
    "skill-missing-section": "A SKILL.md lacks a recommended section",
    "skill-duplicate": "Two skills share a name; one is never offered",
    "skill-body-too-long": "A SKILL.md body is longer than recommended",
    "skill-not-offered": "An agent never lists this skill (it does not load, or is left out)",
    "skill-listing-over-budget": "An agent lists this skill by name only: its skills listing "
                                 "is past its budget",
    "memory-index-truncated": "Claude Code reads only the start of MEMORY.md",
    "memory-invalid-type": "A Claude Code memory topic file has an invalid type",
    "memory-link-not-found": "A Claude Code memory index links a missing file",
    "memory-not-indexed": "A Claude Code memory topic file no MEMORY.md pointer reaches",
    "memory-index-line-long": "A Claude Code memory index line is longer than Claude asks for",
    "memory-link-dangling": "A Claude Code memory's [[name]] link names no memory yet",
    "memory-folder-moved": "A project's settings move where Claude Code keeps its memory",
    "claude-settings-ignored": "Claude Code ignores a whole settings file: a key of a wrong type",
    "agent-version-unverified": "The installed agent is newer than the newest verified profile",
    "payload-budget-exceeded": "The agent cuts its memory at a byte budget; files are lost",
    "agent-ignores-file": "A memory file the chosen agent will not read",
    "agent-config-invalid": "The agent refuses to start with this configuration file",
    "copilot-frontmatter-invalid": "GitHub Copilot CLI cannot read an instructions file's "
                                   "frontmatter as YAML and falls back to its applyTo line",
    "copilot-applyto-invalid": "An applyTo glob GitHub Copilot CLI cannot parse (it matches "
                               "nothing)",
    "copilot-applyto-unmatched": "An applyTo that matches no file in the workspace",
    "vscode-chat-location-outside": "A VS Code chat instruction location (or a link in one) "
                                    "Memory Lens does not walk: outside the workspace, or "
                                    "home for the user's own settings, or a system folder",
    "vscode-chat-walk-truncated": "Memory Lens stopped walking VS Code chat's instruction "
                                  "locations at its budget",
    "hidden-text": "Invisible, bidi-control or tag characters the agent reads and a reviewer "
                   "cannot see",
    "hidden-comment": "An HTML comment an agent receives that rendered Markdown hides",
    "cursor-frontmatter-invalid": "A Cursor rule's frontmatter is malformed (Cursor convention)",
    "cursor-always-apply-string": "A Cursor rule's alwaysApply is not a boolean (\"true\" "
                                  "written as a string): it is never always applied",
    "cursor-unknown-key": "A Cursor rule's frontmatter key Cursor does not know",
    "cursor-glob-no-match": "A Cursor rule's glob matches no file in the workspace",
    "glob-budget-exceeded": "Globs Memory Lens does not match: past its cap per file, or past "
                            "its budget of glob × file matches per check",
    "cursor-rule-manual-only": "A Cursor rule with no alwaysApply, globs or description: "
                               "applied only when @-mentioned",
    "cursor-rule-outside-rules": "An .mdc rule outside .cursor/rules, which Cursor does not "
                                 "read",
    "cursor-rule-too-long": "A Cursor rule longer than the 500 lines Cursor's docs ask for",
    "cursor-rules-not-a-folder": ".cursor/rules written as a file, which Cursor ignores",
    "cursor-legacy-rules": "A legacy .cursorrules beside a .cursor/rules folder of rules",
    "antigravity-rule-too-long": "An Antigravity CLI rule file over its 12,000-character limit "
                                 "(convention)",
    "antigravity-duplicate-memory": "The same content reaches Antigravity CLI twice, through "
                                    "GEMINI.md and AGENTS.md (convention)",
    "instruction-conflict": "One agent receives two rules that set the same decision "
                            "differently",
    "agents-disagree": "Two agents working in the same folder are told different things",
    "opencode-config-invalid": "OpenCode refuses to start with this opencode.json",
    "opencode-instructions-outside": "opencode.json instructions that name files outside the "
                                     "project (OpenCode sends them; Memory Lens does not read "
                                     "them)",
    "opencode-instructions-remote": "An opencode.json instruction OpenCode fetches from the web",
    "opencode-instructions-walk-cut": "Memory Lens stopped listing an opencode.json glob's "
                                      "large tree",
    "opencode-name-dropped": "A CLAUDE.md or CONTEXT.md OpenCode drops when it starts where a "
                             "nested AGENTS.md is found first",
    "opencode-duplicate-instructions": "The same text reaches OpenCode twice (a copy or a link "
                                       "in its chain or instructions)",
    "pi-duplicate-context": "The same text reaches pi twice from two context files of its "
                            "chain (a link, a copy)",
}

LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _base(path: str) -> str:
    """The folder a checked path's results are relative to: its repository, else itself
    (a checked file: its folder)."""
    folder = path if os.path.isdir(path) else posixpath.dirname(path)
    return repository_root(folder) or folder


def _folder_uri(folder: str) -> str:
    return pathlib.PurePosixPath(folder).as_uri().rstrip("/") + "/"


def sarif_log(diagnostics: Sequence[Diagnostic], checked: Sequence[str]) -> dict[str, Any]:
    """The SARIF log of `diagnostics` found checking the paths `checked` (absolute)."""
    bases: dict[str, str] = {}  # folder → its uriBaseId
    for path in checked:
        folder = _base(path)
        if folder not in bases:
            bases[folder] = "SRCROOT" if not bases else f"ROOT{len(bases) + 1}"
    codes = list(RULES) + sorted({d.code for d in diagnostics} - set(RULES))
    index = {code: i for i, code in enumerate(codes)}
    rules = [{"id": code, "name": _rule_name(code),
              "shortDescription": {"text": RULES.get(code, code)}} for code in codes]
    results = [_result(d, index[d.code], bases) for d in diagnostics]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "memlens", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "originalUriBaseIds": {base_id: {"uri": _folder_uri(folder)}
                               for folder, base_id in bases.items()},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("-"))


def plain_message(text: str) -> str:
    """A result's message as SARIF plain text: there `[text](target)` is an embedded link
    that viewers render, so every square bracket — a message quotes file names and import
    paths from disk — is escaped with a backslash, as SARIF asks of brackets that are not a
    link (docs/security.md)."""
    return text.replace("[", "\\[").replace("]", "\\]")


def _result(d: Diagnostic, rule_index: int, bases: dict[str, str]) -> dict[str, Any]:
    text = plain_message(f"{d.message} — {d.detail}" if d.detail else d.message)
    result: dict[str, Any] = {
        "ruleId": d.code, "ruleIndex": rule_index, "level": LEVELS[d.severity],
        "message": {"text": text},
        "locations": [_location(d.path, d.line, d.col, d.end_line, d.end_col, bases)]}
    if d.related:
        # The other places it concerns (the other rule of an instruction-conflict).
        result["relatedLocations"] = [
            {"id": i, **_location(r.path, r.line, r.col, r.end_line, r.end_col, bases),
             "message": {"text": plain_message(r.message)}}
            for i, r in enumerate(d.related, 1)]
    return result


def _location(path: str, line: int, col: int, end_line: int, end_col: int,
              bases: dict[str, str]) -> dict[str, Any]:
    holder = max((f for f in bases if is_subpath(f, path)), key=len, default=None)
    location: dict[str, Any]
    if holder is not None:
        relative = posixpath.relpath(path, holder)
        location = {"uri": urllib.parse.quote(relative) if relative != "." else "./",
                    "uriBaseId": bases[holder]}
    else:
        location = {"uri": pathlib.PurePosixPath(path).as_uri()}
    region = {"startLine": line, "startColumn": col,
              "endLine": max(end_line, line), "endColumn": end_col}
    if region["endLine"] == line and end_col < col:
        region["endColumn"] = col
    return {"physicalLocation": {"artifactLocation": location, "region": region}}
