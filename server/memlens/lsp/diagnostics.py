"""Pull diagnostics: per document and for the whole workspace (push lives in sync.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.lsp.convert import path_of, uri_of

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="memlens", inter_file_dependencies=True,
                                            workspace_diagnostics=True))
    def document_diagnostic(ls: MemlensServer, params: types.DocumentDiagnosticParams
                            ) -> types.RelatedFullDocumentDiagnosticReport:
        path = path_of(params.text_document.uri)
        items = ls.lsp_diagnostics(path) if path else []
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(ls: MemlensServer, params: types.WorkspaceDiagnosticParams
                             ) -> types.WorkspaceDiagnosticReport:
        reports: list[types.WorkspaceDocumentDiagnosticReport] = []
        for path in sorted(ls.service.diagnosed_paths()):
            reports.append(types.WorkspaceFullDocumentDiagnosticReport(
                uri=uri_of(path), items=ls.lsp_diagnostics(path), version=None))
        return types.WorkspaceDiagnosticReport(items=reports)
