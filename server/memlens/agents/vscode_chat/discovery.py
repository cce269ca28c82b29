"""Which instruction files VS Code's chat agent reads, in which order (VS Code 1.139 with its
bundled GitHub Copilot Chat 0.67; read from their sources, then checked against the real
chat by scripts/vscode/chat-oracle.sh — docs/reference.md, "VS Code chat").

A request in agent mode carries, in this order:

1. *Applying* instruction files (`chat.includeApplyingInstructions`, default on): each
   instruction file whose `applyTo` (for `.claude/rules` files: `paths`) matches a file
   attached to the request, or is `**`, `**/*` or `*` (`globs.applies`).
2. *Agent* instruction files, each folder's (the workspace folder; with
   `chat.useCustomizationsInParentRepositories` also the folders up to its repository root):
   `.github/copilot-instructions.md` and `~/.copilot/copilot-instructions.md`
   (`github.copilot.chat.codeGeneration.useInstructionFiles`) first, then `AGENTS.md`
   (`chat.useAgentsMdFile`), `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md` and
   `~/.claude/CLAUDE.md` (`chat.useClaudeMdFile`); names matched ignoring case; each group
   sorted by `file://` URI as JavaScript's `localeCompare` sorts (`collation_key`); a link
   whose target is already in the list is left out.

Each is sent whole (frontmatter included), trimmed, as `<attachment filePath="PATH">` in the
custom-instructions block of the system message; a file already sent, or whose trimmed text
another file already sent, and a blank file are left out. Before them, the block lists every
instruction file found in `chat.instructionsFilesLocations` (user folders first) with its
`description` and `applyTo`, and with `chat.useNestedAgentsMdFiles` every `AGENTS.md` in the
workspace, for the model to read when it needs them (`render_index`).
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field
from urllib.parse import quote

from memlens.agents.vscode_chat import globs
from memlens.agents.vscode_chat.locations import (
    SYSTEM_FOLDERS,
    Areas,
    Location,
    NotWalked,
    Walked,
    files_in,
)
from memlens.agents.vscode_chat.settings import (
    INCLUDE_APPLYING,
    PARENT_REPOS,
    USE_AGENTS_MD,
    USE_CLAUDE_MD,
    USE_INSTRUCTION_FILES,
    USE_NESTED_AGENTS_MD,
    ChatSettings,
    read_chat_settings,
)
from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname
from memlens.files.walk import walk
from memlens.text.frontmatter import line_closed_frontmatter

INSTRUCTIONS_SUFFIX = ".instructions.md"
CLAUDE_RULES = ".claude/rules"
COPILOT_INSTRUCTIONS = "copilot-instructions.md"
# What JavaScript's String.prototype.trim removes.
JS_WHITESPACE = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                 "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")

INDEX_HEAD = (
    "<instructions>\n"
    "Here is a list of instruction files that contain rules for working with this codebase.\n"
    "These files are important for understanding the codebase structure, conventions, and "
    "best practices.\n"
    "When an instruction file applies to your task (based on its description or applyTo "
    "pattern), follow the rules specified in it.\n"
    "If the file content is not already included in the context, use the 'read_file' tool to "
    "read it before proceeding. Use the exact value from the <file> element as-is with the "
    "tool; do not add or remove prefixes or otherwise modify it.\n"
    "Only load instruction files when they are relevant to the current task. Do not eagerly "
    "load all instructions upfront.\n"
    "When modifying or creating files, check for instructions whose applyTo pattern matches "
    "the file path and follow them.\n"
)


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def xml_escape(text: str) -> str:
    """`&`, `<` and `>` escaped; quotes are left as they are (checked in the real chat)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ICU's root collation for ASCII (what `localeCompare` uses in Node and Chromium): spaces and
# punctuation, then symbols, then digits, then letters; case is compared last, lower first.
_ICU_ORDER = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_ICU_RANK = {c: i for i, c in enumerate(_ICU_ORDER)}


def collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A sort key close to `localeCompare`'s for `file://` URIs: characters outside ASCII
    sort after the letters by code point."""
    primary = tuple(_ICU_RANK.get(c.lower(), len(_ICU_ORDER) + ord(c)) for c in text)
    tertiary = tuple(1 if c.isupper() else 0 for c in text)
    return primary, tertiary


def file_uri(path: str) -> str:
    """`URI.file(path).toString()`: the path percent-encoded as VS Code encodes it."""
    return "file://" + quote(path, safe="/-._~!$'()*,;=@")


@dataclass
class InstructionFile:
    """An `*.instructions.md` file (or a `.claude/rules` Markdown file) found in a location."""

    path: str
    storage: str  # "user" (a `~/` location) or "local"
    content: str | None
    description: str | None = None
    pattern: str | None = None  # applyTo (`paths` for Claude rules), as the index shows it
    # The file starts with a byte-order mark: VS Code then reads no frontmatter at all.
    bom_hides_header: bool = False


@dataclass
class Attached:
    path: str
    kind: str  # "applying", "copilot-instructions", "agents-md", "claude-md"
    text: str  # what is sent: the file trimmed
    note: str | None = None


@dataclass
class ChatLoad:
    workspace: str
    settings: ChatSettings
    instructions: list[InstructionFile] = field(default_factory=list)  # the index, in order
    nested_agents: list[str] = field(default_factory=list)  # AGENTS.md the index lists
    attached: list[Attached] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    disabled: list[tuple[str, str]] = field(default_factory=list)  # (path, the setting off)
    # Locations not walked and links not followed (`locations`), and where a walk stopped.
    walked: Walked = field(default_factory=Walked)

    @property
    def not_walked(self) -> list[NotWalked]:
        return self.walked.not_walked

    def index_parts(self) -> list[str]:
        """The index in pieces each sent verbatim: its head with the instruction files, then
        one piece per nested AGENTS.md (VS Code lists those in its file search's order,
        which varies: they are shown here by path), then its end. [] without entries."""
        if not self.instructions and not self.nested_agents:
            return []
        head = INDEX_HEAD
        for item in self.instructions:
            head += f"<instruction>\n<file>{item.path}</file>\n"
            if item.description:
                head += f"<description>{xml_escape(item.description)}</description>\n"
            if item.pattern:
                head += f"<applyTo>{xml_escape(item.pattern)}</applyTo>\n"
            head += "</instruction>\n"
        parts = [head]
        for path in self.nested_agents:
            folder = posixpath.relpath(dirname(path), self.workspace)
            description = ("Instructions for the workspace" if folder == "." else
                           f"Instructions for folder '{folder}'")
            parts.append(f"<instruction>\n<file>{path}</file>\n<description>"
                         f"{xml_escape(description)}</description>\n</instruction>\n")
        parts.append("</instructions>\n")
        return parts

    def render_index(self) -> str:
        return "".join(self.index_parts())

    def attachments(self) -> list[str]:
        return [render_attachment(a.path, a.text) for a in self.attached]

    def render(self) -> str:
        """The custom-instructions block as far as memory files make it (VS Code also lists
        its skills and subagents between the index and the attachments)."""
        index = self.render_index()
        attachments = self.attachments()
        if not index and not attachments:
            return ""
        return ("<instructions>\n" + (index + "\n" if index else "") + "".join(attachments)
                + "\n</instructions>")


def render_attachment(path: str, text: str) -> str:
    return f"<attachment filePath={json.dumps(path, ensure_ascii=False)}>\n{text}\n</attachment>\n"


def _read(reader: FileReader, path: str) -> str | None:
    read = reader.read(path)
    if read.content is None:
        return None
    return read.content.removeprefix("\ufeff")


def _header(text: str) -> dict[str, object]:
    """The frontmatter as VS Code's prompt parser reads it: none when the file starts with a
    byte-order mark (checked in the real chat)."""
    if text.startswith("\ufeff"):
        return {}
    return line_closed_frontmatter(text.replace("\r\n", "\n")) or {}


def _pattern(header: dict[str, object], path: str) -> str | None:
    apply_to = header.get("applyTo")
    if isinstance(apply_to, str) and apply_to.strip():
        return apply_to
    if f"/{CLAUDE_RULES}/" in path:
        paths = header.get("paths")
        if isinstance(paths, str) and paths.strip():
            return paths
        if isinstance(paths, list):
            items = [p for p in paths if isinstance(p, str) and p.strip()]
            if items:
                return ", ".join(items)
    return None


def is_instruction_file(path: str) -> bool:
    name = posixpath.basename(path)
    if name.endswith(INSTRUCTIONS_SUFFIX) or name == COPILOT_INSTRUCTIONS:
        return True
    return name.endswith(".md") and name != "README.md" and f"/{CLAUDE_RULES}/" in path


def workspace_roots(workspace: str, settings: ChatSettings, home: str) -> list[str]:
    """The workspace folder, and with `chat.useCustomizationsInParentRepositories` the folders
    above it up to the repository root (when one is found below HOME)."""
    roots = [workspace]
    if not settings.get(PARENT_REPOS):
        return roots
    chain: list[str] = []
    current = workspace
    while True:
        chain.append(current)
        if os.path.isdir(posixpath.join(current, ".git")):
            return list(dict.fromkeys([workspace, *chain]))
        parent = dirname(current)
        if parent in (current, home) or current == "/":
            return roots
        current = parent


def _locations(workspace: str, settings: ChatSettings, home: str) -> list[Location]:
    """The enabled locations, resolved: the `~/` ones first, then the others, each in the
    setting's order; a relative one once per root (glob locations are not modelled)."""
    user: list[Location] = []
    local: list[Location] = []
    for name, enabled in settings.locations.items():
        if not enabled or "*" in name:
            continue
        scope, source = settings.location_scopes.get(name, ("workspace", None))
        if name.startswith("~/"):
            folder = posixpath.normpath(posixpath.join(home, name[2:]))
            user.append(Location(name, folder, "user", scope, source))
        elif posixpath.isabs(name):
            local.append(Location(name, posixpath.normpath(name), "local", scope, source))
        else:
            for root in workspace_roots(workspace, settings, home):
                local.append(Location(name, posixpath.normpath(posixpath.join(root, name)),
                                      "local", scope, source))
    return [*user, *local]


