"""The chat agent's tools, confined to the workspace folders by real path.

read_file, list_directory, glob, search_file_content read; write_file, replace, save_memory
write (each after the user's approval); activate_skill returns a skill's instructions. Tools
that touch a path append the memory JIT loads for it, exactly as Gemini CLI appends it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ..discovery import LoadedFile
from ..ignore import IgnoreFilter
from ..jit import JitSession
from ..model import MemorySettings
from ..nodecompat import is_subpath, resolve
from ..render import append_jit_context
from ..skills import Skill, render_activated_skill
from ..writing import (
    Scope,
    atomic_write,
    create_patch,
    escapes_home,
    memory_target,
    proposed_memory,
    save_memory,
)

WRITE_TOOLS = ("write_file", "replace", "save_memory")
READ_LIMIT_LINES = 2000
MAX_RESULTS = 200
MAX_OUTPUT_CHARS = 200_000


class ToolRefused(Exception):
    """A call the tool will not perform; the message goes back to the model."""


@dataclass
class ToolOutcome:
    ok: bool
    output: str
    summary: str
    jit_files: list[LoadedFile] = field(default_factory=list)
    # The output is a JSON object to hand to the model as is (save_memory's llmContent).
    structured: bool = False


@dataclass
class PlannedCall:
    tool: str
    args: dict[str, Any]
    title: str = ""
    diff: str | None = None
    path: str | None = None
    # What the file held when the diff was made (None: it did not exist). A write goes ahead
    # only if the file still holds it, so an edit made while the user was reading the
    # proposal is never overwritten.
    base: str | None = None


def declarations() -> list[dict[str, Any]]:
    """Function declarations (JSON schema) in Gemini's FunctionDeclaration shape."""

    def fn(name: str, description: str, properties: dict[str, Any],
           required: list[str]) -> dict[str, Any]:
        return {"name": name, "description": description,
                "parameters": {"type": "OBJECT", "properties": properties,
                               "required": required}}

    string = {"type": "STRING"}
    integer = {"type": "INTEGER"}
    return [
        fn("read_file", "Reads a text file of the workspace. Use absolute paths.",
           {"absolute_path": {**string, "description": "Absolute path of the file."},
            "offset": {**integer, "description": "0-based line to start from."},
            "limit": {**integer, "description": "Maximum number of lines."}},
           ["absolute_path"]),
        fn("list_directory", "Lists a folder of the workspace (folders first).",
           {"path": {**string, "description": "Absolute path of the folder."}}, ["path"]),
        fn("glob", "Finds files whose path matches a glob pattern (e.g. **/*.py).",
           {"pattern": string, "path": {**string, "description": "Folder to search in."}},
           ["pattern"]),
        fn("search_file_content", "Searches files for a regular expression; returns "
           "matching lines with their file and line number.",
           {"pattern": string, "path": {**string, "description": "Folder to search in."},
            "include": {**string, "description": "Glob that files must match."}},
           ["pattern"]),
        fn("write_file", "Writes a whole file (creating it if needed). The user approves it.",
           {"file_path": {**string, "description": "Absolute path of the file."},
            "content": string}, ["file_path", "content"]),
        fn("replace", "Replaces exact text in a file. The user approves it.",
           {"file_path": string, "old_string": string, "new_string": string,
            "expected_replacements": integer}, ["file_path", "old_string", "new_string"]),
        fn("save_memory", "Saves concise user context (a fact or preference) to long-term "
           "memory. The user approves it.",
           {"fact": {**string, "description": "The specific fact or piece of information to "
                     "remember. Should be a clear, self-contained statement."},
            "scope": {"type": "STRING", "enum": ["global", "project"],
                      "description": "Where to save the memory. 'global' (default) saves to "
                      "a file loaded in every workspace. 'project' saves to a "
                      "project-specific file private to the user, not committed to the repo."}},
           ["fact"]),
        fn("activate_skill", "Activates an available skill and returns its instructions.",
           {"name": {**string, "description": "The skill's name."}}, ["name"]),
    ]


