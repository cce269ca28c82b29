"""The chat agent's tools, confined to the workspace folders by real path.

read_file, list_directory, glob, search_file_content read; write_file, replace, save_memory
write (each after the user's approval); activate_skill returns a skill's instructions. Tools
that touch a path append the memory JIT loads for it, exactly as Gemini CLI appends it.

Whatever the model sends: its arguments are validated by one pydantic model per tool (a bad
argument is a tool error the model reads, never an exception); every path goes through one
`PathPolicy` (real path inside an allowed root, regular files only, so a symbolic link out of
the workspace, a FIFO, socket or device is refused or skipped the same way by every tool); and
search runs on RE2, a linear-time engine, within a time and a match budget.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import os
import posixpath
import re
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ..discovery import LoadedFile
from ..ignore import IgnoreFilter
from ..jit import JitSession
from ..model import MemorySettings
from ..nodecompat import is_subpath, resolve
from ..pathpolicy import PathPolicy, PathRefused
from ..render import append_jit_context, concatenate_instructions
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

READ_LIMIT_LINES = 2000
MAX_RESULTS = 200
MAX_OUTPUT_CHARS = 200_000
MAX_WALK = 50_000  # files a glob or a search looks at
SEARCH_SECONDS = 10.0  # a search's time budget
SEARCH_FILE_BYTES = 2_000_000  # bytes of one file a search reads
MAX_PATTERN_CHARS = 10_000


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


# --- arguments: one pydantic model per tool ------------------------------------------------

def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]


class ToolArgs(BaseModel):
    """The arguments of one tool call, as the model sent them (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ReadFileArgs(ToolArgs):
    absolute_path: NonBlank
    offset: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, ge=1)


class ListDirectoryArgs(ToolArgs):
    path: NonBlank


class GlobArgs(ToolArgs):
    pattern: NonBlank
    path: str | None = None


class SearchArgs(ToolArgs):
    pattern: str = Field(min_length=1, max_length=MAX_PATTERN_CHARS)
    path: str | None = None
    include: str | None = None


class WriteFileArgs(ToolArgs):
    file_path: NonBlank
    content: str


class ReplaceArgs(ToolArgs):
    file_path: NonBlank
    old_string: str
    new_string: str
    expected_replacements: int = Field(default=1, ge=1)


class SaveMemoryArgs(ToolArgs):
    fact: str
    scope: Literal["global", "project"] | None = None


class ActivateSkillArgs(ToolArgs):
    name: str




def validate_args(tool: str, args: Any) -> ToolArgs:
    """The tool's arguments model, or ToolRefused with a message the model can act on."""
    if not isinstance(args, dict):
        raise ToolRefused(f"Arguments of {tool} must be an object.")
    model = ARGUMENTS[tool]
    try:
        return model.model_validate(args)
    except ValidationError as err:
        problems = []
        for problem in err.errors()[:5]:
            where = ".".join(str(p) for p in problem["loc"]) or "arguments"
            problems.append(f"{where}: {problem['msg']}")
        raise ToolRefused(f"Invalid arguments for {tool}: {'; '.join(problems)}. Call it "
                          "again with arguments that match its declaration.") from None


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
    params: ToolArgs | None = None


@dataclass(frozen=True)
class ToolSpec:
    """One chat tool: what the model is told (name, description, parameter schema), how its
    arguments are validated, and whether it writes (a write waits for the user's approval).
    The schema's required list is the arguments model's, so the two cannot disagree."""

    name: str
    description: str
    properties: dict[str, Any]
    args: type[ToolArgs]
    writes: bool = False

    def declaration(self) -> dict[str, Any]:
        """The FunctionDeclaration (JSON schema) in Gemini's shape."""
        required = [n for n, f in self.args.model_fields.items() if f.is_required()]
        return {"name": self.name, "description": self.description,
                "parameters": {"type": "OBJECT", "properties": copy.deepcopy(self.properties),
                               "required": required}}


_STRING: dict[str, Any] = {"type": "STRING"}
_INTEGER: dict[str, Any] = {"type": "INTEGER"}

