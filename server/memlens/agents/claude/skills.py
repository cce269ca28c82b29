"""Claude Code's skills listing, exactly as it sends it (verified on 2.1.330 and 2.1.332:
tests/conformance/test_skills.py; docs/reference.md "Skills").

What it sends: a `role: "system"` message of its first request holds
``The following skills are available for use with the Skill tool:\\n\\n`` then one line per
skill, ``- NAME: DESCRIPTION``, the user's and the project's skills first, then its own
built-in ones. The rules, seen in its requests and read in its bundle:

* Where: ``~/.claude/skills/<folder>/SKILL.md`` (user), then ``.claude/skills/<folder>/SKILL.md``
  of the working folder and of each folder above it, nearest first (project). Only a folder's
  own ``SKILL.md`` (that exact name); nested folders and `.claude/skills` below the working
  folder are not listed at start (they are announced later, when a tool touches them).
* Each root in the order JavaScript's ``localeCompare`` gives its folder names; a name already
  listed (the user's, a nearer folder's) hides a later one.
* The name is the folder's. A frontmatter ``name`` of letters, digits, ``_``, ``:``, ``.`` and
  ``-`` that differs follows it in brackets: ``folder (name)`` — unless that name finds another
  skill first (any skill's folder of that name, else an earlier skill with that frontmatter
  name).
* The description: frontmatter ``description`` (trimmed; a number or true/false as text),
  else the body's first non-blank line (a heading without its ``#``s, over 100 characters cut
  to 97 and ``...``), else ``Skill``; `` - `` and ``when_to_use`` after it when set. Terminal
  escapes are removed, each run of hidden characters becomes one space, ``<`` and ``>``
  become ``&lt;`` and ``&gt;``; past 1,536 characters it is cut to 1,535 and ``…``. How the
  frontmatter is split, its YAML read (and read again when refused) and its text cleaned:
  `skill_text.py`.
* Past its listing budget (30,000 terminal columns for the whole listing with its own
  skills' and commands' lines, one column per line break between two entries), its bundled
  skills keep their lines and the others, in listing order, keep theirs while the rest of the
  budget allows; the others are listed by name only.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from memlens.agents.claude.memory_folder import claude_home
from memlens.agents.claude.skill_text import columns, hide, js_trim, read_frontmatter
from memlens.agents.claude.skill_yaml import js_text
from memlens.files.fsread import FileReader
from memlens.protocol.memory import Diagnostic

LABEL = "Claude Code"
HEAD = "The following skills are available for use with the Skill tool:\n\n"
MAX_SKILL_BYTES = 1_000_000
MAX_DESCRIPTION = 1536
MAX_NAME = 256
# The listing budget in terminal columns, and what Claude Code lists of its own with the user's
# skills, per verified release (a later release uses the newest): its bundled skills, each kept
# whole (their columns, without the line breaks inside claude-api's, and their count), then
# after the user's skills its built-in commands `init` and `security-review`, cut like the
# user's (columns of `- name` and of the whole line). Each line break between two entries
# counts one column (differential seed 5501, tree 773: 30 entries, 30,157 columns, Claude
# Code's own warning in its debug log).
BUDGET = 30_000


@dataclass(frozen=True)
class OwnLines:
    bundled: int  # columns of the bundled skills' lines, kept whole
    bundled_count: int
    commands: tuple[tuple[int, int], ...]  # (columns of `- name`, of `- name: description`)


NO_OWN_LINES = OwnLines(0, 0, ())  # a listing of the skills a read finds: theirs alone
BUILTINS: dict[str, OwnLines] = {
    "2.1.330": OwnLines(6039, 11, ((6, 66), (17, 91))),
    "2.1.332": OwnLines(6039, 11, ((6, 66), (17, 91))),
}

NAME_REFUSED = ("its folder's name is not one Claude Code offers (blank or hidden characters, "
                "'<' or '>', a space beside ':' or at an end, over 256 characters)")
_SHOWN_NAME = re.compile(r"^[\w:.-]+$")  # letters, marks, digits, _ : . - (checked below)
_HEADING = re.compile(r"^#+\s+(\S[^\r\u2028\u2029]*)$")


@dataclass
class ClaudeSkill:
    folder: str
    path: str
    tier: str  # "user" or "project"
    name: str = ""  # the frontmatter name ("" without one)
    description: str = ""  # what it lists, escaped and cut
    shown: str = ""  # its name as listed
    line: str = ""  # its line in the listing, in full
    offered: bool = True
    reason: str | None = None
    name_only: bool = False
    # Its frontmatter and body as read (a skill found on a read lists its description again,
    # with where it was found).
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    body: str = field(default="", repr=False)


@dataclass
class ClaudeSkills:
    skills: list[ClaudeSkill]
    listing: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _js_len(text: str) -> int:
    """The length JavaScript gives a string (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _js_slice(text: str, end: int) -> str:
    return text.encode("utf-16-le")[:end * 2].decode("utf-16-le", "ignore")


def _clean(text: str) -> str:
    return hide(text).replace("<", "&lt;").replace(">", "&gt;")


def _description(data: dict[str, Any], body: str, suffix: str = "") -> str:
    """What it lists after the name: the description (or the body's first line), `suffix`
    (what a skill found on a read adds: `skills_on_read.py`), then `` - `` and when_to_use."""
    value = data.get("description")
    text: str | None = None
    if isinstance(value, str):
        text = js_trim(value) or None
    elif isinstance(value, bool | int | float):
        text = js_text(value)
    if text is None:
        text = "Skill"
        for line in body.split("\n"):
            line = js_trim(line)
            if line:
                heading = _HEADING.match(line)
                text = heading.group(1) if heading else line
                if _js_len(text) > 100:
                    text = _js_slice(text, 97) + "..."
                break
    listed = _clean(text) + suffix
    when = data.get("when_to_use", data.get("when-to-use"))
    if when is not None and js_text(when):
        listed = f"{listed} - {_clean(js_text(when))}"
    if _js_len(listed) > MAX_DESCRIPTION:
        listed = _js_slice(listed, MAX_DESCRIPTION - 1) + "\u2026"
    return listed


def _name_offered(name: str) -> bool:
    return (0 < len(name) <= MAX_NAME and not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029<>]",
                                                         name)
            and "  " not in name and not re.search(r"(?:^|:) | (?::|$)|^:|:$", name))


