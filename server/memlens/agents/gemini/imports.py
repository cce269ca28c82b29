"""The `@import` processor, byte-compatible with Gemini CLI v0.43.0's memoryImportProcessor.

Recognition is Gemini CLI's own hand-written scanner (not a markdown parser): an `@` at the
start or after a space, tab, CR or LF, the path running to the next whitespace. Code regions are
found with the backtick-run rule, which is not CommonMark's. Every token the scanner finds is
reported as an `ImportEvent`, so diagnostics describe exactly what the rendering did.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from memlens.files.fsread import FileReader, ReadResult
from memlens.files.nodecompat import dirname, is_subpath, js_trim, js_trim_start, resolve
from memlens.files.roots import ProjectRootFinder
from memlens.text.references import ImportToken, find_references

ImportFormat = Literal["tree", "flat"]
DEFAULT_MAX_DEPTH = 5
CHAIN_CAP = 16
_URL = re.compile(r"^(file|https?)://")


def find_imports(content: str) -> list[ImportToken]:
    """Every import attempt Gemini CLI's scanner sees, marked when it lies in a code region."""
    return find_references(content)


def validate_import_path(import_path: str, base_path: str, allowed_dirs: list[str]) -> bool:
    """Gemini CLI v0.43.0's lexical check: no URL, resolved path inside an allowed dir."""
    if _URL.match(import_path):
        return False
    resolved = resolve(base_path, import_path)
    return any(d and is_subpath(d, resolved) for d in allowed_dirs)


