"""Cursor's project rules as its public documentation describes them (a convention: Cursor is
closed, and no offline program here shows what it sends; docs/reference.md "Cursor rules").

- A rule is an `.mdc` file under `.cursor/rules` (subfolders included), Markdown after a
  frontmatter block with three keys: `description` (a string), `globs` (comma-separated
  patterns, or a YAML list) and `alwaysApply` (a boolean). Cursor writes `globs: **/*.ts`
  unquoted, which is not valid YAML (`*` starts an alias): a block YAML refuses is read again
  line by line, `key: value`.
- The keys pick one of the four rule types the docs name: **always** (`alwaysApply: true`),
  **auto attached** (`globs`: when a file they match is referenced), **agent requested** (a
  `description` the agent reads to decide: only offered), **manual** (none: only when the
  user @-mentions the rule).
- `.cursorrules` in the workspace folder is the legacy single rule file, always applied.
- A subfolder may hold its own `.cursor/rules`: its rules are scoped to that subfolder.

`parse_rule` reads one rule and checks it; `scan_tree` walks a workspace folder (bounded) for
nested rule folders, `.mdc` files elsewhere and the files a rule's globs could match.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from memlens.files.globs import (
    GlobList,
    MatchBudget,
    bounded,
    budget_diagnostic,
    gitignore_matcher,
    match_cost,
    skipped_globs,
    stopped,
)
from memlens.files.tree import run_memo
from memlens.files.walk import walk
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity
from memlens.text.frontmatter import yaml_mapping
from memlens.text.globlist import split_glob_list

RULES_DIR = posixpath.join(".cursor", "rules")
LEGACY_FILE = ".cursorrules"
RULE_SUFFIX = ".mdc"
KNOWN_KEYS = ("description", "globs", "alwaysApply")

ALWAYS, AUTO, REQUESTED, MANUAL = "always", "auto attached", "agent requested", "manual"

# Diagnostic codes (reports/sarif.py RULES, docs/reference.md).
FRONTMATTER_INVALID = "cursor-frontmatter-invalid"
ALWAYS_APPLY_STRING = "cursor-always-apply-string"
UNKNOWN_KEY = "cursor-unknown-key"
GLOB_NO_MATCH = "cursor-glob-no-match"
MANUAL_ONLY = "cursor-rule-manual-only"
OUTSIDE_RULES = "cursor-rule-outside-rules"
TOO_LONG = "cursor-rule-too-long"
RULES_NOT_FOLDER = "cursor-rules-not-a-folder"
LEGACY_BESIDE = "cursor-legacy-rules"
MAX_LINES = 500  # Cursor's docs: keep each rule under 500 lines

# Folders the walk never enters (version control and dependency trees).
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})
MAX_FOLDERS = 20_000  # folders one scan reads at most
MAX_FILES = 200_000  # file paths one scan keeps at most

_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*\r?$")
_BRACES = re.compile(r"^([^{]*)\{([^}]*)\}(.*)$")  # one `{a,b}` group, as Cursor's globs read
_ITEM_LINE = re.compile(r"^[ \t]+-[ \t]*(.*?)[ \t]*\r?$")


@dataclass
class CursorRule:
    """One `.mdc` rule, read and checked."""

    path: str
    owner: str  # the folder holding the `.cursor/rules` it is in (its scope)
    content: str  # the whole file
    body: str  # what follows the frontmatter
    kind: str  # ALWAYS, AUTO, REQUESTED or MANUAL
    globs: list[str]
    description: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    globs_line: int = 1  # the line `globs:` is written on (for a glob that matches nothing)

    def applies_to(self, path: str) -> bool:
        """An auto-attached rule's globs match `path` (relative to the rule's folder)."""
        return self.kind == AUTO and globs_match(self.globs, self.owner, path)


def shorten(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters with an ellipsis (a pattern in a message or label)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _diagnostic(path: str, line: int, severity: Severity, code: str, message: str,
                detail: str | None = None, length: int = 0) -> Diagnostic:
    return Diagnostic(path=path, line=line, col=1, end_line=line, end_col=1 + length,
                      severity=severity, code=code, message=message, detail=detail)


def _scalar(text: str) -> object:
    """A line-read value: quotes taken off (a quoted value stays a string), `true`/`false`
    booleans, nothing None."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return text or None