def _shown_name(name: str) -> bool:
    return (len(name) <= MAX_NAME and bool(_SHOWN_NAME.match(name))
            and all(unicodedata.category(c)[0] in "LMN" or c in "_:.-" for c in name))


# JavaScript's localeCompare (ICU's root collation) for the names it sorts: punctuation and
# symbols in this order, then digits, then letters (case second, lower case first).
_PUNCT = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def _primary(ch: str) -> tuple[int, int]:
    if ch in _PUNCT:
        return (0, _PUNCT.index(ch))
    if ch.isdigit():
        return (1, int(ch) if ch.isascii() else ord(ch))
    base = unicodedata.normalize("NFD", ch)[0].casefold()
    return (2, ord(base))


def locale_key(name: str) -> tuple[Any, ...]:
    """A sort key that orders names as `a.localeCompare(b)` does for the names folders have
    (ASCII exactly; accents and other scripts compared by base letter, then code point)."""
    primary = tuple(_primary(c) for c in name)
    secondary = tuple(unicodedata.normalize("NFD", c) for c in name.casefold())
    tertiary = tuple(1 if c.isupper() else 0 for c in name)
    return (primary, secondary, tertiary, name)


def skill_roots(home: str, cwd: str) -> list[tuple[str, str]]:
    """(tier, folder) in the order it lists them: the user's (the Claude config folder's:
    `$CLAUDE_CONFIG_DIR/skills`, else HOME/.claude/skills), then the working folder's and each
    folder above it (never HOME's own: Claude Code's walk up stops at HOME)."""
    user = posixpath.join(claude_home(home), "skills")
    roots = [("user", user)]
    homes = {user, posixpath.join(home, ".claude", "skills")}
    folder = cwd
    while True:
        candidate = posixpath.join(folder, ".claude", "skills")
        if candidate not in homes:
            roots.append(("project", candidate))
        parent = posixpath.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return roots