class Tools:
    write_tools: tuple[str, ...] = WRITE_TOOLS

    def declarations(self) -> list[dict[str, Any]]:
        return declarations()

    def names(self) -> list[str]:
        return [d["name"] for d in self.declarations()]

    def __init__(self, settings: MemorySettings, roots: list[str], jit: JitSession | None,
                 skills: list[Skill]):
        self.settings = settings
        self.roots = [resolve(r) for r in roots]
        self.real_roots = [os.path.realpath(r) for r in self.roots]
        self.jit = jit
        self.skills = {s.name: s for s in skills}
        self.ignores = [IgnoreFilter(r, respect_git_ignore=settings.respect_git_ignore,
                                     respect_gemini_ignore=settings.respect_gemini_ignore)
                        for r in self.roots]

    # --- paths ------------------------------------------------------------------------------
    def _path(self, raw: Any, what: str = "path") -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise ToolRefused(f"Parameter '{what}' must be a non-empty string.")
        path = resolve(self.roots[0], raw.strip())
        real = os.path.realpath(path)
        if not any(is_subpath(r, real) for r in self.real_roots):
            raise ToolRefused(f"Path is outside the workspace folders: {path}. Allowed: "
                              f"{', '.join(self.roots)}")
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                raise ToolRefused(f"File path '{path}' is ignored by the workspace's ignore "
                                  "files (.geminiignore).")
        return path

    def _jit(self, output: str, path: str) -> tuple[str, list[LoadedFile]]:
        if self.jit is None:
            return output, []
        result = self.jit.discover(path)
        return append_jit_context(output, result.context), result.files

    def _visible(self, path: str) -> bool:
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                return False
        return True

    # --- planning (validation and the approval preview) ---------------------------------
    def plan(self, tool: str, args: Any) -> PlannedCall:
        if not isinstance(args, dict):
            raise ToolRefused(f"Arguments of {tool} must be an object.")
        if tool == "write_file":
            path = self._path(args.get("file_path"), "file_path")
            content = args.get("content")
            if not isinstance(content, str):
                raise ToolRefused("Parameter 'content' must be a string.")
            base = _read_text(path) if os.path.exists(path) else None
            return PlannedCall(tool, args, f"Write {path}",
                               create_patch(posixpath.basename(path), base or "", content), path,
                               base)
        if tool == "replace":
            path = self._path(args.get("file_path"), "file_path")
            current, updated, _ = self._replacement(path, args)
            return PlannedCall(tool, args, f"Edit {path}",
                               create_patch(posixpath.basename(path), current, updated), path,
                               current)
        if tool == "save_memory":
            path, scope = self._memory_target(args)
            try:
                current, proposed = proposed_memory(str(args.get("fact") or ""), path, scope)
            except ValueError as err:
                raise ToolRefused(str(err)) from err
            return PlannedCall(tool, args, f"Confirm Memory Save: {path}",
                               create_patch(posixpath.basename(path), current, proposed), path)
        if tool in ("read_file", "list_directory", "glob", "search_file_content",
                    "activate_skill"):
            return PlannedCall(tool, args)
        raise ToolRefused(f'Tool "{tool}" not found. Available tools: '
                          f"{', '.join(self.names())}.")

    def _memory_target(self, args: dict[str, Any]) -> tuple[str, Any]:
        raw_scope = args.get("scope", "global") or "global"
        if raw_scope not in ("global", "project"):
            raise ToolRefused("Parameter 'scope' must be 'global' or 'project'.")
        scope: Scope = "project" if raw_scope == "project" else "global"
        home = self.settings.home
        target = memory_target(home, self.settings.context_file_names, self.roots[0], scope)
        if escapes_home(target, home):
            raise ToolRefused(f"Refusing to write through a symbolic link that leaves HOME: "
                              f"{target}")
        return target, scope

    def _replacement(self, path: str, args: dict[str, Any]) -> tuple[str, str, int]:
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ToolRefused("Parameters 'old_string' and 'new_string' must be strings.")
        expected = args.get("expected_replacements", 1)
        if not isinstance(expected, int) or isinstance(expected, bool) or expected < 1:
            expected = 1
        if not os.path.isfile(path):
            raise ToolRefused(f"File not found: {path}")
        current = _read_text(path)
        count = current.count(old) if old else 0
        if count != expected:
            raise ToolRefused(f"Failed to edit, expected {expected} occurrence(s) but found "
                              f"{count} for old_string in {path}.")
        return current, current.replace(old, new), count

    # --- running --------------------------------------------------------------------------
    def run(self, call: PlannedCall) -> ToolOutcome:
        handler = getattr(self, f"_run_{call.tool}")
        outcome: ToolOutcome = handler(call)
        if len(outcome.output) > MAX_OUTPUT_CHARS:
            outcome.output = outcome.output[:MAX_OUTPUT_CHARS] + "\n[output truncated]"
        return outcome

    def _run_read_file(self, call: PlannedCall) -> ToolOutcome:
        path = self._path(call.args.get("absolute_path"), "absolute_path")
        if not os.path.isfile(path):
            raise ToolRefused(f"File not found: {path}")
        with open(path, "rb") as handle:
            data = handle.read(20_000_000)
        if b"\x00" in data[:8192]:
            output = f"Cannot display content of binary file: {path}"
        else:
            lines = data.decode("utf-8", "replace").splitlines(keepends=True)
            offset = max(int(call.args.get("offset") or 0), 0)
            limit = max(int(call.args.get("limit") or READ_LIMIT_LINES), 1)
            chunk = lines[offset: offset + limit]
            output = "".join(chunk)
            if offset + limit < len(lines):
                output = (f"[File content truncated: showing lines {offset + 1}-"
                          f"{offset + len(chunk)} of {len(lines)} total lines. Use offset/limit "
                          f"to read more.]\n{output}")
        output, jit = self._jit(output, path)
        return ToolOutcome(True, output, f"read {posixpath.basename(path)}", jit)

    def _run_list_directory(self, call: PlannedCall) -> ToolOutcome:
        path = self._path(call.args.get("path"))
        if not os.path.isdir(path):
            raise ToolRefused(f"Not a directory: {path}")
        entries = []
        with os.scandir(path) as it:
            for entry in it:
                full = posixpath.join(path, entry.name)
                if self._visible(full):
                    entries.append((not entry.is_dir(), entry.name.lower(), entry))
        entries.sort(key=lambda e: (e[0], e[1]))
        lines = [f"[DIR] {e.name}" if e.is_dir() else e.name for _, _, e in entries]
        output = f"Directory listing for {path}:\n" + "\n".join(lines)
        output, jit = self._jit(output, path)
        return ToolOutcome(True, output, f"listed {len(lines)} entries", jit)

    def _walk(self, base: str) -> list[str]:
        found: list[str] = []
        for current, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules")
                             and self._visible(posixpath.join(current, d)))
            for name in sorted(names):
                full = posixpath.join(current, name)
                if self._visible(full):
                    found.append(full)
            if len(found) > 50_000:
                break
        return found

    def _run_glob(self, call: PlannedCall) -> ToolOutcome:
        pattern = call.args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolRefused("Parameter 'pattern' must be a non-empty string.")
        base = self._path(call.args.get("path") or self.roots[0])
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines([pattern if "/" in pattern
                                                  else f"**/{pattern}"])
        matches = [p for p in self._walk(base) if spec.match_file(posixpath.relpath(p, base))]
        shown = matches[:MAX_RESULTS]
        output = (f"Found {len(matches)} file(s) matching \"{pattern}\" within {base}:\n"
                  + "\n".join(shown))
        return ToolOutcome(True, output, f"{len(matches)} match(es)")

    def _run_search_file_content(self, call: PlannedCall) -> ToolOutcome:
        pattern = call.args.get("pattern")
        try:
            regex = re.compile(pattern if isinstance(pattern, str) else "")
        except re.error as err:
            raise ToolRefused(f"Invalid regular expression: {err}") from err
        base = self._path(call.args.get("path") or self.roots[0])
        include = call.args.get("include")
        hits: list[str] = []
        for path in self._walk(base):
            if isinstance(include, str) and include and not fnmatch.fnmatch(
                    posixpath.basename(path), include) and not fnmatch.fnmatch(
                    posixpath.relpath(path, base), include):
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read(2_000_000)
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{path}:{number}: {line[:500]}")
                    if len(hits) >= MAX_RESULTS:
                        break
            if len(hits) >= MAX_RESULTS:
                break
        output = (f"Found {len(hits)} match(es) for pattern \"{pattern}\" in {base}:\n"
                  + "\n".join(hits))
        return ToolOutcome(True, output, f"{len(hits)} match(es)")

    @staticmethod
    def _unchanged_since_plan(call: PlannedCall, path: str) -> None:
        now = _read_text(path) if os.path.exists(path) else None
        if now != call.base:
            raise ToolRefused(f"{path} changed on disk after the change was proposed; nothing "
                              "was written. Read the file again and propose the change anew.")

    def _run_write_file(self, call: PlannedCall) -> ToolOutcome:
        path = self._path(call.args.get("file_path"), "file_path")
        self._unchanged_since_plan(call, path)
        existed = os.path.exists(path)
        atomic_write(path, call.args["content"])
        verb = "overwrote file" if existed else "created and wrote to new file"
        output, jit = self._jit(f"Successfully {verb}: {path}.", path)
        return ToolOutcome(True, output, f"wrote {posixpath.basename(path)}", jit)

    def _run_replace(self, call: PlannedCall) -> ToolOutcome:
        path = self._path(call.args.get("file_path"), "file_path")
        self._unchanged_since_plan(call, path)
        _, updated, count = self._replacement(path, call.args)
        atomic_write(path, updated)
        output, jit = self._jit(f"Successfully modified file: {path} ({count} replacements).",
                                path)
        return ToolOutcome(True, output, f"edited {posixpath.basename(path)}", jit)

    def _run_save_memory(self, call: PlannedCall) -> ToolOutcome:
        path, scope = self._memory_target(call.args)
        try:
            outcome = save_memory(call.args.get("fact"), path, scope,  # type: ignore[arg-type]
                                  home=self.settings.home)
        except ValueError as err:
            raise ToolRefused(str(err)) from err
        return ToolOutcome(outcome.success, outcome.llm_content, outcome.return_display,
                           structured=True)

    def _run_activate_skill(self, call: PlannedCall) -> ToolOutcome:
        name = call.args.get("name")
        skill = self.skills.get(name) if isinstance(name, str) else None
        if skill is None:
            available = ", ".join(sorted(self.skills)) or "none"
            raise ToolRefused(f'Skill "{name}" not found. Available skills are: {available}')
        return ToolOutcome(True, render_activated_skill(skill), f"activated {skill.name}")


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def function_response(outcome: ToolOutcome | None, error: str | None) -> dict[str, Any]:
    """The `response` object of a functionResponse part."""
    if error is not None:
        return {"error": error}
    assert outcome is not None
    if outcome.structured:
        try:
            parsed = json.loads(outcome.output)
            if isinstance(parsed, dict):
                return parsed
        except ValueError:
            pass
    return {"output": outcome.output}
