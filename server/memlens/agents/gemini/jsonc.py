"""JSON with comments and trailing commas, as Gemini CLI's settings files allow, read through
the one reader for what others supply (`files.structured`: regular files only, bounded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlens.files.structured import (
    json_file_or_none,
    load_json_file,
    strip_json_comments,
)

__all__ = ["load_json_file", "read_json_file", "read_settings_file", "strip_json_comments"]


def read_json_file(path: str | Path) -> Any:
    """Parsed JSON (comments and trailing commas tolerated), or None if missing or unreadable
    in any way (not a regular file, too large, nested too deeply, not JSON)."""
    return json_file_or_none(str(path), comments=True)


def read_settings_file(path: str | Path) -> Any:
    """A Gemini CLI settings file: its JSON (comments and trailing commas tolerated), None when
    there is none; `files.structured.StructuredDataError` saying why when it cannot be read."""
    return load_json_file(str(path), comments=True)
