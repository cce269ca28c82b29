"""The private per-project folder Gemini CLI keeps under `HOME/.gemini/tmp/<slug>/`.

Gemini CLI's project registry (`HOME/.gemini/projects.json`) maps a project's absolute path to a
short slug of its folder name, with `.project_root` marker files proving ownership. Reading never
changes the registry; claiming a slug (for writing memory) follows the same steps as Gemini CLI so
both tools end up in one folder.
"""

from __future__ import annotations

import os
import re

from .jsonc import read_json_file
from .nodecompat import resolve

PROJECT_MEMORY_INDEX = "MEMORY.md"


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]", "-", text.lower())
    slug = re.sub(r"-+", "-", slug)
    slug = re.sub(r"^-|-$", "", slug)
    return slug or "project"


def _bases(home: str) -> list[str]:
    return [os.path.join(home, ".gemini", "tmp"), os.path.join(home, ".gemini", "history")]


def _marker_owner(base: str, slug: str) -> str | None:
    """Owner recorded in `<base>/<slug>/.project_root`; '' when unreadable, None when absent."""
    marker = os.path.join(base, slug, ".project_root")
    if not os.path.lexists(marker):
        return None
    try:
        with open(marker, encoding="utf-8") as handle:
            return resolve(handle.read().strip())
    except (OSError, ValueError):
        return ""


def find_project_slug(home: str, project_root: str) -> str | None:
    """The slug Gemini CLI has assigned to `project_root`, or None if it has none yet."""
    norm = resolve(project_root)
    registry = read_json_file(os.path.join(home, ".gemini", "projects.json"))
    projects = registry.get("projects") if isinstance(registry, dict) else None
    if isinstance(projects, dict):
        slug = projects.get(norm)
        if isinstance(slug, str) and slug and all(
            _marker_owner(base, slug) in (None, norm) for base in _bases(home)
        ):
            return slug
    for base in _bases(home):
        try:
            entries = os.listdir(base)
        except OSError:
            continue
        for entry in entries:
            if _marker_owner(base, entry) == norm:
                return entry
    return None


def project_memory_dir(home: str, project_root: str) -> str | None:
    slug = find_project_slug(home, project_root)
    if slug is None:
        return None
    return os.path.join(home, ".gemini", "tmp", slug, "memory")
