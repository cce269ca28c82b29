"""Reasons said once: each long reason that two or more cells of the matrix give word for word
becomes a numbered note under the table (`MatrixResult.notes`), and those cells say "see note
N" (`MatrixCell.note`); eight agents and many nested files repeat the same lines otherwise. A
reason whose general part comes before "; " and differs only after it ("not read working here:
…; started in pkg/ it reads this one") shares that part: the cell keeps the rest
(`note_rest`). A short reason ("project memory") stays in its cells: a note would be longer.
The editor's matrix and `memlens report --html` both render these; neither decides them."""

from __future__ import annotations

from collections import Counter

from memlens.protocol.matrix import MatrixResult

NOTE_AFTER = 60  # characters: a longer reason said in two cells or more becomes a note


def add_notes(result: MatrixResult) -> MatrixResult:
    """`result` with its shared reasons numbered as notes and its cells pointing at them."""
    cells = [cell for row in result.rows for cell in row.cells.values() if not cell.foreign]
    whys = list(dict.fromkeys(cell.why for cell in cells))
    whole = Counter(cell.why for cell in cells if len(cell.why) > NOTE_AFTER)
    heads = Counter(why.split("; ", 1)[0] for why in whys
                    if whole[why] < 2 and "; " in why
                    and len(why.split("; ", 1)[0]) > NOTE_AFTER)
    numbers: dict[str, int] = {}
    said: dict[str, tuple[int, str]] = {}
    for why in whys:
        if whole[why] > 1:
            said[why] = (numbers.setdefault(why, len(numbers) + 1), "")
        elif "; " in why and heads[head := why.split("; ", 1)[0]] > 1:
            said[why] = (numbers.setdefault(head, len(numbers) + 1), why.split("; ", 1)[1])
    for row in result.rows:  # copies: a cell may be a memo another matrix shares
        row.cells = {agent: cell.model_copy(update={"note": said[cell.why][0],
                                                    "note_rest": said[cell.why][1]})
                     if not cell.foreign and cell.why in said else cell
                     for agent, cell in row.cells.items()}
    result.notes = list(numbers)
    return result
