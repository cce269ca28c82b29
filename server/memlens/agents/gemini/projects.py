"""The private per-project folder Gemini CLI keeps under `HOME/.gemini/tmp/<slug>/`.

Gemini CLI's project registry (`HOME/.gemini/projects.json`) maps a project's absolute path to a
short slug of its folder name, with `.project_root` marker files proving ownership. Reading never
changes the registry; claiming a slug (for writing memory) follows the same steps as Gemini CLI so
both tools end up in one folder.
"""

from __future__ import annotations

import contextlib
import os
import re

from memlens.agents.gemini.jsonc import read_json_file
from memlens.files.nodecompat import resolve

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


class RegistryLockError(OSError):
    """Gemini CLI's project registry stayed locked (another process holds it)."""


def _lock_registry(path: str, attempts: int = 100, delay: float = 0.1) -> str:
    """proper-lockfile's protocol (a `<file>.lock` directory), so Gemini CLI and we exclude
    each other; a lock older than 10 s is stale, as proper-lockfile considers it."""
    import time

    lock = path + ".lock"
    for _ in range(attempts):
        try:
            os.mkdir(lock)
            return lock
        except FileExistsError:
            try:
                if time.time() - os.stat(lock).st_mtime > 10:
                    os.rmdir(lock)
                    continue
            except OSError:
                pass
            time.sleep(delay)
    raise RegistryLockError(f"the project registry {path} is locked by another process")


def _write_json(path: str, data: object) -> None:
    """Replace `path` atomically: a uniquely named temp file beside it, fsync, rename (two
    writers never share a temp name; the caller holds the registry lock)."""
    import json
    import tempfile

    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _claim_marker(base: str, slug: str, norm: str) -> None:
    folder = os.path.join(base, slug)
    os.makedirs(folder, exist_ok=True)
    marker = os.path.join(folder, ".project_root")
    if not os.path.exists(marker):
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(norm)


def claim_project_slug(home: str, project_root: str) -> str:
    """The slug for `project_root`, registering one as Gemini CLI's `getShortId` does."""
    norm = resolve(project_root)
    gemini = os.path.join(home, ".gemini")
    os.makedirs(gemini, exist_ok=True)
    registry_path = os.path.join(gemini, "projects.json")
    # The lock comes first: creating the registry is an update like any other (Gemini CLI
    # creates it before locking, so two first writers could race on one temp name).
    lock = _lock_registry(registry_path)
    try:
        data = read_json_file(registry_path)
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            projects = {}
        existing = find_project_slug(home, norm)
        if existing is not None:
            for base in _bases(home):
                _claim_marker(base, existing, norm)
            if projects.get(norm) != existing or not os.path.exists(registry_path):
                projects[norm] = existing
                _write_json(registry_path, {"projects": projects})
            return existing
        taken = set(projects.values())
        base_slug = slugify(os.path.basename(norm) or "project")
        index = 0
        while True:
            candidate = base_slug if index == 0 else f"{base_slug}-{index}"
            index += 1
            if candidate in taken or any(
                    _marker_owner(b, candidate) not in (None, norm) for b in _bases(home)):
                continue
            try:
                for base in _bases(home):
                    _claim_marker(base, candidate, norm)
            except OSError:
                continue
            projects[norm] = candidate
            _write_json(registry_path, {"projects": projects})
            return candidate
    finally:
        os.rmdir(lock)


def project_temp_dir(home: str, project_root: str, *, claim: bool = False) -> str | None:
    """`HOME/.gemini/tmp/<slug>` (registering the project first when `claim`)."""
    slug = claim_project_slug(home, project_root) if claim else find_project_slug(home,
                                                                                 project_root)
    return None if slug is None else os.path.join(home, ".gemini", "tmp", slug)
