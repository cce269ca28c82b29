"""The floor every measurement is divided by: a plain walk of the tree (run.py and
walks.py share it; walks.py runs this file as a process of its own for the whole-process
floor)."""

from __future__ import annotations

import os
import sys


def bare_walk(top: str) -> tuple[int, int]:
    """A plain recursive `os.scandir` walk (symlinks not followed): (folders, other entries)."""
    dirs = files = 0
    stack = [top]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        dirs += 1
                        stack.append(entry.path)
                    else:
                        files += 1
        except OSError:
            continue
    return dirs, files


if __name__ == "__main__":
    print(*bare_walk(sys.argv[1]))