def _load(path: str, folder: str, tier: str, reader: FileReader) -> ClaudeSkill:
    skill = ClaudeSkill(folder=folder, path=path, tier=tier)
    try:
        if os.path.getsize(path) > MAX_SKILL_BYTES:
            skill.offered, skill.reason = False, (
                f"over {MAX_SKILL_BYTES:,} bytes: Claude Code skips it")
            return skill
    except OSError:
        pass
    text = reader.read(path).content
    if text is None:
        skill.offered, skill.reason = False, "not readable as text: Claude Code skips it"
        return skill
    data, body, _ = read_frontmatter(text)
    name = data.get("name")
    skill.name = js_text(name) if name is not None and not isinstance(name, dict | list) else ""
    skill.description = _description(data, body)
    skill.data, skill.body = data, body
    return skill


def load_skills(home: str, cwd: str, version: str | None = None,
                reader: FileReader | None = None) -> ClaudeSkills:
    """Every SKILL.md Claude Code looks at starting in `cwd`, in listing order, and the
    listing it sends (`HEAD` and the user's and project's lines; "" without any)."""
    reader = reader or FileReader()
    found: list[ClaudeSkill] = []
    for tier, root in skill_roots(home, cwd):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        entries = []
        for name in names:
            folder = posixpath.join(root, name)
            path = posixpath.join(folder, "SKILL.md")
            if os.path.isdir(folder) and os.path.isfile(path):
                entries.append(_load(path, name, tier, reader))
        entries.sort(key=lambda s: locale_key(s.folder))
        found += entries
    listed: dict[str, ClaudeSkill] = {}
    for skill in found:
        if not skill.offered:
            continue
        if not _name_offered(skill.folder):
            skill.offered, skill.reason = False, NAME_REFUSED
            continue
        if skill.folder in listed:
            winner = listed[skill.folder]
            skill.offered, skill.reason = False, (
                f"shadowed: {winner.path} ({winner.tier}) has the same name and is listed "
                "first (user skills, then the nearest folder's)")
            continue
        listed[skill.folder] = skill
    offered = list(listed.values())
    # Which skill a name finds first (its folder's name or its frontmatter name): a skill shows
    # its frontmatter name in brackets only when that name finds the skill itself.
    # (Folder names first, then frontmatter names, as its lookup of a name goes.)
    finds: dict[str, ClaudeSkill] = {}
    for skill in offered:
        finds.setdefault(skill.folder, skill)
    for skill in offered:
        if skill.name:
            finds.setdefault(skill.name, skill)
    for skill in offered:
        shown = skill.folder
        if (skill.name and skill.name != skill.folder
                and not skill.folder.endswith(":" + skill.name)
                and _shown_name(skill.name) and finds.get(skill.name) is skill):
            shown = f"{skill.folder} ({skill.name})"
        skill.shown = shown
        skill.line = f"- {shown}: {skill.description}"
    _fit_budget(offered, version)
    lines = [f"- {s.shown}" if s.name_only else s.line for s in offered]
    listing = HEAD + "\n".join(lines) if lines else ""
    return ClaudeSkills(skills=found, listing=listing)


def _fit_budget(offered: list[ClaudeSkill], version: str | None,
                own: OwnLines | None = None) -> None:
    """Claude Code past its budget: its bundled skills keep their lines; the user's and
    project's skills, then its built-in commands, keep their descriptions in listing order
    while the rest of the budget allows (one that does not fit goes by name only, and a
    later, shorter one may still fit). `own`: what it lists of its own beside them, the
    release's by default."""
    own = own or BUILTINS.get(version or "", BUILTINS[max(BUILTINS)])
    entries = len(offered) + own.bundled_count + len(own.commands)
    breaks = max(entries - 1, 0)
    full = (sum(columns(s.line) for s in offered) + own.bundled
            + sum(whole for _, whole in own.commands) + breaks)
    if full <= BUDGET:
        return
    fixed = (own.bundled + sum(columns(f"- {s.shown}") for s in offered)
             + sum(name for name, _ in own.commands) + breaks)
    left = BUDGET - fixed
    for skill in offered:
        extra = columns(skill.line) - columns(f"- {skill.shown}")
        if extra <= left:
            left -= extra
        else:
            skill.name_only = True
