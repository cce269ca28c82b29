"""`.claude/rules`: which files are rules (readdir order, subfolders where they come) and a
rule's `paths:` globs, matched as Claude Code matches them."""

from __future__ import annotations

import os
import posixpath
import re

import yaml

from memlens.agents.claude.markdown import split_frontmatter
from memlens.files import tree
from memlens.files.globs import GlobList, gitignore_matcher
from memlens.files.nodecompat import resolve
from memlens.files.structured import StructuredDataError, parse_yaml
from memlens.text.globlist import split_glob_list

_BRACES = re.compile(r"^([^{]*)\{([^}]+)\}(.*)$")  # one `{a,b}` group, as Claude Code reads it
_SPECIAL_VALUE = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
# JavaScript's /^([a-zA-Z_-]+):\s+(\S.*)$/: its `.` stops at CR (a CRLF line never matches).
_KEY_VALUE = re.compile(r"([a-zA-Z_-]+):\s+(\S[^\n\r\u2028\u2029]*)\Z")


def _quote_values(text: str) -> str:
    """Claude Code's second try at frontmatter YAML that did not parse: each `key: value` line
    whose value holds a YAML indicator is written with the value double-quoted."""
    lines = []
    for line in text.split("\n"):
        match = _KEY_VALUE.match(line)
        value = match[2] if match else ""
        if match and not (len(value) > 1 and value[0] == value[-1] and value[0] in "\"'"):
            listed = False
            if value.startswith("[") and value.endswith("]"):
                try:
                    listed = isinstance(parse_yaml(value), list)
                except StructuredDataError:
                    listed = False
            if not listed and _SPECIAL_VALUE.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{match[1]}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading an unknown tag (`paths: !src/**`) as Bun's YAML parser
    does: the node as if untagged (an empty one as null)."""


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> object:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node) or None
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_Loader.add_multi_constructor("!", _untagged)


def _load(text: str) -> object:
    return parse_yaml(text, _Loader)


def read_frontmatter(content: str) -> tuple[dict[str, object] | None, str | None]:
    """(the frontmatter's keys as Claude Code parses them, why it could not be read at all).
    The keys: markdown.py's block, read as a YAML mapping; what does not parse is tried again
    with its values quoted and leading tabs made spaces, and what still does not is `{}`;
    None without frontmatter. The reason is set only when the block could not be read for
    want of bounds (nested too deeply, too large: `files.structured`), not for plain invalid
    YAML, which Claude Code also reads as no keys."""
    text = split_frontmatter(content)[1]
    if text is None:
        return None, None
    try:
        value = _load(text)
    except StructuredDataError as err:
        if err.bound:  # nested too deeply, too large: no retry would read it
            return {}, err.message
        retry = re.sub(r"^\t+", lambda m: "  " * len(m[0]), _quote_values(text),
                       flags=re.MULTILINE)
        try:
            value = _load(retry)
        except StructuredDataError as again:
            return {}, (again.message if again.bound else None)
    return (value if isinstance(value, dict) else {}), None


def frontmatter_meta(content: str) -> dict[str, object] | None:
    """The frontmatter's keys as Claude Code parses them (`read_frontmatter`)."""
    return read_frontmatter(content)[0]


def rule_globs(content: str) -> list[str] | None:
    """A rule's `paths:` globs (a trailing `/**` dropped), or None when it applies everywhere
    (no `paths:`, or only `**`)."""
    return globs_of(frontmatter_meta(content))


def globs_of(meta: dict[str, object] | None) -> list[str] | None:
    """`rule_globs` of frontmatter keys already read."""
    if not meta or not meta.get("paths"):
        return None
    split = split_glob_list(meta["paths"], _BRACES)
    globs = GlobList(g for g in (g[:-3] if g.endswith("/**") else g for g in split) if g)
    globs.stopped = split.stopped
    if not globs or all(g == "**" for g in globs):
        return None
    return globs


def globs_match(globs: list[str], base: str, target: str) -> bool:
    """Claude Code matches `target`, relative to `base`, gitignore-style (on RE2, by
    `memlens.files.globs`)."""
    rel = posixpath.relpath(resolve(target), base)
    if rel == "." or rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return False
    # The ignore package: a file under a matched folder matches, whatever negation follows.
    match = gitignore_matcher(globs)
    parts = rel.split("/")
    if any(match("/".join(parts[:i]) + "/") for i in range(1, len(parts))):
        return True
    return match(rel)


def rule_files(rules_dir: str) -> list[str]:
    """`*.md` files under `rules_dir` in readdir order, a subfolder's where it is listed (a
    symlinked one by its target's path)."""
    return _walk_rules(rules_dir)[0]


def linked_rule_files(rules_dir: str) -> set[str]:
    """The target paths of the `*.md` rules under `rules_dir` that are symlinks."""
    return _walk_rules(rules_dir)[2]


def skipped_rule_files(rules_dir: str) -> list[str]:
    """The other files under `rules_dir`, which Claude Code does not read as rules (hidden
    files such as `.gitkeep` and names ending `.md` in another case are left out: the first
    are no rules, the second unverified)."""
    return [p for p in _walk_rules(rules_dir)[1]
            if not posixpath.basename(p).startswith(".") and not p.lower().endswith(".md")]


def _typed_entries(folder: str) -> list[tuple[str, bool, bool, bool]]:
    """Each entry of `folder` as (name, is a folder, is a file, is a link), links followed;
    an entry whose type cannot be read is left out. From the run's listing inside
    `files.tree.one_walk()`."""
    if tree.active():
        return [(name, kind in tree.FOLDERS, kind in tree.FILES, kind in tree.LINKS)
                for name, kind in tree.listing(folder).entries if kind != tree.UNKNOWN]
    out = []
    for entry in list(os.scandir(folder)):
        try:
            out.append((entry.name, entry.is_dir(), entry.is_file(), entry.is_symlink()))
        except OSError:
            continue
    return out


def _walk_rules(rules_dir: str) -> tuple[list[str], list[str], set[str]]:
    """(the `*.md` files, every other file, the `*.md` files reached through a symlink) under
    `rules_dir`, in readdir order."""
    found: list[str] = []
    others: list[str] = []
    linked: set[str] = set()
    visited: set[str] = set()
    if not os.path.isdir(rules_dir):
        # Most folders have no rules: one stat, not `realpath`'s lstat of every ancestor (a
        # check of each folder of a tree N deep cost N² lstats: 1,500 deep ran for minutes).
        return found, others, linked

    def walk(folder: str) -> None:
        real = os.path.realpath(folder)
        if real in visited:
            return
        visited.add(real)
        try:
            entries = _typed_entries(folder)
        except OSError:
            return
        for name, is_dir, is_file, is_link in entries:
            path = posixpath.join(folder, name)
            if is_link:
                # Claude Code reads (and names) a symlinked rule by its target's path.
                path = os.path.realpath(path)
            if is_dir:
                walk(path)
            elif is_file and name.endswith(".md"):
                found.append(path)
                if is_link:
                    linked.add(path)
            elif is_file:
                others.append(path)

    walk(rules_dir)
    return found, others, linked
