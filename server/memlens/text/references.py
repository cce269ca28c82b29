"""`@path` references in memory text: the scanner every agent's reference syntax is a case of.

A reference starts with an `@` at the start of the text or after a space, tab, CR or LF; where
its path ends and which first characters make it a path differ between agents (parameters of
`find_references`; the defaults are Gemini CLI's). Code regions are found with Gemini CLI's
backtick-run rule (`find_code_regions`), which is not CommonMark's.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass

_WHITESPACE = frozenset(" \t\n\r")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class ImportToken:
    start: int  # index of the '@'
    end: int  # index just past the path
    path: str
    in_code: bool


def find_code_regions(content: str) -> list[tuple[int, int]]:
    """The matches of Gemini CLI's `/(`+)([\\s\\S]*?)\\1/g`, found in linear time.

    At a run of R backticks the regex tries widths R, R-1, ... 1, each closed by the first
    later occurrence of that many backticks. A width w <= R/2 closes inside the run itself
    (at i+w); a wider one needs a later run at least w long, and the first such run closes
    it. So the width taken is min(R, longest later run) when that exceeds R/2, else R//2;
    a lone backtick with no backtick after it opens nothing. (The regex itself backtracks
    in about N^4 steps on a staircase of runs.)
    """
    if "`" not in content:
        return []
    runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(content)]
    count = len(runs)
    longest_after = [0] * (count + 1)  # longest run among runs[k:]
    for k in range(count - 1, -1, -1):
        longest_after[k] = max(runs[k][1], longest_after[k + 1])
    regions: list[tuple[int, int]] = []
    k = 0  # the run holding the scan position
    i = runs[0][0] if runs else 0
    while k < count:
        start, length = runs[k]
        if i < start:
            i = start
        width_here = start + length - i  # backticks from i to the end of this run
        later = longest_after[k + 1]
        width = min(width_here, later)
        if width * 2 > width_here:
            j = k + 1
            while runs[j][1] < width:  # the first later run long enough (exists: `later`)
                j += 1
            close = runs[j][0] + width
            regions.append((i, close))
            k, i = j, close
            if close == runs[j][0] + runs[j][1]:
                k += 1
            continue
        half = width_here // 2
        if half == 0:  # a lone backtick and no backtick after it
            break
        regions.append((i, i + 2 * half))
        i += 2 * half
        if i == start + length:
            k += 1
    return regions


# Gemini CLI's import path starts with `.`, `/` or an ASCII letter.
_GEMINI_PATH_START = frozenset("./abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _scan(content: str, path_ends: Container[str],
          may_start: Callable[[str], bool]) -> Iterator[tuple[int, int, str]]:
    length = len(content)
    i = 0
    while i < length:
        i = content.find("@", i)
        if i == -1:
            return
        if i > 0 and content[i - 1] not in _WHITESPACE:
            i += 1
            continue
        j = i + 1
        while j < length and content[j] not in path_ends:
            j += 1
        path = content[i + 1 : j]
        if path and may_start(path[0]):
            yield i, j, path
        i = j + 1


def find_references(content: str, *, path_ends: Container[str] = _WHITESPACE,
                    may_start: Callable[[str], bool] = _GEMINI_PATH_START.__contains__
                    ) -> list[ImportToken]:
    """Every `@path` reference in `content`, marked when it lies in a code region.

    A reference starts with an `@` at the start of the text or after a space, tab, CR or LF
    (every agent agrees); where its path ends (`path_ends`) and which first characters make
    it a path (`may_start`) differ between agents, and default to Gemini CLI's scanner."""
    found = list(_scan(content, path_ends, may_start))
    if not found:
        return []
    regions = find_code_regions(content) if "`" in content else []
    starts = [r[0] for r in regions]
    tokens = []
    for start, end, path in found:
        k = bisect.bisect_right(starts, start) - 1
        in_code = k >= 0 and regions[k][0] <= start < regions[k][1]
        tokens.append(ImportToken(start, end, path, in_code))
    return tokens


def relative_import(from_dir: str, target: str) -> str:
    """`target` written relative to `from_dir` as an import: `./x` or `../x`."""
    rel = posixpath.relpath(target, from_dir)
    return rel if rel.startswith("../") else f"./{rel}"
