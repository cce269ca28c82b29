"""Answers the language server keeps until the workspace changes (pure engine).

The agent matrix (workspace/matrix.py) walks the folder and asks every agent; the editor asks
for it again whenever the panel is shown. It is kept per (folder, agents asked for, workspace
generation): the generation (WorkspaceService.generation) moves with every build, edit and
batch of changed files, so a second request without changes is answered at once and the
first after a change computes once — also when two ask at once (the Agent Matrix panel and
the conflict squiggles' computation, lsp/conflicts.py): the second waits for the first's answer
instead of computing it again beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from memlens.protocol.matrix import MatrixResult

MatrixKey = tuple[str, tuple[str, ...] | None]


class AnswerCache:
    """The last matrix per (folder, agents), with the generation it was computed at."""

    def __init__(self) -> None:
        self._matrices: dict[MatrixKey, tuple[int, MatrixResult]] = {}
        self._lock = threading.Lock()  # the server computes matrices on worker threads
        # The computations under way, per (key, generation): who asks meanwhile waits.
        self._running: dict[tuple[MatrixKey, int], threading.Event] = {}
        self.computed = 0  # how many were computed (not served from the cache)

    def matrix(self, folder: str, agents: Sequence[str] | None, generation: int,
               compute: Callable[[], MatrixResult]) -> MatrixResult:
        key: MatrixKey = (folder, tuple(agents) if agents is not None else None)
        with self._lock:
            kept = self._matrices.get(key)
            if kept is not None and kept[0] == generation:
                return kept[1]
            running = self._running.get((key, generation))
            if running is None:
                done = self._running[(key, generation)] = threading.Event()
        if running is None:
            return self._compute(key, generation, compute, done)
        # Someone computes this very answer: wait for it and take it from the cache (or
        # compute it here when that computation failed or a newer generation replaced it).
        running.wait()
        with self._lock:
            kept = self._matrices.get(key)
            if kept is not None and kept[0] == generation:
                return kept[1]
        return self._compute(key, generation, compute, None)

    def _compute(self, key: MatrixKey, generation: int, compute: Callable[[], MatrixResult],
                 done: threading.Event | None) -> MatrixResult:
        try:
            result = compute()
            with self._lock:
                self.computed += 1
                # A change that came in meanwhile left a newer generation: keep the newest.
                if key not in self._matrices or self._matrices[key][0] <= generation:
                    self._matrices[key] = (generation, result)
            return result
        finally:
            if done is not None:
                with self._lock:
                    self._running.pop((key, generation), None)
                done.set()
