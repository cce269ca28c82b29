"""Antigravity CLI as a `MemoryAgent`: a convention read from public descriptions of it, never
verified (it is closed, and no offline program here shows what it sends). Every fact below
names where it comes from (docs/reference.md "Antigravity CLI" cites each):

- global `~/.gemini/GEMINI.md` and `~/.gemini/AGENTS.md`, then the workspace's `GEMINI.md`
  and `AGENTS.md` (Antigravity's customization docs, as quoted by skly.ai/docs/rules/antigravity
  and antigravity.codes; AGENTS.md since Antigravity 1.20.3);
- `.agents/rules/*.md` (older workspaces `.agent/rules/`): each rule's `trigger` frontmatter is
  `always_on` (at start), `glob` (its `globs` match a file the agent works on),
  `model_decision` (offered by its description) or `manual` (@-mentioned) — third-party guides
  (rbbtsn0w.me, thelgtm.dev); a rule without a trigger is read as always on (Memory Lens's
  reading);
- `.agents/workflows/*.md`: run as `/name` slash commands (on demand);
- `.agents/skills/*/SKILL.md`: offered by their description (on demand).

The check: the same content loaded twice through GEMINI.md and AGENTS.md (one imports the
other with `@`, links to it, or holds the same text), a warning naming both paths.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memlens.agents.base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    JitFile,
    JitLoad,
    ListedFile,
    MemoryAgent,
    WithoutReferences,
    WorkspaceCheck,
    files_figures,
)
from memlens.files.fsread import FileReader
from memlens.files.globs import budget_diagnostic, gitignore_matcher, skipped_globs
from memlens.files.nodecompat import is_subpath, resolve
from memlens.files.output import markdown_code, markdown_text
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.text.frontmatter import yaml_mapping

AGENT_ID = "antigravity"
INSTRUCTION_FILES = ("GEMINI.md", "AGENTS.md")
AGENT_FOLDERS = (".agents", ".agent")  # the second: older workspaces
DUPLICATE = "antigravity-duplicate-memory"
TOO_LONG = "antigravity-rule-too-long"
MAX_RULE_CHARS = 12_000  # per rule file, as skly.ai quotes Antigravity's docs
CONVENTION_NOTE = "a convention from public descriptions of Antigravity CLI, not verified"

ALWAYS_ON, GLOB, MODEL_DECISION, MANUAL = "always_on", "glob", "model_decision", "manual"
TRIGGERS = (ALWAYS_ON, GLOB, MODEL_DECISION, MANUAL)

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)")
_LINE = re.compile(r"^([A-Za-z_]+)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.MULTILINE)
# An `@path` import at the start of a line or after a space (not in a code fence).
_IMPORT = re.compile(r"(?:^|(?<=\s))@([^\s`]+)")


def heading(path: str) -> str:
    return f"--- {path} ---"


def render(files: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"{heading(path)}\n{text.strip()}" for path, text in files)


@dataclass
class Rule:
    path: str
    body: str
    trigger: str  # one of TRIGGERS
    globs: list[str]
    description: str | None

    @property
    def note(self) -> str:
        if self.trigger == GLOB:
            return "glob: when a file matching " + ", ".join(self.globs) + " is worked on"
        if self.trigger == MODEL_DECISION:
            return f"model decision: only offered by its description ({self.description})"
        if self.trigger == MANUAL:
            return "manual: only when @-mentioned"
        return "always on"


def _meta(content: str) -> tuple[dict[str, object], str]:
    match = _FRONTMATTER.match(content)
    if match is None:
        return {}, content
    text = match.group(1)
    meta = yaml_mapping(text)
    if meta is None:  # unquoted globs (`globs: *.py`) are no YAML: one `key: value` a line
        meta = {m[1]: m[2].strip("\"'") for m in _LINE.finditer(text)}
    return meta, content[match.end():]


def _globs(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str):
        return [g.strip() for g in value.split(",") if g.strip()]
    return []


def parse_rule(path: str, content: str) -> Rule:
    meta, body = _meta(content)
    trigger = str(meta.get("trigger") or ALWAYS_ON).strip()
    description = meta.get("description")
    return Rule(path, body, trigger if trigger in TRIGGERS else ALWAYS_ON,
                _globs(meta.get("globs")),
                description.strip() if isinstance(description, str) else None)


def _markdown_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [posixpath.join(folder, n) for n in names
            if n.endswith(".md") and os.path.isfile(posixpath.join(folder, n))]


def agent_folder(cwd: str) -> str | None:
    """The workspace's `.agents` folder (else `.agent`), if there is one."""
    return next((posixpath.join(cwd, f) for f in AGENT_FOLDERS
                 if os.path.isdir(posixpath.join(cwd, f))), None)