REGISTRY: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("read_file", "Reads a text file of the workspace. Use absolute paths.",
             {"absolute_path": {**_STRING, "description": "Absolute path of the file."},
              "offset": {**_INTEGER, "description": "0-based line to start from."},
              "limit": {**_INTEGER, "description": "Maximum number of lines."}},
             ReadFileArgs),
    ToolSpec("list_directory", "Lists a folder of the workspace (folders first).",
             {"path": {**_STRING, "description": "Absolute path of the folder."}},
             ListDirectoryArgs),
    ToolSpec("glob", "Finds files whose path matches a glob pattern (e.g. **/*.py).",
             {"pattern": _STRING, "path": {**_STRING, "description": "Folder to search in."}},
             GlobArgs),
    ToolSpec("search_file_content", "Searches files for a regular expression; returns "
             "matching lines with their file and line number.",
             {"pattern": _STRING, "path": {**_STRING, "description": "Folder to search in."},
              "include": {**_STRING, "description": "Glob that files must match."}},
             SearchArgs),
    ToolSpec("write_file", "Writes a whole file (creating it if needed). The user approves it.",
             {"file_path": {**_STRING, "description": "Absolute path of the file."},
              "content": _STRING}, WriteFileArgs, writes=True),
    ToolSpec("replace", "Replaces exact text in a file. The user approves it.",
             {"file_path": _STRING, "old_string": _STRING, "new_string": _STRING,
              "expected_replacements": _INTEGER}, ReplaceArgs, writes=True),
    ToolSpec("save_memory", "Saves concise user context (a fact or preference) to long-term "
             "memory. The user approves it.",
             {"fact": {**_STRING, "description": "The specific fact or piece of information to "
                       "remember. Should be a clear, self-contained statement."},
              "scope": {"type": "STRING", "enum": ["global", "project"],
                        "description": "Where to save the memory. 'global' (default) saves to "
                        "a file loaded in every workspace. 'project' saves to a "
                        "project-specific file private to the user, not committed to the "
                        "repo."}},
             SaveMemoryArgs, writes=True),
    ToolSpec("activate_skill", "Activates an available skill and returns its instructions.",
             {"name": {**_STRING, "description": "The skill's name."}}, ActivateSkillArgs),
)}
ARGUMENTS: dict[str, type[ToolArgs]] = {name: spec.args for name, spec in REGISTRY.items()}
WRITE_TOOLS = tuple(name for name, spec in REGISTRY.items() if spec.writes)


def declarations() -> list[dict[str, Any]]:
    """Function declarations (JSON schema) in Gemini's FunctionDeclaration shape."""
    return [spec.declaration() for spec in REGISTRY.values()]


