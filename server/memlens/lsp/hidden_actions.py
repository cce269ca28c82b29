"""Quick fixes for `hidden-text` (used by the code-action feature, `actions.py`): remove the
hidden characters of one run, remove every hidden run in the file, or — for tag characters and
variation selectors that spell text — replace them with the text they spell, so a reviewer
sees it. Each edit deletes (or replaces) exactly the code points of the runs `hidden.py`
reports: legitimate joiners and selectors (emoji, Persian, Indic) are never touched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.text.hidden import HIDDEN_TEXT, HiddenRun, find_hidden

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

REMOVE = "Remove hidden characters"
REMOVE_ALL = "Remove all hidden characters in this file"


def _edits(ls: MemlensServer, text: str, runs: list[HiddenRun], reveal: bool = False
           ) -> list[types.TextEdit]:
    return [types.TextEdit(range=ls.positions.range_of(text, run.start, run.end),
                           new_text=(run.decoded or "") if reveal else "") for run in runs]


def hidden_text_actions(ls: MemlensServer, uri: str, text: str,
                        diagnostics: Sequence[types.Diagnostic]) -> list[types.CodeAction]:
    """The quick fixes for the `hidden-text` diagnostics among `diagnostics` (the request's
    context)."""
    mine = [d for d in diagnostics if d.code == HIDDEN_TEXT]
    if not mine:
        return []
    runs = find_hidden(text)
    actions: list[types.CodeAction] = []
    for diagnostic in mine:
        start = ls.positions.offset_at(text, diagnostic.range.start)
        end = ls.positions.offset_at(text, diagnostic.range.end)
        hit = [r for r in runs if r.start < max(end, start + 1) and start < r.end]
        if not hit:
            continue
        count = sum(r.count for r in hit)
        actions.append(types.CodeAction(
            title=f"{REMOVE} ({count} code point{'' if count == 1 else 's'})",
            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=True,
            edit=types.WorkspaceEdit(changes={uri: _edits(ls, text, hit)})))
        spelled = [r for r in hit if r.decoded]
        if spelled:
            shown = "".join(r.decoded or "" for r in spelled)
            if len(shown) > 60:
                shown = shown[:59] + "…"
            actions.append(types.CodeAction(
                title=f'Show the hidden text: replace with "{shown}"',
                kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                edit=types.WorkspaceEdit(changes={uri: _edits(ls, text, spelled, True)})))
    if len(runs) > 1 or (runs and not actions):
        total = sum(r.count for r in runs)
        actions.append(types.CodeAction(
            title=f"{REMOVE_ALL} ({total} code points in {len(runs)} places)",
            kind=types.CodeActionKind.QuickFix, diagnostics=mine,
            edit=types.WorkspaceEdit(changes={uri: _edits(ls, text, runs)})))
    return actions