def rules_of(cwd: str, reader: FileReader) -> list[Rule]:
    folder = agent_folder(cwd)
    out = []
    for path in _markdown_files(posixpath.join(folder, "rules")) if folder else []:
        content = reader.read(path).content
        if content is not None:
            out.append(parse_rule(path, content))
    return out


def workflows_of(cwd: str) -> list[str]:
    folder = agent_folder(cwd)
    return _markdown_files(posixpath.join(folder, "workflows")) if folder else []


def skills_of(cwd: str) -> list[str]:
    folder = agent_folder(cwd)
    if folder is None:
        return []
    skills = posixpath.join(folder, "skills")
    try:
        names = sorted(os.listdir(skills))
    except OSError:
        return []
    return [p for n in names if os.path.isfile(p := posixpath.join(skills, n, "SKILL.md"))]


def instruction_files(cwd: str, home: str, reader: FileReader) -> list[tuple[str, str, str]]:
    """(path, label, text) of the GEMINI.md and AGENTS.md it reads: global, then the
    workspace's."""
    out = []
    for label, folder in (("global", posixpath.join(resolve(home), ".gemini")),
                          ("project", cwd)):
        for name in INSTRUCTION_FILES:
            path = posixpath.join(folder, name)
            content = reader.read(path).content
            if content is not None:
                out.append((path, label, content))
    return out


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _imports(path: str, content: str) -> list[tuple[int, int, str]]:
    """(1-based line, column, resolved path) of each `@path` outside code fences."""
    out, fenced = [], False
    for number, line in enumerate(content.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _IMPORT.finditer(line):
            target = match.group(1).rstrip(".,;:)")
            out.append((number, match.start() + 1,
                        resolve(posixpath.dirname(path), target)))
    return out


def too_long(rules: list[Rule], reader: FileReader) -> list[Diagnostic]:
    """`antigravity-rule-too-long` for each rule file over MAX_RULE_CHARS characters, and
    `glob-budget-exceeded` for one with more globs than are matched."""
    out = []
    for rule in rules:
        if skipped := skipped_globs(rule.globs):
            out.append(budget_diagnostic(rule.path, 1, "globs", skipped=skipped,
                                         total=len(rule.globs)))
        chars = len(reader.read(rule.path).content or "")
        if chars > MAX_RULE_CHARS:
            out.append(Diagnostic(
                path=rule.path, line=1, col=1, end_line=1, end_col=1, severity="warning",
                code=TOO_LONG,
                message=f"A rule of {chars:,} characters: Antigravity limits each rule file "
                        f"to {MAX_RULE_CHARS:,}",
                detail="Split it across several rule files (the limit as skly.ai quotes "
                       "Antigravity's docs; a convention, not verified)"))
    return out


def duplicates(folder: str, reader: FileReader) -> list[Diagnostic]:
    """`antigravity-duplicate-memory` for a folder whose GEMINI.md and AGENTS.md both load and
    carry the same content: one imports the other (`@AGENTS.md`), one is a link to the
    other, or both hold the same text."""
    gemini, agents = (posixpath.join(folder, n) for n in INSTRUCTION_FILES)
    texts = {p: reader.read(p).content for p in (gemini, agents)}
    if any(t is None for t in texts.values()):
        return []
    out: list[Diagnostic] = []

    def warn(path: str, line: int, col: int, length: int, other: str, how: str) -> None:
        out.append(Diagnostic(
            path=path, line=line, col=col, end_line=line, end_col=col + length,
            severity="warning", code=DUPLICATE,
            message=f"Antigravity CLI loads {other} twice: {how}",
            detail=(f"Antigravity CLI reads both {gemini} and {agents}; keep the shared text "
                    "in one of them (a convention from public descriptions of Antigravity CLI, "
                    "not verified)")))

    real = {p: os.path.realpath(p) for p in texts}
    if real[gemini] == real[agents]:
        link = gemini if os.path.islink(gemini) else agents
        other = agents if link == gemini else gemini
        warn(link, 1, 1, 0, other, f"{link} is a link to {other}, and both are read")
        return out
    for path, other in ((gemini, agents), (agents, gemini)):
        for line, col, target in _imports(path, texts[path] or ""):
            if os.path.realpath(target) == real[other]:
                warn(path, line, col, 1 + len(posixpath.basename(target)), other,
                     f"{path} imports it, and it is read on its own too")
    if not out:
        a, b = _normalised(texts[gemini] or ""), _normalised(texts[agents] or "")
        if a and a == b:
            warn(agents, 1, 1, 0, gemini, f"{agents} holds the same text as {gemini}")
    return out


@dataclass
class AntigravityJitSession:
    cwd: str
    reader: FileReader

    def __post_init__(self) -> None:
        self._loaded: set[str] = set()
        self._rules: list[Rule] | None = None

    def load_for(self, path: str) -> JitLoad:
        path = resolve(path)
        if self._rules is None:
            self._rules = rules_of(self.cwd, self.reader)
        files = []
        if is_subpath(self.cwd, path) and path != self.cwd:
            rel = posixpath.relpath(path, self.cwd)
            for rule in self._rules:
                if (rule.trigger == GLOB and rule.path not in self._loaded and rule.globs
                        and gitignore_matcher(rule.globs)(rel)):
                    self._loaded.add(rule.path)
                    files.append(JitFile(rule.path, rule.body, "its globs match " + rel))
        context = render([(f.path, f.content) for f in files])
        return JitLoad(path, files, context + "\n" if context else "",
                       [context] if context else [])


def _chosen(settings: MemorySettings) -> bool:
    return AGENT_ID in {p.agent for p in settings.chosen_agents}


def _glob_reads_on(rule: Rule, cwd: str) -> Callable[[str], bool]:
    """Whether working on a path (absolute) brings the `glob` rule in (its JIT session)."""
    matches = gitignore_matcher(rule.globs) if rule.globs else None

    def reads_on(target: str) -> bool:
        rel = posixpath.relpath(target, cwd)
        return matches is not None and not rel.startswith("..") and bool(matches(rel))
    return reads_on


class AntigravityAgent(WithoutReferences, MemoryAgent):
    """Antigravity CLI, by public descriptions of it (a convention)."""

    id = AGENT_ID
    label = "Antigravity CLI"
    receiver = "Antigravity CLI"
    nothing_loads = "no Antigravity CLI memory loads here"
    list_label_width = 14
    expands_home = True

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return ()  # GEMINI.md and AGENTS.md are Gemini CLI's and the AGENTS.md convention's

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return any(f"/{folder}/rules/" in path or f"/{folder}/workflows/" in path
                   for folder in AGENT_FOLDERS)

    def claims(self, path: str) -> bool:
        return False  # its GEMINI.md and AGENTS.md are other agents' too

    def home_folder(self, home: str) -> str | None:
        return None  # ~/.gemini is Gemini CLI's, watched already

    def home_change_matters(self, path: str, home: str) -> bool:
        return True

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        cwd = resolve(folder)
        rules = rules_of(cwd, reader)
        startup = [AgentFile(p, label, text) for p, label, text in
                   instruction_files(cwd, settings.home, reader)]
        startup += [AgentFile(r.path, "rule", r.body) for r in rules if r.trigger == ALWAYS_ON]
        sent = render([(f.path, f.content or "") for f in startup])
        text, later = sent, []
        if target is not None:
            read = AntigravityJitSession(cwd, reader).load_for(target)
            text = "\n\n".join(p for p in (sent, read.context.rstrip("\n")) if p)
            later = [AgentFile(f.path, "on read", f.content, f.reason, when="on-read")
                     for f in read.files]
        offered = [r for r in rules if r.trigger != ALWAYS_ON]
        headline = (f"**Antigravity CLI memory for {markdown_code(cwd)}** ({CONVENTION_NOTE}) — "
                    f"{files_figures(self.label, startup, sent)}"
                    + "".join(f"\n- {markdown_code(r.path)}: {markdown_text(r.note)}"
                            for r in offered))
        listing = [ListedFile(f.path, f.label, len(f.content or ""), f.content)
                   for f in startup]
        listing += [ListedFile(r.path, r.trigger, len(r.body), r.body) for r in offered]
        listing += [ListedFile(p, "workflow") for p in workflows_of(cwd)]
        listing += [ListedFile(p, "skill") for p in skills_of(cwd)]
        return AgentMemory(
            agent=self.id, cwd=cwd, mode="convention", files=[*startup, *later], text=text,
            diagnostics=[*duplicates(cwd, reader), *too_long(rules, reader)],
            headline=headline, listing=listing,
            details={"convention": True,
                     "rules": [{"path": r.path, "trigger": r.trigger, "globs": r.globs}
                               for r in rules],
                     "workflows": workflows_of(cwd), "skills": skills_of(cwd)},
            # What the convention predicts it sends at start (`memlens diff` compares it).
            payloads=[sent] if sent else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        """Only where Antigravity CLI is in use or its own `.agents` rules or workflows are:
        a GEMINI.md beside an AGENTS.md is no problem for an agent that reads one of them."""
        out = WorkspaceCheck(found=found)
        for root in (resolve(r) for r in roots):
            if not (_chosen(settings) or self._has_files(root)):
                continue
            out.diagnostics += duplicates(root, reader)
            global_folder = posixpath.join(resolve(settings.home), ".gemini")
            out.diagnostics += [d for d in duplicates(global_folder, reader)
                                if d not in out.diagnostics]
            out.sources += [p for p, _, _ in instruction_files(root, settings.home, reader)
                            if p not in out.sources]
            rules = rules_of(root, reader)
            out.diagnostics += too_long(rules, reader)
            out.sources += [r.path for r in rules]
        out.watched = set(out.sources)
        return out

    @staticmethod
    def _has_files(root: str) -> bool:
        folder = agent_folder(root)
        return folder is not None and any(
            os.path.isdir(posixpath.join(folder, sub)) for sub in ("rules", "workflows"))

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return AntigravityJitSession(resolve(folder), reader)

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        return []

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """Its files for the folder, each with when it applies; nothing where neither its
        `.agents` rules or workflows are nor it is in use."""
        cwd = resolve(folder)
        if not (_chosen(settings) or self._has_files(cwd)):
            return []
        rows = [AgentFile(p, label, text, "at start (convention)") for p, label, text in
                instruction_files(cwd, settings.home, reader)]
        for rule in rules_of(cwd, reader):
            rows.append(AgentFile(rule.path, "rule " + rule.trigger, rule.body,
                                  rule.note + " (convention)",
                                  when={ALWAYS_ON: "startup", GLOB: "on-read"}.get(
                                      rule.trigger, "on-demand"),
                                  reads_on=_glob_reads_on(rule, cwd)
                                  if rule.trigger == GLOB else None))
        rows += [AgentFile(p, "workflow", reader.read(p).content,
                           f"run as /{posixpath.basename(p)[:-3]} (convention)",
                           when="on-demand") for p in workflows_of(cwd)]
        rows += [AgentFile(p, "skill", reader.read(p).content,
                           "offered by its description (convention)", when="on-demand")
                 for p in skills_of(cwd)]
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return [r for r in self.view_files(memory.cwd, settings, reader, check,
                                           lambda p: memory.cwd)
                if r.when in ("on-read", "on-demand")]

    def section_starts(self, path: str) -> list[str]:
        return [heading(path)]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {**memory.details, "content": content}