class Tools:
    write_tools: tuple[str, ...] = WRITE_TOOLS

    def declarations(self) -> list[dict[str, Any]]:
        return declarations()

    def names(self) -> list[str]:
        return [d["name"] for d in self.declarations()]

    def __init__(self, settings: MemorySettings, roots: list[str], jit: JitSession | None,
                 skills: list[Skill], memory_policy: PathPolicy | None = None):
        self.settings = settings
        self.roots = [resolve(r) for r in roots]
        self.policy = PathPolicy(self.roots)
        self.real_roots = self.policy.real_roots
        # Which memory files JIT context may bring into the chat (default: the same roots).
        self.memory_policy = memory_policy or self.policy
        self.jit = jit
        self.skills = {s.name: s for s in skills}
        self.ignores = [IgnoreFilter(r, respect_git_ignore=settings.respect_git_ignore,
                                     respect_gemini_ignore=settings.respect_gemini_ignore)
                        for r in self.roots]

    # --- paths ------------------------------------------------------------------------------
    def _path(self, raw: Any, what: str = "path") -> str:
        """The absolute path the model means, refused when its real path leaves the roots or
        the workspace's ignore files hide it."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolRefused(f"Parameter '{what}' must be a non-empty string.")
        path = resolve(self.roots[0], raw.strip())
        if not self.policy.inside(path):
            raise ToolRefused(f"Path is outside the workspace folders: {path}. Allowed: "
                              f"{', '.join(self.roots)}")
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                raise ToolRefused(f"File path '{path}' is ignored by the workspace's ignore "
                                  "files (.geminiignore).")
        return path

    def _allow_file(self, tool: str, path: str, real: str, write: bool) -> None:
        """A subclass's own rule for a file a tool reads or writes (raises ToolRefused)."""

    def _read_target(self, tool: str, raw: Any, what: str) -> tuple[str, str]:
        """(path, real path) of a regular file inside the roots that `tool` may read."""
        path = self._path(raw, what)
        try:
            real = self.policy.check_read(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        self._allow_file(tool, path, real, False)
        return path, real

    def _write_target(self, tool: str, raw: Any, what: str) -> tuple[str, str]:
        """(path, real path) that a write by `tool` may land on."""
        path = self._path(raw, what)
        try:
            real = self.policy.check_write(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        self._allow_file(tool, path, real, True)
        return path, real

    def _directory(self, raw: Any, what: str = "path") -> str:
        path = self._path(raw, what)
        try:
            self.policy.check_directory(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        return path

    def _read(self, path: str) -> str:
        """A file's text through the policy (never blocks on a FIFO)."""
        try:
            return self.policy.read_text(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None

    def _current(self, path: str) -> str | None:
        """What a file to be written holds now (None: it does not exist)."""
        if not os.path.lexists(os.path.realpath(path)):
            return None
        return self._read(path)

    def _jit(self, output: str, path: str) -> tuple[str, list[LoadedFile]]:
        if self.jit is None:
            return output, []
        result = self.jit.discover(path)
        # Only memory whose real path is inside the allowed roots reaches the model.
        files = [f for f in result.files if self.memory_policy.readable(f.path)]
        context = (result.context if len(files) == len(result.files) else
                   concatenate_instructions((f.path, f.content) for f in files))
        return append_jit_context(output, context), files

    def _visible(self, path: str) -> bool:
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                return False
        return True

    def _listed(self, path: str, real: str, is_dir: bool) -> bool:
        """Whether a listing (list_directory, glob, search) shows an entry."""
        return self._visible(path)

    def _entries(self, directory: str) -> list[tuple[str, str, bool]]:
        """(path, real path, is a folder) of a folder's entries that the policy allows: a
        symbolic link only when its real path stays inside the roots, folders and regular
        files only (never a FIFO, socket or device)."""
        out: list[tuple[str, str, bool]] = []
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            return out
        for entry in entries:
            full = posixpath.join(directory, entry.name)
            try:
                if entry.is_symlink():
                    real = os.path.realpath(full)
                    if not self.policy.contains_real(real):
                        continue
                    mode = os.stat(real).st_mode
                    is_dir, regular = stat.S_ISDIR(mode), stat.S_ISREG(mode)
                else:  # the entry's type from the folder listing, no stat needed
                    real = full
                    is_dir = entry.is_dir(follow_symlinks=False)
                    regular = entry.is_file(follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if not (is_dir or regular):
                continue
            if self._listed(full, real, is_dir):
                out.append((full, real, is_dir))
        return out

    # --- planning (validation and the approval preview) ---------------------------------
    def plan(self, tool: str, args: Any) -> PlannedCall:
        if tool not in self.names() or tool not in ARGUMENTS:
            raise ToolRefused(f'Tool "{tool}" not found. Available tools: '
                              f"{', '.join(self.names())}.")
        params = validate_args(tool, args)
        if isinstance(params, WriteFileArgs):
            path, _ = self._write_target(tool, params.file_path, "file_path")
            base = self._current(path)
            return PlannedCall(tool, args, f"Write {path}",
                               create_patch(posixpath.basename(path), base or "",
                                            params.content), path, base, params)
        if isinstance(params, ReplaceArgs):
            path, _ = self._write_target(tool, params.file_path, "file_path")
            current, updated, _ = self._replacement(path, params)
            return PlannedCall(tool, args, f"Edit {path}",
                               create_patch(posixpath.basename(path), current, updated), path,
                               current, params)
        if isinstance(params, SaveMemoryArgs):
            path, scope = self._memory_target(params)
            try:
                current, proposed = proposed_memory(params.fact, path, scope)
            except ValueError as err:
                raise ToolRefused(str(err)) from err
            return PlannedCall(tool, args, f"Confirm Memory Save: {path}",
                               create_patch(posixpath.basename(path), current, proposed), path,
                               params=params)
        return PlannedCall(tool, args, params=params)

    def _memory_target(self, params: SaveMemoryArgs) -> tuple[str, Any]:
        scope: Scope = "project" if params.scope == "project" else "global"
        home = self.settings.home
        target = memory_target(home, self.settings.context_file_names, self.roots[0], scope)
        if escapes_home(target, home):
            raise ToolRefused(f"Refusing to write through a symbolic link that leaves HOME: "
                              f"{target}")
        try:
            PathPolicy([home]).check_write(target)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        return target, scope

    def _replacement(self, path: str, params: ReplaceArgs) -> tuple[str, str, int]:
        current = self._current(path)
        if current is None:
            raise ToolRefused(f"File not found: {path}")
        old, new, expected = params.old_string, params.new_string, params.expected_replacements
        count = current.count(old) if old else 0
        if count != expected:
            raise ToolRefused(f"Failed to edit, expected {expected} occurrence(s) but found "
                              f"{count} for old_string in {path}.")
        return current, current.replace(old, new), count

    # --- running --------------------------------------------------------------------------
    def run(self, call: PlannedCall, stop: threading.Event | None = None) -> ToolOutcome:
        """Run a planned call (blocking: the session runs it in a worker thread). `stop`, once
        set, ends a long search early."""
        if call.params is None:
            call = self.plan(call.tool, call.args)
        handler: Callable[[PlannedCall, threading.Event], ToolOutcome] = getattr(
            self, f"_run_{call.tool}")
        outcome = handler(call, stop or threading.Event())
        if len(outcome.output) > MAX_OUTPUT_CHARS:
            outcome.output = outcome.output[:MAX_OUTPUT_CHARS] + "\n[output truncated]"
        return outcome

    def _run_read_file(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ReadFileArgs)
        path, _ = self._read_target(call.tool, params.absolute_path, "absolute_path")
        try:
            data = self.policy.read_bytes(path, 20_000_000).data
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
        output, jit = self._jit(output, path)
        return ToolOutcome(True, output, f"read {posixpath.basename(path)}", jit)

    def _run_list_directory(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ListDirectoryArgs)
        path = self._directory(params.path)
        entries = sorted(((not is_dir, posixpath.basename(full).lower(),
                           posixpath.basename(full), is_dir)
                          for full, _, is_dir in self._entries(path)),
                         key=lambda e: (e[0], e[1]))
        lines = [f"[DIR] {name}" if is_dir else name for _, _, name, is_dir in entries]
        output = f"Directory listing for {path}:\n" + "\n".join(lines)
        output, jit = self._jit(output, path)
        return ToolOutcome(True, output, f"listed {len(lines)} entries", jit)

    def _walk(self, base: str, stop: threading.Event | None = None,
              deadline: float | None = None) -> list[str]:
        """Regular files under `base` the policy allows, folder by folder in sorted order;
        folders reached through a symbolic link are not entered (as os.walk does not)."""
        found: list[str] = []
        pending = [base]
        while pending and len(found) <= MAX_WALK:
            if (stop is not None and stop.is_set()) or (deadline is not None
                                                         and time.monotonic() > deadline):
                break
            current = pending.pop()
            entries = sorted(self._entries(current))
            subdirs = []
            for full, real, is_dir in entries:
                name = posixpath.basename(full)
                if is_dir:
                    if real == full and name not in (".git", "node_modules"):
                        subdirs.append(full)
                else:
                    found.append(full)
            pending.extend(reversed(subdirs))
        return found

    def _run_glob(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, GlobArgs)
        pattern = params.pattern
        base = self._directory(params.path or self.roots[0])
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines([pattern if "/" in pattern
                                                  else f"**/{pattern}"])
        matches = [p for p in self._walk(base, stop)
                   if spec.match_file(posixpath.relpath(p, base))]
        shown = matches[:MAX_RESULTS]
        output = (f"Found {len(matches)} file(s) matching \"{pattern}\" within {base}:\n"
                  + "\n".join(shown))
        return ToolOutcome(True, output, f"{len(matches)} match(es)")

    def _run_search_file_content(self, call: PlannedCall, stop: threading.Event
                                 ) -> ToolOutcome:
        params = call.params
        assert isinstance(params, SearchArgs)
        pattern = params.pattern
        regex = compile_search(pattern)
        base = self._directory(params.path or self.roots[0])
        include = params.include
        deadline = time.monotonic() + SEARCH_SECONDS
        hits: list[str] = []
        notes: list[str] = []
        stopped = (f"[search stopped after {SEARCH_SECONDS:g} s: results are incomplete; "
                   "narrow the path or the include glob]")
        files = self._walk(base, stop, deadline)
        if time.monotonic() > deadline:
            notes.append(stopped)
            files = []
        for path in files:
            if stop.is_set():
                notes.append("[search cancelled: results are incomplete]")
                break
            if time.monotonic() > deadline:
                notes.append(stopped)
                break
            if include and not fnmatch.fnmatch(posixpath.basename(path), include) \
                    and not fnmatch.fnmatch(posixpath.relpath(path, base), include):
                continue
            data = self.policy.read_found(path, SEARCH_FILE_BYTES)
            if data is None or b"\x00" in data[:8192]:
                continue
            lines = data.decode("utf-8", "replace").splitlines()
            if not regex.may_match(lines):
                continue
            for number, line in enumerate(lines, 1):
                if number % 10_000 == 0 and (stop.is_set() or time.monotonic() > deadline):
                    break
                if regex.search(line):
                    hits.append(f"{path}:{number}: {line[:500]}")
                    if len(hits) >= MAX_RESULTS:
                        break
            if len(hits) >= MAX_RESULTS:
                notes.append(f"[results truncated at {MAX_RESULTS} matches; narrow the "
                             "pattern, the path or the include glob]")
                break
        output = (f"Found {len(hits)} match(es) for pattern \"{pattern}\" in {base}:\n"
                  + "\n".join([*hits, *notes]))
        return ToolOutcome(True, output, f"{len(hits)} match(es)")

    def _unchanged_since_plan(self, call: PlannedCall, path: str) -> None:
        if self._current(path) != call.base:
            raise ToolRefused(f"{path} changed on disk after the change was proposed; nothing "
                              "was written. Read the file again and propose the change anew.")

    def _run_write_file(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, WriteFileArgs)
        path, real = self._write_target(call.tool, params.file_path, "file_path")
        self._unchanged_since_plan(call, path)
        existed = os.path.exists(real)
        atomic_write(real, params.content)
        verb = "overwrote file" if existed else "created and wrote to new file"
        output, jit = self._jit(f"Successfully {verb}: {path}.", path)
        return ToolOutcome(True, output, f"wrote {posixpath.basename(path)}", jit)

    def _run_replace(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ReplaceArgs)
        path, real = self._write_target(call.tool, params.file_path, "file_path")
        self._unchanged_since_plan(call, path)
        _, updated, count = self._replacement(path, params)
        atomic_write(real, updated)
        output, jit = self._jit(f"Successfully modified file: {path} ({count} replacements).",
                                path)
        return ToolOutcome(True, output, f"edited {posixpath.basename(path)}", jit)

    def _run_save_memory(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, SaveMemoryArgs)
        path, scope = self._memory_target(params)
        try:
            outcome = save_memory(params.fact, path, scope, home=self.settings.home)
        except ValueError as err:
            raise ToolRefused(str(err)) from err
        return ToolOutcome(outcome.success, outcome.llm_content, outcome.return_display,
                           structured=True)

    def _run_activate_skill(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ActivateSkillArgs)
        skill = self.skills.get(params.name)
        if skill is None:
            available = ", ".join(sorted(self.skills)) or "none"
            raise ToolRefused(f'Skill "{params.name}" not found. Available skills are: '
                              f"{available}")
        return ToolOutcome(True, render_activated_skill(skill), f"activated {skill.name}")


class SearchPattern:
    """A compiled search pattern on RE2 (linear time: no pattern can run away), with a whole
    file test first: most files have no match, and one RE2 call over the file is much cheaper
    than one per line."""

    def __init__(self, compiled: Any, whole: Any | None):
        self._compiled = compiled
        self._whole = whole  # the pattern in multi-line mode (None: test every line)

    def search(self, line: str) -> bool:
        return self._compiled.search(line) is not None

    def may_match(self, lines: list[str]) -> bool:
        """False only when no line can match (the lines joined by newlines, ^ and $ at each
        line's ends; a match across lines is a false positive the per-line test drops)."""
        return self._whole is None or self._whole.search("\n".join(lines)) is not None


def _whole_text_pattern(re2: Any, pattern: str, options: Any) -> Any | None:
    """The pattern in multi-line mode, for the whole-file test; None when it could miss a
    line's match: \\A and \\z, or a flag turned off inside the pattern, say something else of
    one text than of each line."""
    if "\\A" in pattern or "\\z" in pattern or re.search(r"\(\?[a-zA-Z]*-", pattern):
        return None
    try:
        return re2.compile(f"(?m:{pattern})", options)
    except re2.error:
        return None


def compile_search(pattern: str) -> SearchPattern:
    """RE2 for the model's pattern; ToolRefused for an invalid or unsupported one."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    try:
        compiled = re2.compile(pattern, options)
        return SearchPattern(compiled, _whole_text_pattern(re2, pattern, options))
    except UnicodeError:
        raise ToolRefused("Invalid regular expression: it is not valid Unicode text.") from None
    except re2.error as err:
        detail = err.args[0] if err.args else err
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        raise ToolRefused(f"Invalid regular expression: {err}") from None
    raise ToolRefused(f"Regular expression {pattern!r} is not supported: {detail}. Search uses "
                      "RE2 (linear time), which has no backreferences or lookaround; rewrite "
                      "the pattern without them.")


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
