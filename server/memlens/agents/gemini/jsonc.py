"""JSON with comments and trailing commas, as Gemini CLI's settings files allow."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*[\s\S]*?\*/')


def strip_json_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def read_json_file(path: str | Path) -> Any:
    """Parsed JSON (comments and trailing commas tolerated), or None if missing or invalid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    text = re.sub(r",(\s*[}\]])", r"\1", strip_json_comments(text))
    try:
        return json.loads(text)
    except ValueError:
        return None