def instruction_files(workspace: str, settings: ChatSettings, home: str,
                      reader: FileReader, walked: Walked | None = None
                      ) -> list[InstructionFile]:
    """Every instruction file in the enabled `chat.instructionsFilesLocations`: the `~/`
    locations first, then the workspace's, each in the setting's order; in a folder, by
    name, subfolders searched to a depth of 5 (not those of a workspace folder itself).
    Only the locations `locations.Areas` allows are walked; the others, and the links the
    walk does not follow, go to `walked.not_walked`."""
    walked = walked if walked is not None else Walked()
    areas = Areas.of(workspace_roots(workspace, settings, home), home)
    seen: set[str] = set()
    out: list[InstructionFile] = []
    for location in _locations(workspace, settings, home):
        if not walked.locations.take(location.source or location.folder):
            break
        area = areas.area_of(location, walked.not_walked)
        if area is None:
            continue
        recurse = location.folder != workspace
        for path in files_in(location, area, recurse, walked.budget, walked.not_walked):
            if path in seen or not is_instruction_file(path) \
                    or posixpath.basename(path) == COPILOT_INSTRUCTIONS:
                continue
            seen.add(path)
            read = reader.read(path)
            raw = read.content
            header = _header(raw) if raw is not None else {}
            description = header.get("description")
            out.append(InstructionFile(
                path, location.storage, raw.removeprefix("\ufeff") if raw is not None else None,
                description if isinstance(description, str) and description else None,
                _pattern(header, path),
                bom_hides_header=raw is not None and raw.startswith("\ufeff")
                and line_closed_frontmatter(raw[1:].replace("\r\n", "\n")) is not None))
    return out


@dataclass
class _AgentFile:
    path: str
    kind: str
    setting: str