class RealPaths:
    """`realpath` with the answers cached for one run (imports share folders and targets)."""

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}
        self._files: dict[str, str] = {}

    def folder(self, path: str) -> str:
        real = self._dirs.get(path)
        if real is None:
            real = self._dirs[path] = os.path.realpath(path)
        return real

    def of(self, path: str) -> str:
        real = self._files.get(path)
        if real is None:
            real = self._files[path] = self._real(path)
        return real

    def _real(self, path: str) -> str:
        head, name = posixpath.split(path)
        if not name or name in (".", ".."):
            return os.path.realpath(path)
        joined = posixpath.join(self.folder(head), name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


def escapes_by_symlink(target: str, allowed_dir: str, real: RealPaths | None = None) -> bool:
    """True when the target's real path leaves the root (Gemini CLI rejects this after v0.43.0)."""
    paths = real or RealPaths()
    try:
        return not is_subpath(paths.folder(allowed_dir), paths.of(target))
    except (OSError, ValueError):
        return False


class Outcome(StrEnum):
    IMPORTED = "imported"
    IN_CODE = "in-code"
    URL = "url"
    OUTSIDE_ROOT = "outside-root"
    SYMLINK_ESCAPE = "symlink-escape"
    ALREADY_PROCESSED = "already-processed"
    FAILED = "failed"
    TOO_DEEP = "too-deep"
    SKIPPED_BUDGET = "skipped-budget"
    DUPLICATE = "duplicate"  # flat format: already included through another path


@dataclass(frozen=True)
class ImportEvent:
    """One import token as the processor handled it while rendering one root file."""

    file: str | None  # the file holding the token (None: content given without a file)
    token: ImportToken
    outcome: Outcome
    target: str
    depth: int
    chain: tuple[str, ...]  # files from the rendered root down to `file`
    error: str | None = None
    read: ReadResult | None = None


@dataclass
class ImportTree:
    path: str
    imports: list[ImportTree] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.imports:
            out["imports"] = [child.to_dict() for child in self.imports]
        return out


@dataclass
class ProcessResult:
    content: str
    tree: ImportTree
    events: list[ImportEvent]
    logs: list[str]
    truncated: bool
    used: int = 0  # characters of `content` after its leading whitespace


class _Output:
    """Every character the rendering emits, counted in output order.

    Markers and failure comments count as much as imported text (a failure comment names an
    absolute path: thousands of them from four tiny files once grew to gigabytes). Leading
    whitespace does not count: Gemini CLI trims it away. Past the limit the output is full:
    what was emitted is an exact prefix of the whole, one character longer than the limit,
    and nothing more is built.
    """

    def __init__(self, limit: int | None):
        self.limit = limit
        self.size = 0
        self.lead = 0
        self.started = False
        self.full = False

    @property
    def used(self) -> int:
        return self.size - self.lead

    def take(self, text: str) -> str:
        if self.full or not text:
            return ""
        if not self.started:
            rest = js_trim_start(text)
            self.lead += len(text) - len(rest)
            self.started = bool(rest)
        self.size += len(text)
        if self.limit is not None and self.size - self.lead > self.limit:
            self.full = True
            over = self.used - self.limit - (1 if self.limit > 0 else 0)
            if over > 0:
                text = text[: len(text) - over]
                self.size -= over
        return text


class ImportProcessor:
    """Expands the imports of one memory file, tree or flat, exactly as Gemini CLI does.

    `max_chars` bounds the text built (see `_Output`). Every import is still walked for its
    events when the text is full (diagnostics describe the whole graph, not the preview);
    that walk expands each file at most once per depth, so it is bounded by the files'
    size, not by the number of paths through a diamond. `collect_events=False` stops at the
    limit instead.
    """

    def __init__(
        self,
        reader: FileReader,
        root_finder: ProjectRootFinder,
        *,
        reject_symlink_escape: bool = True,
        max_chars: int | None = None,
        real_paths: RealPaths | None = None,
        collect_events: bool = True,
        token_cache: dict[str, tuple[str, list[ImportToken]]] | None = None,
    ):
        self.reader = reader
        self.root_finder = root_finder
        self.reject_symlink_escape = reject_symlink_escape
        self.max_chars = max_chars
        self.real_paths = real_paths or RealPaths()
        self.collect_events = collect_events
        # Tokens per imported file, shared by the processors of one engine: (the text they
        # were found in, the tokens); a new text for the path (an edit) finds them afresh.
        self.token_cache = token_cache if token_cache is not None else {}

    def process(
        self,
        content: str,
        base_path: str,
        *,
        import_format: ImportFormat = "tree",
        project_root: str | None = None,
        current_file: str | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        current_depth: int = 0,
        source_file: str | None = None,
    ) -> ProcessResult:
        """`processImports`. `source_file` names the file `content` came from, for the events
        only: Gemini CLI itself passes no file for a memory root (its tree says 'unknown')."""
        root = project_root or self.root_finder.find(base_path) or base_path
        run = _Run(self, root, max_depth, _Output(self.max_chars))
        origin = current_file or source_file
        chain = (origin,) if origin else ()
        if current_depth >= max_depth:
            run.note_too_deep(content, origin, current_depth, chain)
            text, tree = run.out.take(content), ImportTree(current_file or "unknown")
        elif import_format == "flat":
            text, tree = run.flat(content, base_path, current_file, origin)
        else:
            text, tree = run.tree(content, base_path, frozenset(), current_depth, current_file,
                                  chain)
        return ProcessResult(text, tree, run.events, run.logs, run.out.full, run.out.used)


class _Run:
    def __init__(self, proc: ImportProcessor, root: str, max_depth: int, out: _Output):
        self.proc = proc
        self.root = root
        self.max_depth = max_depth
        self.out = out
        self.events: list[ImportEvent] = []
        self.logs: list[str] = []
        self._tokens = proc.token_cache
        # (file, depth) pairs already expanded: once the text is full, the walk for events
        # expands each at most once.
        self._walked: set[tuple[str, int]] = set()

    def tokens(self, file: str | None, content: str) -> list[ImportToken]:
        """Tokens of an imported file's content (cached by path; None: the root text)."""
        if file is None:
            return find_imports(content)
        cached = self._tokens.get(file)
        if cached is not None and cached[0] is content:
            return cached[1]
        found = find_imports(content)
        self._tokens[file] = (content, found)
        return found

    @property
    def done(self) -> bool:
        """Nothing more to do: the text is full and nobody wants the events."""
        return self.out.full and not self.proc.collect_events

    def _check(self, token: ImportToken, base: str) -> Outcome | None:
        """Why Gemini CLI refuses this path before reading it, or None when it may be read."""
        if _URL.match(token.path):
            return Outcome.URL
        if not validate_import_path(token.path, base, [self.root]):
            return Outcome.OUTSIDE_ROOT
        if self.proc.reject_symlink_escape and escapes_by_symlink(
            resolve(base, token.path), self.root, self.proc.real_paths
        ):
            return Outcome.SYMLINK_ESCAPE
        return None

    def note_too_deep(self, content: str, file: str | None, depth: int,
                      chain: tuple[str, ...], imported: bool = False) -> None:
        for token in self.tokens(file if imported else None, content):
            if not token.in_code:
                self.events.append(ImportEvent(file, token, Outcome.TOO_DEEP, token.path,
                                               depth, chain))

    def tree(self, content: str, base: str, processed: frozenset[str], depth: int,
             current_file: str | None, chain: tuple[str, ...],
             imported: bool = False) -> tuple[str, ImportTree]:
        node = ImportTree(current_file or "unknown")
        out = self.out
        tokens = self.tokens(current_file if imported else None, content)
        if not tokens:
            return out.take(content), node
        holder = chain[-1] if chain else None
        parts: list[str] = []
        take, append = out.take, parts.append
        stop_when_full = not self.proc.collect_events

        def emit(text: str) -> None:
            if not out.full:
                append(take(text))

        last = 0
        for token in tokens:
            if out.full:
                if stop_when_full:
                    return "".join(parts), node
            else:
                append(take(content[last : token.start]))
            last = token.end
            path = token.path
            if token.in_code:
                if not out.full:
                    append(take("@" + path))
                continue
            target = resolve(base, path)
            refused = self._check(token, base)
            if refused is not None:
                emit(f"<!-- Import failed: {path} - Path traversal attempt -->")
                self._event(holder, token, refused, target, depth, chain)
                continue
            if target in processed:
                emit(f"<!-- File already processed: {path} -->")
                self._event(holder, token, Outcome.ALREADY_PROCESSED, target, depth, chain)
                continue
            read = self.proc.reader.read(target)
            if read.content is None:
                if not out.full:
                    emit(f"<!-- Import failed: {path} - {read.error} -->")
                    self.logs.append(
                        f"[ERROR] [ImportProcessor] Failed to import {path}: {read.error}")
                self._event(holder, token, Outcome.FAILED, target, depth, chain,
                            read.error, read)
                continue
            self._event(holder, token, Outcome.IMPORTED, target, depth, chain, None, read)
            key = (target, depth + 1)
            if out.full and key in self._walked:
                node.imports.append(ImportTree(target))
                continue
            self._walked.add(key)
            sub_chain = (*chain, target)
            emit(f"<!-- Imported from: {path} -->\n")
            if depth + 1 >= self.max_depth:
                self.note_too_deep(read.content, target, depth + 1, sub_chain, True)
                emit(read.content)
                sub_node = ImportTree(target)
            else:
                sub_text, sub_node = self.tree(read.content, dirname(target),
                                               processed | {target}, depth + 1, target, sub_chain,
                                               True)
                parts.append(sub_text)
            emit(f"\n<!-- End of import from: {path} -->")
            node.imports.append(sub_node)
        emit(content[last:])
        return "".join(parts), node

    def flat(self, content: str, base: str, current_file: str | None,
             origin: str | None) -> tuple[str, ImportTree]:
        root_path = posixpath.normpath(current_file or resolve(base))
        out = self.out
        parts: list[str] = []
        processed: set[str] = set()
        on_stack: set[str] = set()
        # Gemini CLI recurses depth-first over each file's imports in reverse order; an explicit
        # stack keeps that order without Python's recursion limit on a 10,000-deep chain.
        # Chains are capped (they only name the way in, in messages) so a deep chain stays
        # linear in time and memory.
        stack: list[tuple[str, str, Iterator[ImportToken], tuple[str, ...], int]] = []

        def enter(text: str, file_base: str, file_path: str, chain: tuple[str, ...],
                  label: str | None, depth: int) -> None:
            normal = posixpath.normpath(file_path)
            if normal in processed:
                return
            processed.add(normal)
            on_stack.add(normal)
            if not out.full:
                block = f"--- File: {normal} ---\n{js_trim(text)}\n--- End of File: {normal} ---"
                parts.append(out.take(("\n\n" if parts else "") + block))
            own = (*chain, label)[-CHAIN_CAP:] if label else chain
            stack.append((file_base, normal, reversed(find_imports(text)), own, depth))

        enter(content, base, root_path, (), origin, 0)
        while stack and not self.done:
            file_base, file_path, pending, chain, depth = stack[-1]
            token = next(pending, None)
            if token is None:
                stack.pop()
                on_stack.discard(file_path)
                continue
            if token.in_code:
                continue
            holder = chain[-1] if chain else None
            target = resolve(file_base, token.path)
            refused = self._check(token, file_base)
            if refused is not None:
                self._event(holder, token, refused, target, depth, chain)
                continue
            normal = posixpath.normpath(target)
            if normal in processed:
                # Flat output includes each file once: a repeat is a cycle only when the file
                # is still being expanded, otherwise a second path to it (a diamond).
                outcome = Outcome.ALREADY_PROCESSED if normal in on_stack else Outcome.DUPLICATE
                self._event(holder, token, outcome, target, depth, chain)
                continue
            read = self.proc.reader.read(target)
            if read.content is None:
                self._event(holder, token, Outcome.FAILED, target, depth, chain, read.error, read)
                continue
            self._event(holder, token, Outcome.IMPORTED, target, depth, chain, None, read)
            enter(read.content, dirname(target), normal, chain, normal, depth + 1)
        return "".join(parts), ImportTree(root_path)

    def _event(self, file: str | None, token: ImportToken, outcome: Outcome, target: str,
               depth: int, chain: tuple[str, ...], error: str | None = None,
               read: ReadResult | None = None) -> None:
        self.events.append(ImportEvent(file, token, outcome, target, depth, chain, error, read))
