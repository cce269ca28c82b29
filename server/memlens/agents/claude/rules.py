"""`.claude/rules`: which files are rules (readdir order, subfolders where they come) and a
rule's `paths:` globs, matched as Claude Code matches them."""

from __future__ import annotations

import os
import posixpath
import re

import pathspec

from memlens.files.nodecompat import resolve
from memlens.text.frontmatter import line_closed_frontmatter


def _split_globs(value: object) -> list[str]:
    """A rule's `paths:` as Claude Code splits them: lists flattened, strings split at commas
    outside braces, `{a,b}` expanded."""
    if isinstance(value, list):
        return [g for item in value for g in _split_globs(item)]
    if not isinstance(value, str):
        return []
    parts, current, depth = [], "", 0
    for char in value:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += (char == "{") - (char == "}")
        current += char
    parts.append(current.strip())
    out: list[str] = []
    for part in filter(None, parts):
        pending = [part]
        while pending:
            item = pending.pop()
            match = re.match(r"^([^{]*)\{([^}]+)\}(.*)$", item)
            if not match:
                out.append(item)
                continue
            pending += [match[1] + alt.strip() + match[3]
                        for alt in reversed(match[2].split(","))]
    return out


def rule_globs(content: str) -> list[str] | None:
    """A rule's `paths:` globs (a trailing `/**` dropped), or None when it applies everywhere
    (no `paths:`, or only `**`)."""
    meta = line_closed_frontmatter(content)
    if not meta or "paths" not in meta:
        return None
    globs = [g[:-3] if g.endswith("/**") else g for g in _split_globs(meta["paths"])]
    globs = [g for g in globs if g]
    if not globs or all(g == "**" for g in globs):
        return None
    return globs


def globs_match(globs: list[str], base: str, target: str) -> bool:
    """Claude Code matches `target`, relative to `base`, gitignore-style."""
    rel = posixpath.relpath(resolve(target), base)
    if rel == "." or rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return False
    spec = pathspec.GitIgnoreSpec.from_lines(globs)
    return spec.match_file(rel)


def rule_files(rules_dir: str) -> list[str]:
    """`*.md` files under `rules_dir` in readdir order, a subfolder's where it is listed."""
    return _walk_rules(rules_dir)[0]


def skipped_rule_files(rules_dir: str) -> list[str]:
    """The other files under `rules_dir`, which Claude Code does not read as rules (hidden
    files such as `.gitkeep` and names ending `.md` in another case are left out: the first
    are no rules, the second unverified)."""
    return [p for p in _walk_rules(rules_dir)[1]
            if not posixpath.basename(p).startswith(".") and not p.lower().endswith(".md")]


def _walk_rules(rules_dir: str) -> tuple[list[str], list[str]]:
    """(the `*.md` files, every other file) under `rules_dir`, in readdir order."""
    found: list[str] = []
    others: list[str] = []
    visited: set[str] = set()

    def walk(folder: str) -> None:
        real = os.path.realpath(folder)
        if real in visited:
            return
        visited.add(real)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            path = posixpath.join(folder, entry.name)
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:
                continue
            if is_dir:
                walk(path)
            elif is_file and entry.name.endswith(".md"):
                found.append(path)
            elif is_file:
                others.append(path)

    walk(rules_dir)
    return found, others