def _read_lines(lines: list[str]) -> tuple[dict[str, object], int | None]:
    """(the keys read line by line, the 0-based index of the first line that is no `key:
    value`, or None)."""
    meta: dict[str, object] = {}
    last: str | None = None
    for index, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM_LINE.match(line)
        if item and last is not None:
            listed = meta.get(last)
            meta[last] = [*(listed if isinstance(listed, list) else []), _scalar(item[1])]
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            return meta, index
        last = match[1]
        meta[last] = _scalar(match[2] or "")
    return meta, None


def split_globs(value: object) -> GlobList:
    """`globs` as Cursor documents it: comma-separated patterns (commas inside `{a,b}` kept),
    or a list of them; `{a,b}` expanded (up to `MAX_EXPANDED` globs in all)."""
    return split_glob_list(value, _BRACES)


def globs_match(globs: list[str], owner: str, path: str) -> bool:
    """`path`, relative to the rule's folder `owner`, matches one of `globs` (gitignore-style
    patterns: Memory Lens's reading, Cursor does not document its matcher; run on RE2 by
    `memlens.files.globs`)."""
    rel = posixpath.relpath(posixpath.normpath(path), owner)
    if rel == "." or rel == ".." or rel.startswith(("../", "/")):
        return False
    return gitignore_matcher(_lines(globs))(rel)


def _lines(globs: list[str]) -> list[str]:
    return [g.removeprefix("./") for g in globs]


def _key_line(lines: list[str], key: str) -> int:
    """The 1-based file line of `key:` in the frontmatter lines (which start on line 2)."""
    pattern = re.compile(rf"^{re.escape(key)}[ \t]*:")
    return next((i + 2 for i, line in enumerate(lines) if pattern.match(line)), 1)


