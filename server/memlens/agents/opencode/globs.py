"""The `instructions` globs of OpenCode's `opencode.json`, matched the way it matches them
(docs/reference.md "OpenCode"): a relative pattern is tried in the working folder and in each
folder above it up to the repository root, files only, dot files included, folder links
followed; `*` stays within one path part, `**` crosses parts, `?`, `[...]` and `{a,b}` as
usual.

A repository's `opencode.json` is an attacker's input: the walk is bounded (entries listed,
depth), never leaves the folder it is allowed (`inside`: a link leading out is not followed
and a file behind one is not read), and the patterns run with RE2 (files/globs.py), whose
time is linear in the path.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from memlens.files.globs import MAX_GLOB_CHARS, full_match, literal

MAX_ENTRIES = 20_000  # entries one pattern's walk lists, at most
MAX_DEPTH = 32  # folders below the pattern's base a walk descends, at most


@dataclass
class GlobResult:
    """The files one pattern matched under one base folder, and what stopped the walk."""

    files: list[str] = field(default_factory=list)
    cut: bool = False  # the walk hit MAX_ENTRIES or MAX_DEPTH
    outside: list[str] = field(default_factory=list)  # matches behind a link leading out


def glob_regex(pattern: str) -> str | None:
    """The regular expression of `pattern` against a path relative to its base (None: a
    pattern too long or malformed to match anything)."""
    if len(pattern) > MAX_GLOB_CHARS:
        return None
    out: list[str] = []
    i, depth = 0, 0
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append("(?:.*/)?" if not last else ".*")
            continue
        i = 0
        while i < len(part):
            char = part[i]
            if char == "*":
                while i + 1 < len(part) and part[i + 1] == "*":
                    i += 1
                out.append("[^/]*")
            elif char == "?":
                out.append("[^/]")
            elif char == "[":
                end = part.find("]", i + 2)
                if end < 0:
                    out.append(literal(char))
                else:
                    body = part[i + 1:end]
                    negate = body[:1] in ("!", "^")
                    body = body[1:] if negate else body
                    escaped = "".join("\\" + c if c in "\\^]" else c for c in body)
                    out.append(f"[{'^' if negate else ''}{escaped}]")
                    i = end
            elif char == "{":
                depth += 1
                out.append("(?:")
            elif char == "}" and depth:
                depth -= 1
                out.append(")")
            elif char == "," and depth:
                out.append("|")
            else:
                out.append(literal(char))
            i += 1
        if not last:
            out.append("/")
    if depth:
        return None
    return "".join(out)


def _fixed_depth(pattern: str) -> int | None:
    """How many path parts a pattern without `**` spans (None: any number)."""
    parts = pattern.split("/")
    return None if "**" in parts else len(parts)


def glob_files(pattern: str, base: str, inside: str) -> GlobResult:
    """The files under `base` that `pattern` matches, as absolute paths (normalised: `..`
    and `.` parts of the pattern applied), in OpenCode's order within a folder (the reverse
    of the folder's listing; across folders its order was not stable enough to pin down: a
    folder's files here come before its subfolders'). Only paths within `inside` are listed: a
    pattern that climbs out of it, or a link that leads out, lists nothing there."""
    result = GlobResult()
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    # Leading literal parts (`..`, a folder name) move the base: the walk starts there.
    while len(parts) > 1 and not any(c in parts[0] for c in "*?[{") and parts[0] != "**":
        base = posixpath.normpath(posixpath.join(base, parts.pop(0)))
    rest = "/".join(parts)
    if not rest or ".." in parts:
        return result
    regex = glob_regex(rest)
    if regex is None or not _within(base, inside):
        return result
    limit = _fixed_depth(rest)
    real_inside = os.path.realpath(inside)
    if not _within(os.path.realpath(base), real_inside):
        return result  # the base is (or lies behind) a link leading out
    listed = 0
    stack: list[tuple[str, str, int]] = [(base, "", 1)]
    while stack:
        folder, rel, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                # OpenCode's glob gives a folder's matches in the reverse of the order the
                # folder lists them (its readdir order, which os.scandir keeps).
                found = list(entries)[::-1]
        except OSError:
            continue
        listed += len(found)
        if listed > MAX_ENTRIES:
            result.cut = True
            break
        subfolders: list[tuple[str, str, int]] = []
        for entry in found:
            path = posixpath.join(folder, entry.name)
            relative = f"{rel}{entry.name}"
            try:
                is_dir = entry.is_dir()  # follows a link, as OpenCode's walk does
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            leads_out = entry.is_symlink() and not _within(os.path.realpath(path),
                                                            real_inside)
            if is_file and full_match(regex, relative):
                (result.outside if leads_out else result.files).append(path)
            elif is_dir and not leads_out and (limit is None or depth < limit):
                if depth >= MAX_DEPTH:
                    result.cut = True
                    continue
                subfolders.append((path, relative + "/", depth + 1))
        stack.extend(reversed(subfolders))
    return result


def _within(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")
