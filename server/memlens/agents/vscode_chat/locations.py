"""Which folders of `chat.instructionsFilesLocations` Memory Lens walks, and the bounded walk
itself (docs/security.md, "VS Code chat's instruction locations").

VS Code's chat searches every enabled location, wherever it points. Memory Lens reads only
where the settings' author may send it:

- a location the *workspace's* settings enabled (and no default or user setting had) is
  walked only inside the workspace folders (the folders up to the repository root with
  `chat.useCustomizationsInParentRepositories`): a repository must not make us read `~/.ssh`;
- a location the defaults or the *user's* settings name is walked inside the workspace folders
  or HOME; one whose path lies in the workspace must stay there once its links are followed
  (the repository decides where `.github/instructions` really is);
- `/`, `/proc`, `/sys` and `/dev` (and what lies below the last three) are never walked.

Every path is judged by its real path (every link followed). A location that is not walked is
still shown, with why (`NotWalked`, the `vscode-chat-location-outside` diagnostic). During the
walk a link whose target leaves the location's area is not followed, and the walk looks at no
more than `MAX_ENTRIES` directory entries, and `MAX_LOCATIONS` locations, in all
(`vscode-chat-walk-truncated` past either).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from memlens.files import tree
from memlens.files.nodecompat import is_subpath

MAX_DEPTH = 5  # subfolders of an instructions folder searched (not below a workspace folder)
# Directory entries one load's walks of the locations look at: far above any real
# instructions folder, far below a disk.
MAX_ENTRIES = 20_000
# Locations (enabled, resolved per root) one load considers: no one names a thousand, and
# each costs a `realpath` and perhaps a diagnostic.
MAX_LOCATIONS = 1_000
# Folders the search for nested AGENTS.md files enters (the default of Memory Lens's own
# workspace walk, `memlens.maxIndexedFolders`).
MAX_FOLDERS = 50_000
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")

# Why a path is not walked, said after "PATH is".
OUTSIDE_BOTH = "outside the workspace and home"
OUTSIDE_WORKSPACE = "outside the workspace, and the workspace's own settings name it"
LINKS_OUT = "a link out of the workspace"
SYSTEM = "a system folder (/, /proc, /sys and /dev are never walked)"
LINK_OUT = "a link out of the folders its location may be read from"


@dataclass(frozen=True)
class Location:
    """One enabled location, resolved against one root (a relative one is per root)."""

    name: str  # as the setting writes it
    folder: str  # the absolute folder it names (links not followed)
    storage: str  # "user" (a `~/` location) or "local"
    scope: str  # who enabled it: "default", "user" or "workspace"
    source: str | None  # the settings file that enabled it (None: VS Code's default)


@dataclass(frozen=True)
class NotWalked:
    """A location Memory Lens does not walk, or a link inside one it does not follow."""

    path: str
    why: str
    location: str  # the location's name as the setting writes it
    source: str | None  # the settings file that named it
    scope: str

    def wire(self) -> dict[str, object]:
        return {"path": self.path, "location": self.location, "why": self.why,
                "namedIn": self.source}


@dataclass
class Budget:
    """What a walk may still look at (directory entries, or folders)."""

    limit: int
    taken: int = 0
    stopped_in: str | None = None  # the folder where the walk stopped, once it has

    def take(self, folder: str) -> bool:
        if self.taken >= self.limit:
            self.stopped_in = self.stopped_in or folder
            return False
        self.taken += 1
        return True


def is_system(real: str) -> bool:
    return real == "/" or any(is_subpath(s, real) for s in SYSTEM_FOLDERS)


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


@dataclass
class Walked:
    """What one load's walks share: their budgets, and what they did not walk."""

    budget: Budget = field(default_factory=lambda: Budget(MAX_ENTRIES))  # the locations'
    folders: Budget = field(default_factory=lambda: Budget(MAX_FOLDERS))  # nested AGENTS.md
    locations: Budget = field(default_factory=lambda: Budget(MAX_LOCATIONS))
    not_walked: list[NotWalked] = field(default_factory=list)


@dataclass
class Areas:
    """Where a location may lead: the workspace folders, and HOME for the user's own."""

    roots: list[str]  # real paths (the workspace is real, so are the folders above it)
    home: str | None  # real; None when HOME is `/` (it would contain everything)

    @classmethod
    def of(cls, roots: list[str], home: str) -> Areas:
        real_home = _real(home)
        return cls([_real(r) for r in roots], None if real_home == "/" else real_home)

    def in_roots(self, real: str) -> bool:
        return any(is_subpath(r, real) for r in self.roots)

    def area_of(self, location: Location, not_walked: list[NotWalked]) -> list[str] | None:
        """The real folders `location`'s walk may enter, or None (it is not walked; why is
        recorded in `not_walked`)."""
        real = _real(location.folder)
        why: str | None = None
        area = self.roots
        if is_system(real) or is_system(location.folder):
            why = SYSTEM
        elif location.scope == "workspace":
            if not self.in_roots(real):
                why = OUTSIDE_WORKSPACE
        elif self.in_roots(location.folder):
            if not self.in_roots(real):
                why = LINKS_OUT
        else:
            area = self.roots + ([self.home] if self.home else [])
            if not any(is_subpath(a, real) for a in area):
                why = OUTSIDE_BOTH
        if why is None:
            return area
        not_walked.append(NotWalked(location.folder, why, location.name, location.source,
                                         location.scope))
        return None


def _sorted_entries(folder: str) -> list[tuple[str, int]]:
    """`folder`'s entries by name, each with its kind (`files.tree`: the run's listing inside
    `one_walk()`)."""
    if tree.active():
        return sorted(tree.listing(folder).entries)
    return sorted(tree.read_listing(folder).entries)


def files_in(location: Location, area: list[str], recurse: bool, budget: Budget,
             not_walked: list[NotWalked]) -> list[str]:
    """The files in `location`'s folder, by name, its subfolders searched to `MAX_DEPTH` when
    `recurse`; a link whose real path leaves `area` (or enters a system folder) is left out
    and recorded."""

    def allowed(path: str) -> bool:
        real = _real(path)
        return not is_system(real) and any(is_subpath(a, real) for a in area)

    def walk(folder: str, depth: int) -> list[str]:
        try:
            entries = _sorted_entries(folder)
        except OSError:
            return []
        found: list[str] = []
        for name, kind in entries:
            if not budget.take(folder):
                break
            if kind == tree.UNKNOWN:
                continue
            path = posixpath.join(folder, name)
            if kind in tree.LINKS and not allowed(path):
                not_walked.append(NotWalked(path, LINK_OUT, location.name,
                                            location.source, location.scope))
                continue
            if kind in tree.FILES:
                found.append(path)
            elif recurse and depth < MAX_DEPTH and kind in tree.FOLDERS:
                found += walk(path, depth + 1)
        return found

    return walk(location.folder, 0)
