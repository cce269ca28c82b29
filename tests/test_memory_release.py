"""After a build the language server collects, freezes what survives (the index: the cyclic
collector stops rescanning it) and, at the next build, unfreezes first so the old index's
cycles are collected (workspace/memory_release.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from memlens.workspace.memory_release import release_freed_memory


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()


def test_what_survives_a_build_is_frozen_and_freed_after_the_next() -> None:
    index = _Node()
    alive = weakref.ref(index)
    release_freed_memory()  # after a build: the index survives, frozen
    assert gc.get_freeze_count() > 0
    del index  # the next build replaces it
    gc.collect()
    assert alive() is not None  # frozen: an ordinary collection does not free it
    release_freed_memory()  # after the next build: unfrozen first, then collected
    assert alive() is None