def parse_rule(path: str, content: str, owner: str) -> CursorRule:
    """One rule and what is wrong with it (every check but the globs that match nothing,
    which needs the workspace: `check_globs`)."""
    problems: list[Diagnostic] = []
    opened = _OPEN.match(content)
    meta: dict[str, object] = {}
    body = content
    lines: list[str] = []
    if opened:
        closed = _CLOSE.search(content, opened.end())
        if closed is None:
            problems.append(_diagnostic(
                path, 1, "warning", FRONTMATTER_INVALID,
                "The frontmatter opened by --- is never closed: Cursor may skip this rule",
                "Close the block with a line holding only ---; until then the whole file is "
                "read as a manual rule (Memory Lens's reading of the convention)", 3))
        else:
            text = content[opened.end():closed.start()]
            body = content[closed.end():].lstrip("\r\n")
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            read = yaml_mapping(text) if text.strip() else {}
            if read is None:
                read, bad = _read_lines(lines)
                if bad is not None:
                    problems.append(_diagnostic(
                        path, bad + 2, "warning", FRONTMATTER_INVALID,
                        "Malformed frontmatter: this line is no `key: value`, so Cursor may "
                        "not read the rule's description, globs and alwaysApply",
                        "The rest of the block is not read (Memory Lens's reading of the "
                        "convention: YAML, else one `key: value` a line)",
                        len(lines[bad].rstrip("\r"))))
            meta = read
    for key in meta:
        if key not in KNOWN_KEYS:
            problems.append(_diagnostic(
                path, _key_line(lines, str(key)), "warning", UNKNOWN_KEY,
                f"Unknown frontmatter key {shorten(str(key))!r}: Cursor's rules know only "
                "description, globs and alwaysApply", None, len(str(key))))
    always = meta.get("alwaysApply")
    if always is not None and not isinstance(always, bool):
        shown = shorten(f'"{always}"' if isinstance(always, str) else repr(always))
        hint = (f" — write alwaysApply: {always.strip().lower()} without quotes"
                if isinstance(always, str) and always.strip().lower() in ("true", "false")
                else "")
        problems.append(_diagnostic(
            path, _key_line(lines, "alwaysApply"), "warning", ALWAYS_APPLY_STRING,
            f"alwaysApply is {shown}, not a boolean: Cursor does not apply this rule always"
            + hint,
            "Cursor's rules take alwaysApply as the boolean true or false; any other value "
            "leaves the rule to its globs, its description, or a manual @-mention",
            len("alwaysApply")))
    description = meta.get("description")
    description = description.strip() if isinstance(description, str) else None
    globs = split_globs(meta.get("globs"))
    if always is True:
        kind = ALWAYS
    elif globs:
        kind = AUTO
    elif description:
        kind = REQUESTED
    else:
        kind = MANUAL
    if kind == MANUAL and always is None and not problems:
        problems.append(_diagnostic(
            path, 1, "info", MANUAL_ONLY,
            "A manual rule: no alwaysApply, globs or description, so Cursor applies it only "
            "when it is @-mentioned",
            "Add alwaysApply: true, globs or a description for Cursor to apply it by itself"))
    lines_in = content.count("\n") + (not content.endswith("\n"))
    if lines_in > MAX_LINES:
        problems.append(_diagnostic(
            path, 1, "info", TOO_LONG,
            f"A rule of {lines_in:,} lines: Cursor's docs ask to keep each rule under "
            f"{MAX_LINES} lines",
            "Split it into smaller rules, each with its own globs or description, so that "
            "only what applies reaches the context (cursor.com/docs/rules)"))
    globs_line = _key_line(lines, "globs")
    if skipped := skipped_globs(globs):
        problems.append(budget_diagnostic(path, globs_line, "globs", skipped=skipped,
                                          total=len(globs), more=stopped(globs)))
    return CursorRule(path, owner, content, body, kind, globs, description or None, problems,
                      globs_line)


def check_globs(rule: CursorRule, files: list[str], budget: MatchBudget) -> list[Diagnostic]:
    """`cursor-glob-no-match` for each of the rule's globs that matches none of `files`
    (paths relative to the rule's folder); `glob-budget-exceeded` once the check's budget of
    glob × file matches is spent."""
    out = []
    for glob in bounded(rule.globs):
        matched = _any_file(glob, files, budget)
        if matched is None:
            out.append(budget_diagnostic(rule.path, rule.globs_line, "globs",
                                         total=len(bounded(rule.globs)), files=len(files)))
            break
        if not matched:
            out.append(_diagnostic(
                rule.path, rule.globs_line, "warning", GLOB_NO_MATCH,
                f"The glob {shorten(glob)!r} matches no file in {rule.owner} today: this rule "
                "attaches through it only once a referenced file matches",
                "Cursor attaches an auto-attached rule when a referenced file matches its "
                "globs (matched gitignore-style, relative to the folder holding .cursor/rules)",
                len("globs")))
    return out


def _any_file(glob: str, files: list[str], budget: MatchBudget) -> bool | None:
    """`glob` alone matches one of `files`; None: the budget ran out first."""
    match = gitignore_matcher(_lines([glob]))
    for path in files:
        if not budget.take(match_cost([glob], path)):
            return None
        if match(path):
            return True
    return False


def outside_rules(path: str) -> Diagnostic:
    return _diagnostic(
        path, 1, "warning", OUTSIDE_RULES,
        "An .mdc rule outside .cursor/rules: Cursor reads project rules only from a "
        ".cursor/rules folder", "Move it into .cursor/rules (or a subfolder's .cursor/rules)")


