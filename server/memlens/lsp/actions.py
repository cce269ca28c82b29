"""Code actions: create a missing import target, make an absolute import relative, remove an
import that closes a cycle, keep a prose `@mention` literal, remove hidden characters
(`hidden_actions.py`), open two rules that disagree side by side. A reference is found and
resolved as the agent reading the file reads it (links.py `shown_reading_agent`: a CLAUDE.md's
`@~/x` names HOME/x)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agents.base import MemoryAgent
from memlens.files.nodecompat import dirname, is_subpath
from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.hidden_actions import hidden_text_actions
from memlens.lsp.links import reference_target, shown_reading_agent
from memlens.text.references import ImportToken, relative_import

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer


def _token_at_offset(agent: MemoryAgent | None, text: str, offset: int) -> ImportToken | None:
    for token in agent.find_references(text) if agent else []:
        if not token.in_code and token.start <= offset <= token.end:
            return token
    return None


def _edit(uri: str, rng: types.Range, new_text: str) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=rng, new_text=new_text)]})


def _side_by_side(uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """"Open both side by side": this rule and each one it disagrees with (the related
    information). The client only opens the two files at the two lines."""
    out = []
    for other in diagnostic.related_information or []:
        where = other.location
        name = posixpath.basename(path_of(where.uri) or where.uri)
        title = f"Open both side by side ({name}:{where.range.start.line + 1})"
        out.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
            command=types.Command(title=title, command="memlens.openSideBySide", arguments=[
                uri, diagnostic.range.start.line, where.uri, where.range.start.line])))
    return out


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix,
                                                               types.CodeActionKind.Refactor]))
    def code_action(ls: MemlensServer, params: types.CodeActionParams
                    ) -> list[types.CodeAction]:
        uri = params.text_document.uri
        path = path_of(uri)
        text = ls.text_of(path) if path else None
        if path is None or text is None:
            return []
        actions = hidden_text_actions(ls, uri, text, params.context.diagnostics)
        agent = shown_reading_agent(ls, path)
        for diagnostic in params.context.diagnostics:
            if diagnostic.code == "instruction-conflict":
                actions += _side_by_side(uri, diagnostic)
                continue
            if diagnostic.code == "memory-duplicate-entry":
                line = diagnostic.range.start.line
                whole = types.Range(start=types.Position(line=line, character=0),
                                    end=types.Position(line=line + 1, character=0))
                actions.append(types.CodeAction(
                    title="Remove the duplicate memory", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], edit=_edit(uri, whole, ""), is_preferred=True))
                continue
            token = _token_at_offset(agent, text,
                                     ls.positions.offset_at(text, diagnostic.range.start))
            if agent is None or token is None:
                continue
            rng = ls.positions.range_of(text, token.start, token.end)
            target = reference_target(ls, agent, path, token.path)
            if diagnostic.code == "import-not-found":
                # A file made only where the user keeps memory: in a workspace folder, or in
                # HOME (a CLAUDE.md's `@~/notes.md`); a missing `@/abs` or `@../..` elsewhere
                # is the repository's to name, not ours to create.
                if (ls.service.folder_for(target) is None
                        and not is_subpath(ls.service.settings_for(path).home, target)):
                    continue
                actions.append(types.CodeAction(
                    title=f"Create {posixpath.relpath(target, dirname(path))}",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    edit=types.WorkspaceEdit(document_changes=[types.CreateFile(
                        uri=uri_of(target),
                        options=types.CreateFileOptions(ignore_if_exists=True))])))
            elif diagnostic.code == "import-cycle":
                actions.append(types.CodeAction(
                    title=f"Remove the import @{token.path} (closes a cycle)",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    edit=_edit(uri, rng, "")))
            elif diagnostic.code == "import-in-prose":
                actions.append(types.CodeAction(
                    title=f"Keep `@{token.path}` literal (wrap in backticks)",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    edit=_edit(uri, rng, f"`@{token.path}`")))
        cursor = _token_at_offset(agent, text, ls.positions.offset_at(text, params.range.start))
        if agent is not None and cursor is not None and cursor.path.startswith("/"):
            relative = relative_import(dirname(path),
                                       reference_target(ls, agent, path, cursor.path))
            rng = ls.positions.range_of(text, cursor.start + 1, cursor.end)
            actions.append(types.CodeAction(
                title=f"Make the import relative ({relative})",
                kind=types.CodeActionKind.Refactor, edit=_edit(uri, rng, relative)))
        return actions
