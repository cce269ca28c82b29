"""Ignore files applied where Gemini CLI's FileDiscoveryService applies them (gitignore rules).

The memory search asks `shouldIgnoreFile(path)` for directories too, as if they were files, so a
pattern with a trailing slash (`secret/`) does not stop the search entering `secret` (only the
files inside are filtered), while `secret` does. We reproduce that by always matching the path
without a trailing slash.

Which rules apply, in which order, is Gemini CLI 0.43's: inside a git repository with both
switches on, one list of `.git`, `.git/info/exclude`, each `.gitignore` from the root down to
the path's folder (a nested file's patterns anchored to its folder; a folder that is already
ignored stops the descent) and then `.geminiignore`'s patterns; without git (or with git-ignore
rules off), `.geminiignore` alone. A path is matched as the `ignore` package matches it: a
parent folder that is ignored ignores it, else the last rule that matches the path itself
wins (a folder-only pattern such as `!*/` never matches a file), case-insensitively.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any, NamedTuple

from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.globs import compiled, gitignore_regexes, search
from memlens.files.nodecompat import js_trim, js_trim_start


class _Rule(NamedTuple):
    regex: Any  # compiled by RE2 (`memlens.files.globs`): a repository's pattern never stalls
    include: bool  # True: ignore; False: a negation (`!pattern`)
    # Text every path the rule matches holds, lower-cased (an ASCII path without one of them
    # is not matched, and costs no RE2 call); None: the pattern is not plain enough to say.
    needs: tuple[str, ...] | None = None
    # An ignoring rule whose pattern names a path by its last part only (no `/` but a
    # trailing one, no `!`): below folders it does not ignore, its verdict on an entry
    # depends on the entry's name alone (`IgnoreFilter.ignored_entries` keeps it per name).
    by_name: bool = False


# A pattern of these characters only (besides a leading `!`): each run of them between `*`,
# `?` and `/` is literal text every path it matches holds.
_PLAIN = re.compile(r"[A-Za-z0-9._/*?-]+")
_WILD = re.compile(r"[*?/]+")


def _needs(pattern: str) -> tuple[str, ...] | None:
    body = pattern[1:] if pattern.startswith("!") else pattern
    if not _PLAIN.fullmatch(body):
        return None
    return tuple(piece.lower() for piece in _WILD.split(body) if piece)


def _in_git_repository(directory: str) -> bool:
    current = posixpath.normpath(directory)
    while True:
        if os.path.exists(posixpath.join(current, ".git")):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


def _read_lines(path: str) -> list[str] | None:
    # Through FileReader: an ignore file that is a FIFO or a device is never opened (opening a
    # FIFO blocks until a writer comes), and a huge one costs a bounded read.
    read = FileReader(max_bytes=4_000_000).read(path)
    if read.content is None:
        return None
    return re.split(r"\r\n|\n|\r", read.content)  # as Gemini CLI splits them


def _compile(patterns: list[str]) -> list[_Rule]:
    """Each pattern as a rule that matches a path itself (not what lies below it); one that
    pathspec or RE2 cannot read is left out."""
    rules = []
    for pattern in patterns:
        for regex, include in gitignore_regexes(pattern):
            found = compiled(f"(?:{regex})\\z", ignore_case=True)
            if found is not None:
                rules.append(_Rule(found, include, _needs(pattern),
                                   include and _names_a_last_part(pattern)))
    return rules


def _names_a_last_part(pattern: str) -> bool:
    body = pattern.rstrip("/")
    return bool(body) and not pattern.startswith("!") and "/" not in body and "\\" not in body


def _anchored(raw: list[str], base: str) -> list[str]:
    """Gemini CLI's `processPatterns`: a nested `.gitignore`'s patterns made relative to the
    root (`x` in `sub/` becomes `/sub/**/x`)."""
    out = []
    for line in raw:
        pattern = js_trim_start(line)
        if pattern == "" or pattern.startswith("#"):
            continue
        negative = pattern.startswith("!")
        if negative:
            pattern = pattern[1:]
        anchored = pattern.startswith("/")
        if anchored:
            pattern = pattern[1:]
        if pattern == "":
            continue
        if base and base != ".":
            if not anchored and "/" not in pattern:
                pattern = "**/" + pattern
            joined = posixpath.normpath(posixpath.join(base, pattern))
            if pattern.endswith("/"):
                joined += "/"
            pattern = joined if joined.startswith("/") else "/" + joined
        if anchored and not pattern.startswith("/"):
            pattern = "/" + pattern
        out.append(("!" if negative else "") + pattern)
    return out


def _test_one(rules: list[_Rule], path: str) -> bool:
    ignored = False
    # RE2 folds case by Unicode's rules, `lower()` by its own: only an ASCII path is
    # ruled out by its text.
    low = path.lower() if path.isascii() else None
    for rule in rules:
        if rule.include == ignored:
            continue  # cannot change the verdict
        needs = rule.needs
        if low is not None and needs is not None:
            for text in needs:
                if text not in low:
                    break  # the path lacks text the rule's every match holds
            else:
                if search(rule.regex, path):
                    ignored = rule.include
            continue
        if search(rule.regex, path):
            ignored = rule.include
    return ignored


class IgnoreFilter:
    """`.geminiignore` at the root, and (when enabled, in a git repository) `.git`,
    `.git/info/exclude` and the `.gitignore` chain below it."""

    def __init__(self, root: str, *, respect_git_ignore: bool, respect_gemini_ignore: bool):
        self.root = root
        # What decides every verdict within a run (the files it reads do not change there).
        self.key = (root, respect_git_ignore, respect_gemini_ignore)
        # Git's rules (and `.git` itself) apply only inside a git repository, a `.git` in the
        # root or above, as Gemini CLI's file service decides.
        self.respect_git_ignore = respect_git_ignore and _in_git_repository(root)
        gemini_lines = (_read_lines(posixpath.join(root, ".geminiignore"))
                        if respect_gemini_ignore else None)
        gemini = [p for p in (js_trim(line) for line in gemini_lines or [])
                  if p and not p.startswith("#")]
        self.gemini: list[_Rule] | None = None
        self._extra: list[_Rule] = []
        self._base: list[_Rule] = []
        self._dir_rules: dict[str, list[_Rule]] = {}
        self._cache: dict[str, bool] = {}
        self._prefix = root.rstrip("/") + "/"
        # Per folder: the rule chain and rules for its entries; per (rule chain, folder):
        # whether those rules ignore that folder or one above it.
        self._folders: dict[str, tuple[tuple[str, ...], list[_Rule]]] = {}
        self._tested: dict[tuple[tuple[str, ...], str], bool] = {}
        # Per rule chain whose every rule is `by_name`: each entry name's verdict.
        self._by_name: dict[tuple[str, ...], dict[str, bool] | None] = {}
        if self.respect_git_ignore:
            exclude = _read_lines(posixpath.join(root, ".git", "info", "exclude"))
            self._base = _compile([".git", *_anchored(exclude or [], ".")])
            self._extra = _compile(_anchored(gemini, "."))
        elif gemini:
            self.gemini = _compile(gemini)

    @property
    def active(self) -> bool:
        return self.gemini is not None or self.respect_git_ignore

    def _rules_of(self, directory: str, relative: str) -> list[_Rule]:
        if directory not in self._dir_rules:
            # A folder the run has listed without a `.gitignore` needs no attempt to open one
            # (files/tree.py: the walk that asks has just listed it).
            listed = tree.known_listing(directory)
            if listed is not None and not listed.has_file(".gitignore"):
                self._dir_rules[directory] = []
            else:
                lines = _read_lines(posixpath.join(directory, ".gitignore"))
                self._dir_rules[directory] = _compile(_anchored(lines or [], relative or "."))
        return self._dir_rules[directory]

    def ignored(self, path: str) -> bool:
        prefix = self._prefix
        if not path.startswith(prefix):
            return False
        rel = path[len(prefix):]
        if rel in self._cache:
            return self._cache[rel]
        verdict = self._decide(rel)
        self._cache[rel] = verdict
        return verdict

    def ignored_entries(self, folder: str, names: list[str]) -> list[bool]:
        """`ignored(folder/name)` for each of `names`, entries of `folder`: they share its
        rules and its verdict, looked up once (a search asks this for every folder)."""
        base = folder + "/"
        prefix = self._prefix
        if not (self.respect_git_ignore and base.startswith(prefix)):
            return [self.ignored(base + name) for name in names]
        rel_folder = base[len(prefix):-1]
        chain, rules = self._folder_rules(rel_folder)
        parent = rel_folder.replace("\\", "/")
        parent_ignored = False
        if rel_folder:
            verdict = self._tested.get((chain, parent))
            if verdict is None:
                verdict = self._folder_ignored(chain, rules, parent.split("/"))
            parent_ignored = verdict
        lead = parent + "/" if rel_folder else ""
        if parent_ignored:
            return [True] * len(names)
        if chain in self._by_name:
            by_name = self._by_name[chain]
        else:
            by_name = {} if all(rule.by_name for rule in rules) else None
            self._by_name[chain] = by_name
        if by_name is not None:
            # No folder above is ignored and every rule looks at the last part only: a
            # name's verdict holds in every folder of this chain (a monorepo repeats names).
            out = []
            for name in names:
                known = by_name.get(name)
                if known is None:
                    if "\\" in name or "/" in name or not name:
                        out.append(self._decide(rel_folder + "/" + name if rel_folder
                                                else name))
                        continue
                    known = by_name[name] = _test_one(rules, lead + name)
                out.append(known)
            return out
        rel_lead = rel_folder + "/" if rel_folder else ""
        cache = self._cache
        out = []
        for name in names:
            rel = rel_lead + name
            known = cache.get(rel)
            if known is None:
                if "\\" in name or "/" in name or not name:
                    known = self._decide(rel)  # the name itself splits the path
                else:
                    known = parent_ignored or _test_one(rules, lead + name)
                cache[rel] = known
            out.append(known)
        return out

    def _decide(self, rel: str) -> bool:
        # relative as Gemini CLI makes it: backslashes become slashes
        normalized = rel.replace("\\", "/")
        if not self.respect_git_ignore:
            return self.gemini is not None and self._ignores((), self.gemini, normalized)
        chain, rules = self._folder_rules(rel.rpartition("/")[0] if "/" in rel else "")
        return self._ignores(chain, rules, normalized)

    def _folder_rules(self, rel_dir: str) -> tuple[tuple[str, ...], list[_Rule]]:
        """The rules in force for the entries of folder `rel_dir` ('' the root): `.git`,
        `.git/info/exclude`, each `.gitignore` from the root down to it (the descent stops at
        a folder that is ignored already), then `.geminiignore`'s; and the chain of folders
        whose `.gitignore` added rules (it names the list). Kept per folder: siblings share
        their parents' work."""
        known = self._folders.get(rel_dir)
        if known is not None:
            return known
        parent_rel, _, _ = rel_dir.rpartition("/")
        parent = self._folders.get(parent_rel) if rel_dir else None
        if parent is not None and "\\" not in rel_dir:
            # A search asks for a folder right after its parent: one step down (what the loop
            # below does for each level).
            chain, rules = parent
            key = (chain, rel_dir)
            verdict = self._tested.get(key)
            if verdict is None:
                verdict = self._ignores(chain, rules, rel_dir + "/")
                self._tested[key] = verdict
            if not verdict:
                # `posixpath.join(root, rel_dir)`, as `_prefix` ends in one slash
                folder = (self._prefix + rel_dir if not rel_dir.startswith("/")
                          else posixpath.join(self.root.rstrip("/") or "/", rel_dir))
                chain, rules = self._with_rules_of(folder, rel_dir, chain, rules)
            self._folders[rel_dir] = (chain, rules)
            return chain, rules
        # Down from the nearest folder already known (a loop, not recursion: a hostile tree
        # may be thousands of folders deep).
        parts = rel_dir.split("/") if rel_dir else []
        depth = len(parts)
        while depth > 0 and "/".join(parts[:depth]) not in self._folders:
            depth -= 1
        root = self.root.rstrip("/") or "/"
        if depth == 0 and "" not in self._folders:
            self._folders[""] = self._with_rules_of(root, "", (), self._base + self._extra)
        chain, rules = self._folders["/".join(parts[:depth])]
        stopped = False
        for end in range(depth + 1, len(parts) + 1):
            relative = "/".join(parts[:end])
            if not stopped:
                # the folder's own verdict, kept for the rules in force above it: its entries'
                # checks ask it again (`_folder_ignored`) when it adds no rules of its own
                folder = relative.replace("\\", "/")
                key = (chain, folder)
                verdict = self._tested.get(key)
                if verdict is None:
                    verdict = self._ignores(chain, rules, folder + "/")
                    self._tested[key] = verdict
                stopped = verdict  # an ignored folder: no .gitignore below it is read
            if not stopped:
                chain, rules = self._with_rules_of(posixpath.join(root, relative), relative,
                                                   chain, rules)
            self._folders[relative] = (chain, rules)
        return chain, rules

    def _with_rules_of(self, directory: str, relative: str, chain: tuple[str, ...],
                       rules: list[_Rule]) -> tuple[tuple[str, ...], list[_Rule]]:
        """`rules` with the `.gitignore` of `directory` added before `.geminiignore`'s."""
        added = self._rules_of(directory, relative)
        if not added:
            return chain, rules
        return (*chain, directory), rules[:len(rules) - len(self._extra)] + added + self._extra

    def _ignores(self, chain: tuple[str, ...], rules: list[_Rule], path: str) -> bool:
        """`ignore().ignores(path)`: a parent folder that is ignored ignores the path; otherwise
        the last rule matching the path itself decides. (`chain` names `rules`: the same
        chain, the same list.)"""
        stripped = path.rstrip("/")
        if "/" in stripped:
            parent = stripped.rpartition("/")[0]  # "/".join(parts[:-1]), empty parts kept
            verdict = self._tested.get((chain, parent))
            if verdict is None:
                verdict = self._folder_ignored(chain, rules, parent.split("/"))
            if verdict:
                return True
        return _test_one(rules, path)

    def _folder_ignored(self, chain: tuple[str, ...], rules: list[_Rule],
                        parts: list[str]) -> bool:
        """Whether `rules` ignore the folder `parts` or one above it (each tested with its
        trailing slash), kept per (chain, folder): siblings share their parents' verdicts."""
        depth = len(parts)
        while depth > 0 and (chain, "/".join(parts[:depth])) not in self._tested:
            depth -= 1
        verdict = depth > 0 and self._tested[(chain, "/".join(parts[:depth]))]
        for end in range(depth + 1, len(parts) + 1):
            folder = "/".join(parts[:end])
            verdict = verdict or _test_one(rules, folder + "/")
            self._tested[(chain, folder)] = verdict
        return verdict

def is_dir_entry_ignored(ignore: IgnoreFilter | None, path: str) -> bool:
    return ignore is not None and ignore.active and ignore.ignored(path)
