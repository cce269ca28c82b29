"""Offsets to 1-based line/column positions in a text."""

from __future__ import annotations

import bisect


class LineIndex:
    def __init__(self, text: str):
        self.starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            self.starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.text = text
        self.bom = text.startswith("\ufeff")

    def position(self, offset: int) -> tuple[int, int]:
        """(line, col), both 1-based; col counts characters."""
        line = bisect.bisect_right(self.starts, offset) - 1
        col = offset - self.starts[line] + 1
        if line == 0 and self.bom and offset > 0:
            col -= 1  # editors do not show (or count) a byte-order mark
        return line + 1, col

    def line_end(self, line: int) -> int:
        """Column just past the last character of 1-based `line` (CR excluded)."""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        if line == 1 and self.bom and end > start:
            start += 1
        return end - start + 1
