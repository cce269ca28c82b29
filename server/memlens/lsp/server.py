"""The language server: a `MemlensServer` (state.py) with every feature registered on it.
Features import `state.py` for the server's type, never this module."""

from __future__ import annotations

from memlens.lsp import (
    actions,
    budgets,
    chat,
    completion,
    conflicts,
    context_diff,
    custom,
    diagnostics,
    hover,
    lens,
    lifecycle,
    matrix,
    memory,
    navigation,
    rename,
    skills,
    symbols,
    sync,
    verify,
)
from memlens.lsp.state import MemlensServer


def create_server() -> MemlensServer:
    server = MemlensServer()
    for module in (lifecycle, sync, diagnostics, navigation, hover, completion, symbols,
                   actions, lens, rename, custom, chat, memory, skills, context_diff, budgets,
                   verify, matrix, conflicts):
        module.register(server)
    return server


__all__ = ["create_server"]
