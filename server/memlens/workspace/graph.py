"""The workspace's import graph: who imports whom, with the token that does it.

Edges are static (every import token outside code, resolved against its own folder), so they
answer go-to-definition and find-references, and tell which files depend on an edited one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from memlens.agents.gemini.imports import find_imports
from memlens.files.nodecompat import dirname, resolve
from memlens.text.references import ImportToken


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    token: ImportToken


class ImportGraph:
    def __init__(self) -> None:
        self.forward: dict[str, list[Edge]] = {}
        self.reverse: dict[str, set[str]] = {}

    def update_file(self, path: str, text: str | None) -> None:
        """Replace `path`'s outgoing edges with those parsed from `text` (None: file gone)."""
        for edge in self.forward.pop(path, []):
            sources = self.reverse.get(edge.target)
            if sources is not None:
                sources.discard(path)
                if not sources:
                    del self.reverse[edge.target]
        if text is None:
            return
        edges = [Edge(path, resolve(dirname(path), t.path), t)
                 for t in find_imports(text) if not t.in_code]
        self.forward[path] = edges
        for edge in edges:
            self.reverse.setdefault(edge.target, set()).add(path)

    def imports_of(self, path: str) -> list[Edge]:
        return self.forward.get(path, [])

    def importers_of(self, path: str) -> list[Edge]:
        return [e for src in sorted(self.reverse.get(path, ())) for e in self.forward[src]
                if e.target == path]

    def dependents(self, path: str) -> set[str]:
        """Every file whose rendering can change when `path` changes (transitive importers)."""
        seen: set[str] = set()
        queue = deque([path])
        while queue:
            for source in self.reverse.get(queue.popleft(), ()):
                if source not in seen:
                    seen.add(source)
                    queue.append(source)
        return seen

    def imported_by(self, path: str) -> list[str]:
        """Every file `path`'s rendering imports, directly or through other imports, each
        once (in the order first reached), `path` itself left out."""
        seen: dict[str, None] = {}
        queue = deque([path])
        while queue:
            for edge in self.forward.get(queue.popleft(), []):
                if edge.target != path and edge.target not in seen:
                    seen[edge.target] = None
                    queue.append(edge.target)
        return list(seen)

    def files(self) -> list[str]:
        return sorted(self.forward)
