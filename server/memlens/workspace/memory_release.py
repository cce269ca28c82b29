"""Hand freed heap back to the operating system after a large transient allocation.

Indexing a big workspace walks tens of thousands of folders and renders every memory file;
most of that is garbage once the index is built, but CPython's allocator and glibc keep the
pages. A language server lives for hours beside the editor, so after each full build we
collect and ask glibc to trim (a no-op on other C libraries).

What survives the collection is the index, kept until the next build: it is then frozen
(`gc.freeze`), so that the cyclic collector, which a request's allocations set off now and
then, no longer scans hundreds of thousands of index objects each time (on a 300k-file
workspace such a pass made one `memlens/matrix` or hover tens to hundreds of milliseconds
slower). The next build unfreezes it first, so the old index's cycles are collected.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
_looked_up = False


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked_up
    if not _looked_up:
        _looked_up = True
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name) if name else None
            _trim = getattr(libc, "malloc_trim", None)
        except OSError:
            _trim = None
    return _trim


def release_freed_memory() -> None:
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
