"""File tools: read_file and list_directory read; write_file and replace write, each after the
user's approval of its diff. Each appends the memory JIT loads for the path it touched."""

from __future__ import annotations

import os
import posixpath
import threading
from typing import Any, ClassVar

from pydantic import Field

from memlens.agent.tools.base import (
    INTEGER,
    STRING,
    BlockingTool,
    NonBlank,
    PlannedCall,
    ToolArgs,
    ToolOutcome,
    ToolRefused,
)
from memlens.agent.tools.workspace import Workspace
from memlens.agents.gemini.writing import atomic_write, create_patch
from memlens.files.pathpolicy import PathRefused

READ_LIMIT_LINES = 2000


class WorkspaceTool(BlockingTool):
    """A tool working on files of its workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace


class ReadFileArgs(ToolArgs):
    absolute_path: NonBlank
    offset: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, ge=1)


class ReadFile(WorkspaceTool):
    name = "read_file"
    description = "Reads a text file of the workspace. Use absolute paths."
    properties: ClassVar[dict[str, Any]] = {
        "absolute_path": {**STRING, "description": "Absolute path of the file."},
        "offset": {**INTEGER, "description": "0-based line to start from."},
        "limit": {**INTEGER, "description": "Maximum number of lines."}}
    arguments = ReadFileArgs

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ReadFileArgs)
        path, _ = self.workspace.read_target(call.tool, params.absolute_path, "absolute_path")
        try:
            data = self.workspace.policy.read_bytes(path, 20_000_000).data
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        if b"\x00" in data[:8192]:
            output = f"Cannot display content of binary file: {path}"
        else:
            lines = data.decode("utf-8", "replace").splitlines(keepends=True)
            offset = params.offset or 0
            limit = params.limit or READ_LIMIT_LINES
            chunk = lines[offset: offset + limit]
            output = "".join(chunk)
            if offset + limit < len(lines):
                output = (f"[File content truncated: showing lines {offset + 1}-"
                          f"{offset + len(chunk)} of {len(lines)} total lines. Use offset/limit "
                          f"to read more.]\n{output}")
        output, jit = self.workspace.with_jit(output, path)
        return ToolOutcome(True, output, f"read {posixpath.basename(path)}", jit)


class ListDirectoryArgs(ToolArgs):
    path: NonBlank


class ListDirectory(WorkspaceTool):
    name = "list_directory"
    description = "Lists a folder of the workspace (folders first)."
    properties: ClassVar[dict[str, Any]] = {
        "path": {**STRING, "description": "Absolute path of the folder."}}
    arguments = ListDirectoryArgs

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, ListDirectoryArgs)
        self.workspace.allow_listing(params.path)
        return super().plan(args, params)

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ListDirectoryArgs)
        path = self.workspace.directory(params.path)
        entries = sorted(((not is_dir, posixpath.basename(full).lower(),
                           posixpath.basename(full), is_dir)
                          for full, _, is_dir in self.workspace.entries(path)),
                         key=lambda e: (e[0], e[1]))
        lines = [f"[DIR] {name}" if is_dir else name for _, _, name, is_dir in entries]
        output = f"Directory listing for {path}:\n" + "\n".join(lines)
        output, jit = self.workspace.with_jit(output, path)
        return ToolOutcome(True, output, f"listed {len(lines)} entries", jit)


class FileWriteTool(WorkspaceTool):
    """A tool that changes one workspace file: the user approves the diff first, and the
    write goes ahead only if the file still holds what the diff was made from."""

    writes = True
    file_edit = True

    def unchanged_since_plan(self, call: PlannedCall, path: str) -> None:
        if self.workspace.current(path) != call.base:
            raise ToolRefused(f"{path} changed on disk after the change was proposed; nothing "
                              "was written. Read the file again and propose the change anew.")


class WriteFileArgs(ToolArgs):
    file_path: NonBlank
    content: str


class WriteFile(FileWriteTool):
    name = "write_file"
    description = "Writes a whole file (creating it if needed). The user approves it."
    properties: ClassVar[dict[str, Any]] = {
        "file_path": {**STRING, "description": "Absolute path of the file."},
        "content": STRING}
    arguments = WriteFileArgs

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, WriteFileArgs)
        path, _ = self.workspace.write_target(self.name, params.file_path, "file_path")
        base = self.workspace.current(path)
        return PlannedCall(self.name, args, f"Write {path}",
                           create_patch(posixpath.basename(path), base or "", params.content),
                           path, base, params)

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, WriteFileArgs)
        path, real = self.workspace.write_target(call.tool, params.file_path, "file_path")
        self.unchanged_since_plan(call, path)
        existed = os.path.exists(real)
        atomic_write(real, params.content)
        verb = "overwrote file" if existed else "created and wrote to new file"
        output, jit = self.workspace.with_jit(f"Successfully {verb}: {path}.", path)
        return ToolOutcome(True, output, f"wrote {posixpath.basename(path)}", jit)


class ReplaceArgs(ToolArgs):
    file_path: NonBlank
    old_string: str
    new_string: str
    expected_replacements: int = Field(default=1, ge=1)


class Replace(FileWriteTool):
    name = "replace"
    description = "Replaces exact text in a file. The user approves it."
    properties: ClassVar[dict[str, Any]] = {
        "file_path": STRING, "old_string": STRING, "new_string": STRING,
        "expected_replacements": INTEGER}
    arguments = ReplaceArgs

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, ReplaceArgs)
        path, _ = self.workspace.write_target(self.name, params.file_path, "file_path")
        current, updated, _ = self._replacement(path, params)
        return PlannedCall(self.name, args, f"Edit {path}",
                           create_patch(posixpath.basename(path), current, updated), path,
                           current, params)

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ReplaceArgs)
        path, real = self.workspace.write_target(call.tool, params.file_path, "file_path")
        self.unchanged_since_plan(call, path)
        _, updated, count = self._replacement(path, params)
        atomic_write(real, updated)
        output, jit = self.workspace.with_jit(
            f"Successfully modified file: {path} ({count} replacements).", path)
        return ToolOutcome(True, output, f"edited {posixpath.basename(path)}", jit)

    def _replacement(self, path: str, params: ReplaceArgs) -> tuple[str, str, int]:
        current = self.workspace.current(path)
        if current is None:
            raise ToolRefused(f"File not found: {path}")
        old, new, expected = params.old_string, params.new_string, params.expected_replacements
        count = current.count(old) if old else 0
        if count != expected:
            raise ToolRefused(f"Failed to edit, expected {expected} occurrence(s) but found "
                              f"{count} for old_string in {path}.")
        return current, current.replace(old, new), count
