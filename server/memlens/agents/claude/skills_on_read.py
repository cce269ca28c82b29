"""The skills Claude Code finds when its Read tool reads a file below the working folder, and
the system message it then sends (verified on 2.1.330: the `regression-claude-skills-*` trees
of tests/conformance/differential/regressions_claude.yaml; docs/reference.md "Skills").

* Where: each folder from the read file's own up to the working folder (excluded), nearest
  first, is looked at once a session for a ``.claude/skills`` (hidden folders too). A file in
  the working folder itself, or outside it, finds none.
  In a git repository, a folder git ignores is not searched (it asks `git check-ignore`;
  read here from `.git/info/exclude` and the `.gitignore` files, `git_ignored`).
* Which: each entry of such a folder, in the order the file system lists them, that is a
  folder (or a link to one) holding ``SKILL.md``; its frontmatter, description and name rules
  are the start-up listing's (`skills.py`).
* Its name: the folder's, unless that name is taken — by a command or skill it has at start
  (its own, `RESERVED`, or the user's and the project's skills) or by another skill found on
  a read — then ``<owner>:<name>``, the owner being the folder holding ``.claude``, relative
  to the working folder. When that qualified name is not one it offers (`<`, `>`, controls,
  over 256 characters), the skill keeps its plain name without saying where it is from, and
  is not offered at all when its plain name is taken.
* The message, one system message after the tool result (after the agents-md hook's text and
  a blank line when the hook sends one): per folder, nearest first, ``New skills discovered
  in <folder>/.claude/skills, now available via the Skill tool:`` and ``- <name>`` per skill
  in file-system order (left out when the folder's path holds a control, `<` or `>`); then
  ``The following skills are available for use with the Skill tool:`` and the skills not
  listed before, by folder name (JavaScript's ``localeCompare``), each description followed
  by `` (from <owner>/.claude/skills — applies when working on files under <owner>/)``, or,
  for a name taken at start, `` (scoped to <owner>/ — use this instead of the unscoped
  "<name>" skill when the files being changed are under <owner>/)``, before when_to_use;
  the listing budget is the start-up one, with no built-in lines. A frontmatter name is in
  brackets only after a plain name: a qualified skill drops it (so that name may find
  another skill found on the read).
  A read of a file that does not exist sends the announcements without the listing (the
  skills load while it reads, too late for a read that fails at once).
* For the views (`skills_on_read`): each SKILL.md of a `.claude/skills` folder below the working
  folder, as a session's first read of a file in its owner's folder finds it — listed (the
  name, the listing line, by name only past the budget), or not offered and why (the folder
  is git-ignored, the file is skipped, its folder's name is refused, its name and qualified
  name are taken). The agent matrix's cell "listed on read" (workspace/reading.py) and
  `memlens check` say it in `SkillOnRead.why`'s words.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, replace

from memlens.agents.claude.skills import (
    HEAD,
    NAME_REFUSED,
    NO_OWN_LINES,
    ClaudeSkill,
    _description,
    _fit_budget,
    _load,
    _name_offered,
    _shown_name,
    load_skills,
    locale_key,
)
from memlens.files.fsread import FileReader
from memlens.files.globs import gitignore_matcher
from memlens.files.roots import repository_root

# The names of Claude Code 2.1.330's own commands, their aliases and its bundled skills, as a
# skill found on a read sees them taken (probed: each of the 560 command-like names its bundle
# holds as a nested skill, in a run with no settings).
_RESERVED_NAMES = """
__remote-workflow add-dir agents allowed-tools android auto-mode-setup autocompact background
bashes batch bg branch btw bug cd checkpoint checkup claude-api clear code-review color compact
config context continue copy cost dataviz debug diff doctor effort exit export fast feedback
fewer-permission-prompts focus fork goal heapdump help hooks ide init insights ios keybindings
keybindings-help list-agents login logout loop marketplace mcp memory mobile model name new
output-style passes peers permissions plan plugin plugin-authoring plugins powerup
pro-trial-expired proactive quit radio recap release-notes reload-plugins reload-skills rename
reset resume review rewind run run-skill-generator sandbox scroll-speed security-review settings
setup-bedrock setup-vertex share simplify skills stats status statusline stickers subtask tasks
team-onboarding terminal-setup theme tui undo update-config usage verify workflow-authoring
workflow-launch-exec workflows
"""
RESERVED = frozenset(_RESERVED_NAMES.split())

MAX_ENTRIES = 1000  # entries of one skills folder looked at (a folder is an attacker's input)
_REFUSED = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029<>]")
ANNOUNCE = "New skills discovered in {where}, now available via the Skill tool:\n"


@dataclass
class FoundSkill:
    skill: ClaudeSkill
    root: str  # its `.claude/skills` folder
    owner: str  # the folder holding `.claude`, relative to the working folder
    name: str = ""  # as offered ("" when not offered)
    suffix: str = ""  # what its description says of where it is from
    reason: str = ""  # why it is not offered (its name and its qualified name are taken)


def _below(folder: str, cwd: str) -> bool:
    return folder.startswith(cwd.rstrip("/") + "/")


MAX_IGNORE_BYTES = 4_000_000  # one ignore file: a larger one is read as holding no rules


def _ignore_lines(path: str) -> list[str]:
    # Through FileReader: a `.gitignore` that is a FIFO or a device is never opened (opening
    # a FIFO blocks until a writer comes), and a huge one costs a bounded read.
    content = FileReader(max_bytes=MAX_IGNORE_BYTES).read(path).content
    return [] if content is None else content.splitlines()


def git_ignored(folder: str) -> bool:
    """Whether git ignores `folder` (or a folder above it) in its repository: the rules of
    `.git/info/exclude` and of each `.gitignore` from the repository's root down, a deeper
    file's anchored at its folder and weighed after; no repository (a `.git` without HEAD is
    none to git), nothing ignored."""
    repo = repository_root(folder)
    if repo is None or not os.path.isfile(posixpath.join(repo, ".git", "HEAD")):
        return False
    rel = posixpath.relpath(folder, repo)
    if rel.startswith(".."):
        return False
    parts = rel.split("/")
    levels = [(repo, _ignore_lines(posixpath.join(repo, ".git", "info", "exclude"))
               + _ignore_lines(posixpath.join(repo, ".gitignore")))]
    for depth in range(1, len(parts)):
        base = posixpath.join(repo, *parts[:depth])
        levels.append((base, _ignore_lines(posixpath.join(base, ".gitignore"))))
    for depth in range(1, len(parts) + 1):
        path = posixpath.join(repo, *parts[:depth])
        verdict = False
        for base, lines in levels[:depth]:
            if not lines:
                continue
            # The last rule that matches decides: a file's own negations included.
            inside = posixpath.relpath(path, base) + "/"
            if gitignore_matcher(lines)(inside):
                verdict = True
            elif any(line.startswith("!") for line in lines) and \
                    gitignore_matcher([line[1:] for line in lines if line.startswith("!")])(
                        inside):
                verdict = False
        if verdict:
            return True
    return False


class SkillDiscovery:
    """One session's skills found on reads: which `.claude/skills` folders were looked at,
    the skills found there, and the listing lines already sent."""

    def __init__(self, home: str, cwd: str, reader: FileReader | None = None):
        self.home, self.cwd = home, cwd
        self.reader = reader or FileReader()
        self.searched: set[str] = set()
        self.found: list[FoundSkill] = []
        # The SKILL.md files of the folders looked at that it leaves out, with why (each path
        # once): not loaded (too big, not text) or a folder name it does not offer.
        self.dropped: dict[str, str] = {}
        self.sent: set[tuple[str, str]] = set()
        self.withheld = False  # a read of a missing file left the listing for the next read
        self._startup: list[ClaudeSkill] | None = None

    def startup(self) -> list[ClaudeSkill]:
        if self._startup is None:
            self._startup = [s for s in load_skills(self.home, self.cwd, reader=self.reader)
                             .skills if s.offered]
        return self._startup

    def roots_for(self, path: str) -> list[str]:
        """The `.claude/skills` folders a read of `path` looks at for the first time, nearest
        first (each marked as looked at)."""
        roots: list[str] = []
        folder = posixpath.dirname(path)
        while _below(folder, self.cwd):
            root = posixpath.join(folder, ".claude", "skills")
            if root not in self.searched:
                self.searched.add(root)
                if os.path.exists(root) and not git_ignored(folder):
                    roots.append(root)
            folder = posixpath.dirname(folder)
        return roots

    def _entries(self, root: str) -> list[str]:
        try:
            with os.scandir(root) as listing:
                names: list[str] = []
                for entry in listing:
                    if len(names) >= MAX_ENTRIES:
                        break
                    if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
                        names.append(entry.name)
                return names
        except OSError:
            return []

    def skill_files(self, root: str) -> list[str]:
        """The SKILL.md of each entry of `root` it looks at, in the order the file system
        lists them (a folder, or a link to one, holding one)."""
        out: list[str] = []
        for name in self._entries(root):
            folder = posixpath.join(root, name)
            file = posixpath.join(folder, "SKILL.md")
            if os.path.isdir(folder) and os.path.isfile(file):
                out.append(file)
        return out

    def _find(self, path: str) -> list[tuple[str, list[str]]]:
        """The `.claude/skills` folders a read of `path` looks at for the first time, nearest
        first, each with its entries; the skills found there join `found`, the SKILL.md files
        it leaves out `dropped`."""
        announced: list[tuple[str, list[str]]] = []
        for root in self.roots_for(path):
            entries = self._entries(root)
            owner = posixpath.relpath(posixpath.dirname(posixpath.dirname(root)), self.cwd)
            for name in entries:
                folder = posixpath.join(root, name)
                file = posixpath.join(folder, "SKILL.md")
                if not (os.path.isdir(folder) and os.path.isfile(file)):
                    continue
                skill = _load(file, name, "project", self.reader)
                if not skill.offered:
                    self.dropped[file] = skill.reason or "Claude Code skips it"
                elif not _name_offered(name):
                    self.dropped[file] = NAME_REFUSED
                else:
                    self.found.append(FoundSkill(skill, root, owner))
            announced.append((root, entries))
        return announced

    def on_read(self, path: str) -> str:
        """The system message a read of `path` brings ("" when none). A read of a file that
        does not exist announces the skills it finds but lists none of them: they stay to be
        listed by a later read (regression-claude-skills-missing-file)."""
        announced = self._find(path)
        if not announced and not self.withheld:
            return ""
        self._name_all()
        by_folder = {posixpath.join(f.root, f.skill.folder): f for f in self.found}
        blocks: list[str] = []
        for root, entries in announced:
            where = posixpath.relpath(root, self.cwd)
            if _REFUSED.search(where):
                continue
            names = [found.name for entry in entries
                     if (found := by_folder.get(posixpath.join(root, entry))) is not None
                     and found.name and _name_offered(found.name)]
            if names:
                blocks.append(ANNOUNCE.format(where=where)
                              + "\n".join(f"- {name}" for name in names))
        self.withheld = not os.path.exists(path)
        lines = [] if self.withheld else self._listing()
        if lines:
            blocks.append(HEAD + "\n".join(lines))
        return "\n\n".join(blocks)

    def _ordered(self) -> list[FoundSkill]:
        """In the order it merges them: by folder name, then by folder path and name."""
        return sorted(self.found, key=lambda f: (
            locale_key(f.skill.folder),
            locale_key(f"{posixpath.join(f.root, f.skill.folder)}\0{f.skill.folder}")))

    def _taken_by(self, name: str, given: set[str]) -> str:
        """Who has `name` already, as a reason says it."""
        if name in RESERVED:
            return "one of Claude Code's own commands or skills"
        if name in {s.folder for s in self.startup()}:
            return "a skill it lists at start"
        if name in given:
            return "another skill found on the read"
        return "a skill of another folder found on the read"

    def _name_all(self) -> None:
        taken = RESERVED | {s.folder for s in self.startup()}
        counts: dict[str, int] = {}
        for found in self.found:
            counts[found.skill.folder] = counts.get(found.skill.folder, 0) + 1
        given: set[str] = set()
        for found in self._ordered():
            name, owner = found.skill.folder, found.owner
            qualified = f"{owner}:{name}"
            where = owner if _name_offered(qualified) else None
            from_here = (f" (from {where}/.claude/skills \u2014 applies when working on files "
                         f"under {where}/)") if where is not None else ""
            clash = name in taken
            found.name, found.suffix, found.reason = "", "", ""
            if not (clash or counts[name] > 1):
                found.name, found.suffix = name, from_here
            elif where is None:
                if clash or name in given:
                    # Its qualified name is left unsaid: a name it refuses holds `<`, `>` or
                    # a control character.
                    found.reason = (f"its name {name} is taken by {self._taken_by(name, given)}"
                                    ", and its name qualified by its folder is not one Claude "
                                    "Code offers ('<', '>', a control character, over 256 "
                                    "characters)")
                    continue
                found.name = name
            elif qualified in taken or qualified in given:
                why = (f"is taken by {self._taken_by(name, given)}" if clash or name in given
                       else "is found in two folders")
                found.reason = (f"its name {name} {why}, and {qualified} is taken by "
                                f"{self._taken_by(qualified, given)}")
                continue
            elif clash or name in given:
                found.name = qualified
                found.suffix = (f" (scoped to {where}/ \u2014 use this instead of the unscoped "
                                f"\"{name}\" skill when the files being changed are under "
                                f"{where}/)")
            else:
                found.name, found.suffix = qualified, from_here
            given.add(found.name)

    def _listing(self) -> list[str]:
        return [f"- {s.shown}" if s.name_only else s.line for _, s in self._listed()]

    def _listed(self) -> list[tuple[FoundSkill, ClaudeSkill]]:
        """The skills found and named that it lists now (not listed before in these words),
        in listing order, each as listed (`name_only` past the budget)."""
        offered = [f for f in self._ordered() if f.name]
        startup = self.startup()
        finds: dict[str, str] = {}  # a name -> the name of the skill it finds first
        for s in startup:
            finds.setdefault(s.folder, s.folder)
        for f in offered:
            finds.setdefault(f.name, f.name)
        for s in startup:
            if s.name:
                finds.setdefault(s.name, s.folder)
        # A qualified skill (`<owner>:<name>`) drops its frontmatter name: never in brackets,
        # and that name finds another skill (regression-claude-skills-qualified-own-name).
        for f in offered:
            if f.skill.name and f.name == f.skill.folder:
                finds.setdefault(f.skill.name, f.name)
        listed: list[tuple[FoundSkill, ClaudeSkill]] = []
        for f in offered:
            own = f.skill.name
            shown = f.name
            if (own and f.name == f.skill.folder and own != f.name
                    and not f.name.endswith(":" + own)
                    and _shown_name(own) and finds.get(own) == f.name):
                shown = f"{f.name} ({own})"
            description = _description(f.skill.data, f.skill.body, f.suffix)
            line = f"- {shown}: {description}"
            if (f.name, line) in self.sent:
                continue
            self.sent.add((f.name, line))
            listed.append((f, replace(f.skill, shown=shown, line=line,
                                      description=description, name_only=False)))
        _fit_budget([s for _, s in listed], None, NO_OWN_LINES)
        return listed


@dataclass
class SkillOnRead:
    """A SKILL.md Claude Code finds when its Read tool reads a file under `owner`, as a
    session's first read there finds it: listed (its name and description in the system
    message; the skill itself is sent only when used), or why it is not offered. What the
    views say of it (workspace/reading.py, the Memory view, `memlens check`) is `trigger` and
    `why`."""

    path: str  # the SKILL.md
    owner: str  # the folder holding `.claude`, relative to the working folder
    name: str = ""  # as listed ("" when not offered)
    line: str = ""  # its listing line as sent (its name alone past the budget)
    name_only: bool = False
    reason: str = ""  # why it is not offered ("" when it is)
    # Its name and description as its listing line says them: the frontmatter name in
    # brackets, where it was found ("" when not offered).
    shown: str = ""
    description: str = ""

    @property
    def offered(self) -> bool:
        return not self.reason

    @property
    def trigger(self) -> str:
        return f"when Claude Code reads a file under {self.owner}/"

    @property
    def why(self) -> str:
        """What Claude Code does with it on that read, in one line."""
        if self.reason:
            return f"not offered {self.trigger}: {self.reason}"
        folder = posixpath.basename(posixpath.dirname(self.path))
        listed = ("only its name is listed" if self.name_only
                  else "its name and description are listed")
        if self.name != folder:
            listed += f", as {self.name}"
        if self.name_only:
            listed += ": the skills listing is past its budget"
        return f"{listed}; the skill is sent when used"


IGNORED = "git ignores {owner}/, and Claude Code does not look for skills in a folder git ignores"


def skills_on_read(home: str, cwd: str, owners: list[str], reader: FileReader | None = None
                   ) -> list[SkillOnRead]:
    """Every SKILL.md of the `.claude/skills` folders of `owners` (folders below `cwd`), each
    as a session started in `cwd` finds it on its first read of a file directly in its
    owner's folder (that read also finds the skills of the folders between, which may take
    its name); by path."""
    reader = reader or FileReader()
    startup = SkillDiscovery(home, cwd, reader).startup()
    out: list[SkillOnRead] = []
    for owner in owners:
        if not _below(owner, cwd):
            continue
        root = posixpath.join(owner, ".claude", "skills")
        rel = posixpath.relpath(owner, cwd)
        session = SkillDiscovery(home, cwd, reader)
        session._startup = startup
        if git_ignored(owner):
            out += [SkillOnRead(path, rel, reason=IGNORED.format(owner=rel))
                    for path in session.skill_files(root)]
            continue
        session._find(posixpath.join(owner, "\0"))  # a path in the folder no file has
        session._name_all()
        listed = {f.skill.path: s for f, s in session._listed()}
        for found in session.found:
            if found.root != root:
                continue
            shown = listed.get(found.skill.path)
            if shown is None or not found.name:
                out.append(SkillOnRead(found.skill.path, rel,
                                       reason=found.reason or "Claude Code does not list it"))
                continue
            out.append(SkillOnRead(found.skill.path, rel, found.name,
                                   f"- {shown.shown}" if shown.name_only else shown.line,
                                   shown.name_only, shown=shown.shown,
                                   description=shown.description))
        out += [SkillOnRead(path, rel, reason=reason) for path, reason in session.dropped.items()
                if posixpath.dirname(posixpath.dirname(path)) == root]
    return sorted(out, key=lambda s: s.path)


__all__ = ["RESERVED", "FoundSkill", "SkillDiscovery", "SkillOnRead", "skills_on_read"]
