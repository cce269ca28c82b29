"""Where `memlens mcp` may look (docs/mcp.md "Bounds"): the workspace folders it serves — the
client's roots when it gives them, else the folder it was started in — and nothing else. A
folder or path is taken relative to the first root, resolved with every symbolic link
followed, and refused unless it lies inside a root. The settings in force for a folder are the
command line's (`memlens show` with no options): Gemini CLI's settings and folder trust, the
agents pinned (`MEMLENS_AGENTS`) or found on PATH."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from urllib.parse import unquote, urlparse

from memlens.agent_versions import InstalledAgent, parse_agent_spec
from memlens.files.nodecompat import is_subpath
from memlens.model import MemorySettings

# The most text one answer carries in one field (characters); `memlens show` prints the rest.
MAX_TEXT = 1_000_000
# The most characters a folder or path argument may have.
MAX_PATH = 4096


class Refused(ValueError):
    """A request `memlens mcp` does not answer: the message says why, to the host's model."""


def roots_from_uris(uris: Sequence[str]) -> list[str]:
    """The local folders of the client's `file://` roots (others are skipped)."""
    folders = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
            folder = os.path.realpath(unquote(parsed.path))
            if os.path.isdir(folder):
                folders.append(folder)
    return list(dict.fromkeys(folders))


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or is_subpath(root, path) for root in roots)


def _checked(text: str, what: str) -> str:
    if not text or len(text) > MAX_PATH or "\0" in text:
        raise Refused(f"{what} must be a path of 1 to {MAX_PATH} characters without NUL")
    return text


def folder_in(roots: Sequence[str], folder: str | None) -> str:
    """The workspace folder `folder` names (None, "" or "."; the first root), resolved;
    Refused when it is not a folder inside a root."""
    if not roots:
        raise Refused("memlens mcp serves no workspace folder: the client gave no file:// "
                      "root and the working folder is not one")
    if folder in (None, "", "."):
        return roots[0]
    assert folder is not None
    real = os.path.realpath(os.path.join(roots[0], _checked(folder, "folder")))
    if not _inside(real, roots):
        raise Refused(f"{folder} is outside the workspace folders memlens mcp serves "
                      f"({', '.join(roots)}): it answers for those only")
    if not os.path.isdir(real):
        raise Refused(f"{folder} is not a folder")
    return real


def path_in(roots: Sequence[str], path: str, folder: str) -> str:
    """The absolute path `path` names (relative to `folder`); Refused outside every root. The
    path need not exist: writing a new file is one of the touches asked about."""
    joined = os.path.normpath(os.path.join(folder, _checked(path, "path")))
    if not _inside(os.path.realpath(joined), roots):
        raise Refused(f"{path} is outside the workspace folders memlens mcp serves "
                      f"({', '.join(roots)}): it answers for those only")
    return joined


def root_of(roots: Sequence[str], path: str) -> str:
    """The innermost root holding `path` (the folder its agents are taken to work in)."""
    real = os.path.realpath(path)
    holding = [r for r in roots if real == r or is_subpath(r, real)]
    return max(holding, key=len) if holding else roots[0]


def agent_pin(agent: str) -> tuple[str, str]:
    """`agent` as `--agent` takes it (NAME[@VERSION]): its id and the pin that chooses its
    profile; Refused for an agent Memory Lens does not know."""
    from memlens.agents import AGENT_IDS

    try:
        name, version = parse_agent_spec(agent)
    except (ValueError, KeyError) as err:
        raise Refused(str(err).strip("'\"") or f"unknown agent {agent!r} (one of "
                      f"{', '.join(AGENT_IDS)})") from None
    if version:
        return name, f"{name}@{version}"
    # A name without a version takes the version MEMLENS_AGENTS pins for it, as `--agent` does.
    from memlens.agents.gemini.settings import env_agent_pins

    return name, next((p for p in env_agent_pins() if p.partition("@")[0] == name), name)


def settings_for(folder: str, installed: Mapping[str, InstalledAgent],
                 pin: str | None = None) -> MemorySettings:
    """The settings in force working in `folder`, as the command line has them; `pin`: the
    one agent (and profile) asked about, as `--agent` sets it."""
    from memlens.agents.gemini.settings import load_settings

    return load_settings(folder, cli={"agents": [pin]} if pin else None, installed=installed)