def rules_not_a_folder(path: str) -> Diagnostic:
    """`.cursor/rules` written as a file: a common slip (one file of rules), never read."""
    return _diagnostic(
        path, 1, "warning", RULES_NOT_FOLDER,
        ".cursor/rules is a file: Cursor reads project rules only from a .cursor/rules folder "
        "of .mdc files, and ignores this one",
        "Make .cursor/rules a folder and move this text into a rule in it (e.g. "
        ".cursor/rules/project.mdc with alwaysApply: true)")


def legacy_beside_rules(path: str) -> Diagnostic:
    """A legacy `.cursorrules` in a folder whose `.cursor/rules` holds rules."""
    return _diagnostic(
        path, 1, "info", LEGACY_BESIDE,
        "A legacy .cursorrules beside .cursor/rules: Cursor applies both, and its docs call "
        ".cursorrules deprecated", "Move its text into a rule in .cursor/rules (alwaysApply: "
        "true) so the rules live in one place")


def rule_files(rules_dir: str) -> list[str]:
    """The `.mdc` files under `rules_dir` (subfolders included), sorted by path."""
    out: list[str] = []
    for folder, dirs, files in walk(rules_dir):
        dirs.sort()
        out += [posixpath.join(folder, f) for f in sorted(files) if f.endswith(RULE_SUFFIX)]
    return sorted(out)


@dataclass
class TreeScan:
    """What one bounded walk of a workspace folder found."""

    root: str
    files: list[str] = field(default_factory=list)  # every file, relative to `root`
    rule_folders: list[str] = field(default_factory=list)  # subfolders holding .cursor/rules
    stray_rules: list[str] = field(default_factory=list)  # `.mdc` files outside .cursor/rules
    agents_files: list[str] = field(default_factory=list)  # subfolders' AGENTS.md
    complete: bool = True  # False: the walk stopped at its bounds

    def files_under(self, folder: str) -> list[str]:
        """The files below `folder` (inside the root), relative to it."""
        rel = posixpath.relpath(folder, self.root)
        if rel == ".":
            return self.files
        prefix = rel + "/"
        return [f[len(prefix):] for f in self.files if f.startswith(prefix)]


def scan_tree(root: str, agents_name: str = "AGENTS.md") -> TreeScan:
    """Walk `root` (symlinked folders not followed; version control and dependency folders
    skipped) at most MAX_FOLDERS folders and MAX_FILES files; once per command run
    (`files.tree.run_memo`: the check, the Memory view's rows and `show` share it)."""
    return run_memo(("cursor.scan_tree", root, agents_name),
                    lambda: _scan_tree(root, agents_name))


_RULES_TAIL = "/" + RULES_DIR


def _scan_tree(root: str, agents_name: str) -> TreeScan:
    scan = TreeScan(root)
    inside = root.rstrip("/") + "/"
    paths = scan.files
    for folders, (folder, dirs, files) in enumerate(walk(root), start=1):
        if folders > MAX_FOLDERS:
            scan.complete = False
            break
        # `walk` hands this call its own lists: sorted in place (most folders skip nothing)
        if SKIPPED_FOLDERS.isdisjoint(dirs):
            dirs.sort()
        else:
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        rel = ("." if folder == root else folder[len(inside):] if folder.startswith(inside)
               else posixpath.relpath(folder, root))
        if rel == RULES_DIR or rel.endswith(_RULES_TAIL):
            owner = posixpath.dirname(posixpath.dirname(folder))
            if owner != root:
                scan.rule_folders.append(owner)
        if not files:
            continue
        files.sort()
        room = max(MAX_FILES - len(paths), 0)
        kept = files if len(files) <= room else files[:room]
        if rel == ".":
            paths += kept
        else:
            prefix = rel + "/"
            paths += [prefix + name for name in kept]
        if len(files) > room:
            scan.complete = False
        if f"{_RULES_TAIL}/" not in f"/{rel}/":  # not inside a rules folder
            scan.stray_rules += [posixpath.join(folder, name) for name in files
                                 if name.endswith(RULE_SUFFIX)]
        if rel != "." and agents_name in files:
            scan.agents_files.append(posixpath.join(folder, agents_name))
    return scan