def agent_files(workspace: str, settings: ChatSettings, home: str) -> tuple[
        list[_AgentFile], list[tuple[str, str]], list[tuple[str, str]]]:
    """(the agent instruction files VS Code attaches, in its order; links left out because
    their target is in the list; files present but switched off, with the setting)."""
    roots = workspace_roots(workspace, settings, home)
    wanted: list[tuple[str, list[str], str, str]] = [
        # (folder, names, kind, setting)
        *((posixpath.join(r, ".github"), [COPILOT_INSTRUCTIONS], "copilot-instructions",
           USE_INSTRUCTION_FILES) for r in roots),
        (posixpath.join(home, ".copilot"), [COPILOT_INSTRUCTIONS], "copilot-instructions",
         USE_INSTRUCTION_FILES),
        *((posixpath.join(r, ".claude"), ["CLAUDE.md"], "claude-md", USE_CLAUDE_MD)
          for r in roots),
        (posixpath.join(home, ".claude"), ["CLAUDE.md"], "claude-md", USE_CLAUDE_MD),
        *((r, ["AGENTS.md"], "agents-md", USE_AGENTS_MD) for r in roots),
        *((r, ["CLAUDE.md", "CLAUDE.local.md"], "claude-md", USE_CLAUDE_MD) for r in roots),
    ]
    found: list[tuple[_AgentFile, str | None]] = []
    off: list[tuple[str, str]] = []
    for folder, names, kind, setting in wanted:
        lowered = {n.lower() for n in names}
        try:
            entries = tree.entry_links(folder)  # one listing per run (files/tree.py)
        except OSError:
            continue
        for name, is_link in entries:
            if name.lower() not in lowered:
                continue
            path = posixpath.join(folder, name)
            if not os.path.isfile(path):
                continue
            if not settings.get(setting):
                off.append((path, setting))
                continue
            real = os.path.realpath(path) if is_link else None
            found.append((_AgentFile(path, kind, setting), real))
    included: set[str] = set()
    kept: list[_AgentFile] = []
    links: list[tuple[_AgentFile, str]] = []
    for item, real in found:
        if real is None:
            kept.append(item)
            included.add(item.path)
        else:
            links.append((item, real))
    skipped: list[tuple[str, str]] = []
    for item, real in links:
        if real in included:
            skipped.append((item.path, f"a link to {real}, which is already attached"))
        else:
            kept.append(item)
            included.add(real)
    kept.sort(key=lambda f: collation_key(file_uri(f.path)))
    copilot = [f for f in kept if f.kind == "copilot-instructions"]
    return copilot + [f for f in kept if f.kind != "copilot-instructions"], skipped, off


def nested_agents_files(workspace: str, settings: ChatSettings,
                        walked: Walked | None = None) -> list[str]:
    """Every `AGENTS.md` in the workspace (VS Code's file search, ignoring case), for the index:
    only with both `chat.useAgentsMdFile` and `chat.useNestedAgentsMdFiles`. The walk follows
    no link, never enters /proc, /sys or /dev, and stops after `MAX_FOLDERS` folders (saying
    where in `walked.folders`)."""
    if not (settings.get(USE_AGENTS_MD) and settings.get(USE_NESTED_AGENTS_MD)):
        return []
    folders = (walked or Walked()).folders
    found: list[str] = []
    for current, dirs, files in walk(workspace):
        if not folders.take(current):
            dirs[:] = []
            break
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules")
                         and posixpath.join(current, d) not in SYSTEM_FOLDERS)
        found += [posixpath.join(current, f) for f in files if f.lower() == "agents.md"]
    return sorted(p for p in found if p.startswith(workspace.rstrip("/") + "/"))


def load_chat(workspace: str, home: str, reader: FileReader | None = None, *,
              attached: list[str] | None = None, trusted: bool = True,
              settings: ChatSettings | None = None) -> ChatLoad:
    """What VS Code's chat in agent mode sends from memory files for a window open on
    `workspace`, with `attached` files attached to the request."""
    reader = reader or FileReader()
    workspace = os.path.realpath(workspace)
    settings = settings or read_chat_settings(workspace, home, trusted=trusted)
    load = ChatLoad(workspace, settings)
    load.instructions = instruction_files(workspace, settings, home, reader, load.walked)
    load.nested_agents = nested_agents_files(workspace, settings, load.walked)
    files = [os.path.abspath(p) for p in attached or []]
    candidates: list[tuple[str, str, str | None]] = []  # (path, kind, note)
    for item in load.instructions:
        if item.pattern is None:
            continue
        if not settings.get(INCLUDE_APPLYING):
            load.disabled.append((item.path, INCLUDE_APPLYING))
            continue
        hit = globs.applies(item.pattern, files)
        if hit is None:
            continue
        part, file = hit
        why = (f"applies to every request ({part})" if file is None
               else f"{part} matches {posixpath.relpath(file, workspace)}")
        candidates.append((item.path, "applying", why))
    agents, links, off = agent_files(workspace, settings, home)
    load.left_out += links
    load.disabled += off
    candidates += [(f.path, f.kind, None) for f in agents]
    seen_paths: set[str] = set()
    seen_texts: dict[str, str] = {}
    for path, kind, note in candidates:
        if path in seen_paths:
            continue
        seen_paths.add(path)
        content = _read(reader, path)
        if content is None:
            load.left_out.append((path, "cannot be read"))
            continue
        text = js_trim(content)
        if not text:
            load.left_out.append((path, "blank"))
            continue
        if text in seen_texts:
            load.left_out.append((path, f"the same text as {seen_texts[text]}, already sent"))
            continue
        seen_texts[text] = path
        load.attached.append(Attached(path, kind, text, note))
    return load
