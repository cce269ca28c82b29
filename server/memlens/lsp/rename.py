"""Moving files: rewrite the imports that point at a moved file (and the moved file's own
relative imports) before the move; re-index after it."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from lsprotocol import types

from ..imports import relative_import
from ..nodecompat import dirname, is_subpath
from .convert import path_of, range_of, uri_of
from .server import MemlensServer

_OPS = [types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"))]
_FILE_OPS = types.FileOperationRegistrationOptions(filters=_OPS)


def _moved(path: str, old: str, new: str) -> str | None:
    if path == old:
        return new
    if path.startswith(old.rstrip("/") + "/"):
        return new.rstrip("/") + path[len(old.rstrip("/")):]
    return None


def _style(original: str, from_dir: str, target: str) -> str:
    return target if original.startswith("/") else relative_import(from_dir, target)


def rename_edits(ls: MemlensServer, renames: list[tuple[str, str]]) -> types.WorkspaceEdit:
    index = ls.require_index()
    changes: dict[str, list[types.TextEdit]] = {}

    def new_location(path: str) -> str:
        for old, new in renames:
            moved = _moved(path, old, new)
            if moved is not None:
                return moved
        return path

    for source in index.graph.files():
        text = ls.text_of(source)
        if text is None:
            continue
        source_after = new_location(source)
        for edge in index.graph.imports_of(source):
            target_after = new_location(edge.target)
            if target_after == edge.target and source_after == source:
                continue
            new_path = _style(edge.token.path, dirname(source_after), target_after)
            if new_path == edge.token.path:
                continue
            rng = range_of(text, edge.token.start + 1, edge.token.end)
            changes.setdefault(uri_of(source), []).append(types.TextEdit(range=rng,
                                                                         new_text=new_path))
    _claude_edits(ls, new_location, changes)
    return types.WorkspaceEdit(changes=changes)


def _claude_style(original: str, from_dir: str, target: str, home: str) -> str:
    """The include rewritten in the form it was written: `@~/…`, `@/abs`, `@./rel`, `@rel`."""
    if original.startswith("~/") and is_subpath(home, target):
        return "~/" + posixpath.relpath(target, home)
    if original.startswith(("/", "~/")):
        return target
    relative = relative_import(from_dir, target)
    return relative if original.startswith(".") else relative.removeprefix("./")


def _claude_edits(ls: MemlensServer, new_location: Callable[[str], str],
                  changes: dict[str, list[types.TextEdit]]) -> None:
    """Claude Code's includes (in its files and what they include) that name a moved file."""
    from ..dialects.claude import find_includes
    from .navigation import claude_target, is_claude_file

    index = ls.require_index()
    for source in index.claude_sources:
        text = ls.text_of(source)
        if text is None or not is_claude_file(ls, source):
            continue
        source_after = new_location(source)
        taken = {(e.range.start.line, e.range.start.character)
                 for e in changes.get(uri_of(source), [])}
        for include in find_includes(text):
            if include.in_code:
                continue
            target = claude_target(ls, source, include.path)
            target_after = new_location(target)
            if target_after == target and source_after == source:
                continue
            new_path = _claude_style(include.path, dirname(source_after), target_after,
                                     index.settings.home)
            rng = range_of(text, include.start + 1, include.end)
            if new_path == include.path or (rng.start.line, rng.start.character) in taken:
                continue
            changes.setdefault(uri_of(source), []).append(types.TextEdit(range=rng,
                                                                         new_text=new_path))


def register(server: MemlensServer) -> None:
    @server.feature(types.WORKSPACE_WILL_RENAME_FILES, _FILE_OPS)
    def will_rename(ls: MemlensServer, params: types.RenameFilesParams
                    ) -> types.WorkspaceEdit | None:
        renames = [(o, n) for f in params.files
                   if (o := path_of(f.old_uri)) and (n := path_of(f.new_uri))]
        edit = rename_edits(ls, renames)
        return edit if edit.changes else None

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, _FILE_OPS)
    def did_rename(ls: MemlensServer, params: types.RenameFilesParams) -> None:
        touched: set[str] = set()
        index = ls.require_index()
        for item in params.files:
            old, new = path_of(item.old_uri), path_of(item.new_uri)
            if old is None or new is None:
                continue
            if posixpath.isdir(new):
                ls.rebuild()
                touched |= set(ls.require_index().roots)
                index = ls.require_index()
                continue
            index.overrides.pop(old, None)
            touched |= index.file_changed(old) | index.file_changed(new)
        ls.jit_sessions.clear()
        ls.claude_jit_sessions.clear()
        ls.publish(touched)
