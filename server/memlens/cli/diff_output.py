"""`memlens diff`'s output: each change said once, with the agents and folders it reaches
under it, after a summary (docs/reference.md "memlens diff").

A *change* is the lines one comparison adds and removes in what an agent sends at start; the
same lines in several (agent, folder) pairs — one edited root file reaches every folder below
it — are one change. Each change is traced to the changed files whose lines it holds (else to
the changed files in or above its folders)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlens.files.output import escape_controls

if TYPE_CHECKING:
    from memlens.cli.diff_files import FileDelta
    from memlens.protocol.context_diff import ContextChangeEntry, DiffChangeGroup, DiffResult
    from memlens.workspace.effective import ChosenAgent

WIDTH = 100  # columns a folder list wraps at
FOLDER_LINES = 2  # lines of folders shown per agent and change (the rest counted)
SUMMARY_FILES = 10  # files the text output's summary lists (--stat lists every one)
GITHUB_DIFF_LINES = 60  # lines of the diff a `--format github` notice carries at most
GITHUB_FOLDERS = 20  # folders a notice names per agent


def changed_lines(diff: str) -> tuple[str, ...]:
    """The lines a unified diff adds and removes, in order (its file header left out)."""
    body = diff.split("\n@@", 1)[1] if "\n@@" in diff else ""
    return tuple(line for line in body.splitlines() if line[:1] in ("+", "-"))


def _change_key(entry: ContextChangeEntry) -> tuple[str, ...]:
    """What makes two changes the same: their lines, with the folder the agent works in
    written as a placeholder wherever a line names it alone (Codex's `# AGENTS.md
    instructions for FOLDER`), so one change in many folders is one key."""
    alone = re.compile(re.escape(entry.folder) + r"(?![\w/.-])")
    return tuple(alone.sub("\0FOLDER", line) for line in changed_lines(entry.diff))


def group_changes(result: DiffResult, deltas: list[FileDelta]) -> list[DiffChangeGroup]:
    """`result.changes` grouped by the lines they add and remove (in order of first
    appearance), each traced to the files it comes from."""
    from memlens.protocol.context_diff import DiffChangeGroup

    keys: dict[tuple[str, ...], list[int]] = {}
    for index, entry in enumerate(result.changes):
        keys.setdefault(_change_key(entry), []).append(index)
    groups = []
    for key, members in keys.items():
        first = result.changes[members[0]]
        groups.append(DiffChangeGroup(
            changes=members, added=first.added, removed=first.removed,
            files=_sources(key, [result.changes[i].folder for i in members], deltas,
                           result.repository)))
    return groups


def _sources(key: tuple[str, ...], folders: list[str], deltas: list[FileDelta],
             top: str) -> list[str]:
    """The changed files a change comes from: those holding its lines, else the changed files
    in or above one of its folders."""
    lines = {line[1:].strip() for line in key} - {""}
    holding = [d.change.path for d in deltas if d.lines & lines]
    if holding:
        return holding

    def above(path: str) -> bool:
        folder = posixpath.dirname(posixpath.join(top, path))
        return any(f == folder or f.startswith(folder.rstrip("/") + "/") for f in folders)

    return [d.change.path for d in deltas if above(d.change.path)]


# --- shared wording --------------------------------------------------------------------------
def _relative(entry: ContextChangeEntry) -> str:
    return "./" if entry.relative_folder == "." else entry.relative_folder + "/"


def _tokens(entries: list[ContextChangeEntry]) -> str:
    """`+12 tokens`, or `+3 to +12 tokens` when the folders differ (each agent's estimate)."""
    deltas = [(e.tokens_after or 0) - (e.tokens_before or 0) for e in entries]
    low, high = min(deltas), max(deltas)
    return f"{low:+,} tokens" if low == high else f"{low:+,} to {high:+,} tokens"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


@dataclass
class _Reach:
    """One agent's part of a change: its profile, label and the entries (one per folder)."""

    label: str
    profile: str
    entries: list[ContextChangeEntry]


def _reach(result: DiffResult, indexes: list[int]) -> list[_Reach]:
    reach: dict[str, _Reach] = {}
    for index in indexes:
        entry = result.changes[index]
        part = reach.setdefault(entry.agent, _Reach(entry.agent_label, entry.profile, []))
        part.entries.append(entry)
    return list(reach.values())


def _folder_lines(part: _Reach) -> list[str]:
    """`  Gemini CLI (gemini@0.44+), 3 folders, +2 tokens: ./ api/ web/`, wrapped at WIDTH,
    at most FOLDER_LINES lines (the rest counted)."""
    lines = [f"  {part.label} ({part.profile}), {_plural(len(part.entries), 'folder')}, "
             f"{_tokens(part.entries)}:"]
    names = [escape_controls(_relative(e)) for e in part.entries]
    for shown, name in enumerate(names):
        if len(lines[-1]) + 1 + len(name) > WIDTH and len(lines[-1].strip()) > 0:
            if len(lines) == FOLDER_LINES:
                lines.append(f"      … and {len(names) - shown:,} more (--json lists every "
                             "folder)")
                break
            lines.append("     ")
        lines[-1] += " " + name
    return lines


# --- text and --stat -------------------------------------------------------------------------
def _shown(result: DiffResult, path: str) -> str:
    """A changed file's path as the text output shows it: relative to the folder compared."""
    rel = posixpath.relpath(posixpath.join(result.repository, path), result.root)
    return escape_controls(rel)


def _file_reach(result: DiffResult, path: str) -> str:
    counts: dict[str, set[str]] = {}
    for group in result.groups:
        if path in group.files:
            for i in group.changes:
                entry = result.changes[i]
                counts.setdefault(entry.agent_label, set()).add(entry.folder)
    if not counts:
        return "no agent's start context changes"
    return ", ".join(f"{label} in {_plural(len(folders), 'folder')}"
                     for label, folders in counts.items())


def summary(result: DiffResult, agents: list[ChosenAgent], *, every_file: bool) -> list[str]:
    """The summary the output starts with: the sides, the counts, each agent's reach and
    tokens, and each changed file with what it reaches."""
    changed_agents = list(dict.fromkeys(e.agent for e in result.changes))
    lines = [f"memlens diff {result.base} → {result.head}: "
             f"{_plural(len(result.files), 'file')} changed; "
             f"{_plural(len(result.groups), 'change')} in what agents send at start, for "
             f"{len(changed_agents)} of {_plural(len(agents), 'agent')}; "
             f"{_plural(len(result.folders), 'folder')} compared"]
    for agent in agents:
        entries = [e for e in result.changes if e.agent == agent.id]
        said = (f"{_plural(len(entries), 'folder')}, {_tokens(entries)}" if entries
                else "no change")
        lines.append(f"  {agent.agent.label} ({agent.name}): {said}")
    # The files that reach an agent, each on a line; the rest of the commit range (scripts,
    # code, skills' assets) in one line: noise in an answer about what agents read.
    reaching = {f for group in result.groups for f in group.files}
    relevant = [f for f in result.files if f.path in reaching]
    files = relevant if every_file else relevant[:SUMMARY_FILES]
    width = max((len(_shown(result, f.path)) for f in files), default=0)
    for change in files:
        lines.append(f"  {_shown(result, change.path):<{width}}  {change.status} "
                     f"+{change.added} −{change.removed}  {_file_reach(result, change.path)}")
    if len(files) < len(relevant):
        lines.append(f"  … and {len(relevant) - len(files):,} more file(s) (--stat lists "
                     "every one)")
    if len(relevant) < len(result.files):
        others = len(result.files) - len(relevant)
        lines.append(f"  {_plural(others, 'other changed file')} change no agent's start "
                     "context (--json lists every file)")
    return lines


def render_text(result: DiffResult, agents: list[ChosenAgent], *, stat: bool) -> str:
    """The summary, then (without `stat`) each change once; nothing when no agent's start
    context changed (stderr says so)."""
    if not result.changes:
        return ""
    lines = summary(result, agents, every_file=stat)
    out = "\n".join(lines) + "\n"
    if stat:
        return out
    for number, group in enumerate(result.groups, 1):
        first = result.changes[group.changes[0]]
        sources = ", ".join(_shown(result, f) for f in group.files) or "no single file"
        out += (f"\nchange {number} of {len(result.groups)} ({sources}): "
                f"+{group.added} −{group.removed} line(s)\n")
        for part in _reach(result, group.changes):
            out += "\n".join(_folder_lines(part)) + "\n"
        diff = escape_controls(first.diff, keep="\n\t")
        out += diff if diff.endswith("\n") or not diff else diff + "\n"
    return out


# --- --format github -------------------------------------------------------------------------
def _gh_data(text: str) -> str:
    """GitHub workflow-command escaping of a message (as `check --format github`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """GitHub workflow-command escaping of a property value (also ':' and ',')."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _reach_message(result: DiffResult, groups: list[DiffChangeGroup]) -> str:
    """What the changes reach, one line per agent, then the first change's diff."""
    indexes = list(dict.fromkeys(i for g in groups for i in g.changes))
    lines = [f"What the agents send at start changes ({result.base} → {result.head}):"]
    for part in _reach(result, indexes):
        names = [_relative(e) for e in part.entries]
        more = len(names) - GITHUB_FOLDERS
        listed = ", ".join(names[:GITHUB_FOLDERS]) + (f" and {more:,} more" if more > 0 else "")
        lines.append(f"{part.label} ({part.profile}) in {_plural(len(names), 'folder')} "
                     f"({listed}), {_tokens(part.entries)}")
    diff = result.changes[groups[0].changes[0]].diff.splitlines()
    lines += diff[:GITHUB_DIFF_LINES]
    if len(diff) > GITHUB_DIFF_LINES:
        lines.append(f"… {len(diff) - GITHUB_DIFF_LINES} more line(s): run memlens diff")
    return "\n".join(lines)


def _notice(file: str, title: str, message: str, line: int | None = None,
            end_line: int | None = None) -> str:
    where = f"file={_gh_property(file)}"
    if line is not None:
        where += f",line={line},endLine={end_line or line}"
    return f"::notice {where},title={_gh_property(title)}::{_gh_data(message)}\n"


def render_github(result: DiffResult, deltas: list[FileDelta],
                  fallback_file: dict[int, str]) -> str:
    """A notice on each changed stretch of a file that changes what an agent sends (the
    changes its lines are in, else every change the file reaches); a change traced to no file
    still there, one notice on the memory file of its first folder (`fallback_file`, per
    group index)."""
    out = ""
    placed: set[int] = set()
    for delta in deltas:
        mine = [n for n, g in enumerate(result.groups) if delta.change.path in g.files]
        if not mine or delta.change.status == "removed":
            continue
        for hunk, lines in zip(delta.change.hunks, delta.hunk_lines, strict=True):
            lines_of = [n for n in mine if lines & {line[1:].strip() for line in
                                                    changed_lines(result.changes[
                                                        result.groups[n].changes[0]].diff)}]
            chosen = lines_of or mine
            placed |= set(chosen)
            title = f"memlens: this changes what {_agents_in(result, chosen)} at start"
            out += _notice(delta.change.path, title,
                           _reach_message(result, [result.groups[n] for n in chosen]),
                           hunk.line, hunk.end_line)
    for number, group in enumerate(result.groups):
        if number in placed:
            continue
        title = f"memlens: what {_agents_in(result, [number])} at start changes"
        out += _notice(fallback_file[number], title, _reach_message(result, [group]))
    return out


def _agents_in(result: DiffResult, group_numbers: list[int]) -> str:
    """`Claude Code sends`, `Gemini CLI and Claude Code send`: the agents the changes reach."""
    labels = dict.fromkeys(result.changes[i].agent_label for n in group_numbers
                           for i in result.groups[n].changes)
    names = list(labels)
    if len(names) == 1:
        return f"{names[0]} sends"
    return ", ".join(names[:-1]) + " and " + names[-1] + " send"
