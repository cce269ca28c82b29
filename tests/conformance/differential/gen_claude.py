"""Claude Code's generator for the differential runner (core.py): seeded trees of what real
repositories hold and what breaks parsers, and the comparison of what Claude Code sent with
memlens's prediction.

Trees: CLAUDE.md at the root, in ``.claude/``, in subfolders, CLAUDE.local.md, the user's
``~/.claude/CLAUDE.md`` and rules; ``.claude/rules`` with and without ``paths:`` (lists,
strings, negated globs, brace globs), empty frontmatter, a byte-order mark, CRLF, symlinked
rules; includes (relative, ``./``, ``~/``, absolute, fragments ``#x``, escaped spaces,
trailing punctuation, in ```` ``` ```` and ``~~~`` fences, indented code, inline code, HTML
comments in and out of code, nested, cycles, outside the project, missing); AGENTS.md with and
without CLAUDE.md, CLAUDE.md symlinked to AGENTS.md; unicode names; a read of a file in a
subfolder (what loads on read).

``generate(seed, index)`` is pure: the same pair always gives the same tree.
"""

from __future__ import annotations

import os
import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import AgentSpec, default_version
from tests.conformance.predict import claude as predict_claude
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "claude"
CI_SEED = 20
CI_CASES = 20  # with the 21 kept trees: 51 trees took 237 s under load (4 runs on 2 cores)

# Files an include may name (created or not), with the spelling used in the include.
_TARGETS: list[tuple[str, str]] = [
    ("docs/style.md", "docs/style.md"),
    ("docs/style.md", "./docs/style.md"),
    ("docs/style.md", "docs/style.md#naming"),
    ("docs/my notes.md", "docs/my\\ notes.md"),
    ("notes/日本語.md", "./notes/日本語.md"),
    ("shared/team.md", "shared/team.md"),
    ("shared/team.md", "<WS>/shared/team.md"),
    ("missing.md", "missing.md"),
    ("docs/a.md", "docs/a.md"),
    ("docs/b.md", "docs/b.md"),
    ("sub/inner.md", "sub/inner.md"),
    ("docs/a_b.md", "docs/a\\_b.md"),
    ("docs/a_b.md", "docs/a_b.md"),
    ("docs/style.md", "docs/style.md/"),
    ("docs/Style.md", "docs/Style.md"),
]
_HOME_TARGETS = [("notes.md", "~/notes.md"), ("team/shared.md", "~/team/shared.md"),
                 ("notes.md", "<HOME>/notes.md")]

_WORDS = ["Use tabs", "Prefer pure functions", "Run the tests", "Überall ✓", "日本語のメモ",
          "emoji 🚀 line", "Keep it short", "Never push to main", "see the README",
          "email me@example.com", "handle @mentions", "a # not a heading", "trailing space  ",
          "tab\tinside", "`code` span", "**bold** and _it_", "1. first", "- item", "> quoted"]
_PUNCT = ["", "", "", ".", ",", ":", ")", ";", "!"]
_GLOBS = ['"src/**/*.ts"', '"sub/**"', '"**/*.py"', '"données/**"', '"src/**/*.{ts,tsx}"',
          '"!src/**/*.test.ts"', '"*.md"', '"src/app/*.ts"', "sub/*", '"**/x.txt"', '"**"',
          '"/src/**"', '"./src/**"', '"src/"', '"docs/*.txt"', '"sub/deep/"']
_READS = ["sub/x.txt", "src/app/main.ts", "src/app/main.test.ts", "données/x.txt",
          "sub/deep/y.py", "docs/guide.txt"]


def _line(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def _include(rng: random.Random, home: bool = True) -> tuple[str, str]:
    """(the include text, the file it names, or '' for a home file)."""
    if home and rng.random() < 0.15:
        rel, spelled = rng.choice(_HOME_TARGETS)
        return "@" + spelled + rng.choice(_PUNCT), "~/" + rel
    rel, spelled = rng.choice(_TARGETS)
    return "@" + spelled + rng.choice(_PUNCT), rel


def _body(rng: random.Random, includes: list[str], depth: int = 0) -> str:
    """A markdown body: prose, includes in every context, comments, code."""
    lines: list[str] = []
    for _ in range(rng.randint(1, 7)):
        kind = rng.choice(["text", "text", "include", "include", "heading", "comment",
                           "block-comment", "fence", "tilde", "indented", "inline", "blank",
                           "list-include", "comment-blank", "markup-include", "quote",
                           "comment-variant", "list-comment", "loose-list"])
        if kind == "text":
            lines.append(_line(rng))
        elif kind == "heading":
            lines.append(f"{'#' * rng.randint(1, 3)} {_line(rng)}")
        elif kind == "include":
            text, rel = _include(rng)
            includes.append(rel)
            lines.append(rng.choice(["{}", "See {}", "{} and more", "- {}", "({})"]).format(text))
        elif kind == "list-include":
            text, rel = _include(rng)
            includes.append(rel)
            lines.append(f"* Style: {text}")
        elif kind == "comment":
            lines.append(f"Visible <!-- hidden {_line(rng)} --> text")
        elif kind == "block-comment":
            inner, rel = _include(rng)
            lines += ["<!--", f"hidden {inner}", "-->"]
        elif kind == "comment-blank":
            lines += [f"<!-- note: {_line(rng)} -->", "", _line(rng)]
        elif kind in ("fence", "tilde"):
            mark = "```" if kind == "fence" else "~~~"
            inner, _rel = _include(rng)
            body = rng.choice([inner, f"<!-- in code {_line(rng)} -->", "x = 1", inner])
            lines += ["", mark + rng.choice(["", "md", "python"]), body, mark, ""]
        elif kind == "indented":
            inner, _rel = _include(rng)
            lines += ["", "    " + inner, "    <!-- indented comment -->", ""]
        elif kind == "markup-include":
            text, rel = _include(rng)
            includes.append(rel)
            lines.append(rng.choice(["**{}**", "_{}_", "[{}](https://x.y)", "## {}",
                                     "{}  ", "text\\\n{}", "<span>{}</span>", "x<br>{}"]
                                    ).format(text))
        elif kind == "quote":
            text, rel = _include(rng)
            includes.append(rel)
            lines += ["", f"> {text}", "> <!-- quoted comment -->", ""]
        elif kind == "comment-variant":
            inner, rel = _include(rng)
            includes.append(rel)
            lines += rng.choice([
                [f"<!-- c --> after {inner}"], ["  <!-- indented -->", "  ", _line(rng)],
                ["<!-- unclosed", inner], ["<!-- a -->", "<!-- b -->", "", "", _line(rng)],
                [f"{_line(rng)}", "<!-- interrupts -->", "next"], ["<!---->", ""],
                ["<div>", inner, "</div>", ""], ["<!-- a --> <!-- b -->", "\t", ""]])
        elif kind == "list-comment":
            inner, rel = _include(rng)
            includes.append(rel)
            lines += [f"- item <!-- {inner} --> tail", f"- `{inner}` code", "- <!-- c -->"]
        elif kind == "loose-list":
            inner, rel = _include(rng)
            includes.append(rel)
            lines += ["", f"- a <!-- {inner} --> b", "", f"- {inner}", ""]
        elif kind == "inline":
            inner, _rel = _include(rng)
            lines.append(f"Inline `{inner}` code")
        else:
            lines.append("")
    return "\n".join(lines) + "\n"


def _frontmatter(rng: random.Random, scoped: bool) -> str:
    if not scoped:
        return rng.choice(["", "", "", "---\n---\n", "---\ndescription: style\n---\n",
                           "---\n---\n\n", "---\ntitle: a---b\n---\n", "---  \nk: v\n---  \n",
                           "---\npaths:\n---\n", "---\npaths: []\n---\n"])
    globs = rng.sample(_GLOBS, rng.randint(1, 2))
    form = rng.choice(["list", "list", "string", "inline", "comma"])
    if form == "list":
        return "---\npaths:\n" + "".join(f"  - {g}\n" for g in globs) + "---\n"
    if form == "inline":
        return "---\npaths: [" + ", ".join(globs) + "]\n---\n"
    if form == "string":
        return f"---\npaths: {globs[0].strip(chr(34))}\n---\n" + rng.choice(["", "\n", "\n\n"])
    return "---\npaths: " + ", ".join(g.strip(chr(34)) for g in globs) + "\n---\n"


def _variant(rng: random.Random, text: str) -> str:
    """Byte-level variants real files have: CRLF, a BOM, no final newline."""
    roll = rng.random()
    if roll < 0.12:
        text = text.replace("\n", "\r\n")
    elif roll < 0.2:
        text = "\ufeff" + text
    elif roll < 0.25:
        text = text.rstrip("\n")
    return text


def _plain(rng: random.Random) -> str:
    return "\n".join(_line(rng) for _ in range(rng.randint(1, 3))) + "\n"


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"claude-{seed}-{index}")
    tree: dict[str, TreeValue] = {".git": None}
    home: dict[str, TreeValue] = {}
    includes: list[str] = []

    # The project's memory files.
    layout = rng.choice(["claude", "claude", "claude", "dot-claude", "agents", "agents+claude",
                         "symlink", "none"])
    if layout in ("claude", "agents+claude"):
        tree["CLAUDE.md"] = _variant(rng, _frontmatter(rng, False) + _body(rng, includes))
    if layout == "dot-claude":
        tree[".claude/CLAUDE.md"] = _variant(rng, _body(rng, includes))
    if layout in ("agents", "agents+claude", "symlink"):
        tree["AGENTS.md"] = _variant(rng, _body(rng, includes))
    if layout == "symlink":
        tree["CLAUDE.md"] = {"symlink": "AGENTS.md"}
    if rng.random() < 0.3:
        tree["CLAUDE.local.md"] = _variant(rng, _body(rng, includes))

    # Rules.
    for n in range(rng.choice([0, 0, 1, 2, 3])):
        scoped = rng.random() < 0.5
        name = rng.choice([f"r{n}.md", f"style/r{n}.md", f"règle-{n}.md", f"r {n}.md"])
        tree[f".claude/rules/{name}"] = _variant(
            rng, _frontmatter(rng, scoped) + _body(rng, includes))
    if rng.random() < 0.12:
        tree["shared/linked-rule.md"] = _variant(rng, _frontmatter(rng, rng.random() < 0.5)
                                                 + _plain(rng))
        tree[".claude/rules/linked.md"] = {"symlink": "../../shared/linked-rule.md"}

    # Subfolder memory (loaded on read).
    for folder in rng.sample(["sub", "src", "src/app", "données", "sub/deep"], rng.randint(0, 2)):
        name = rng.choice(["CLAUDE.md", "CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md",
                           "CLAUDE.local.md"])
        tree[f"{folder}/{name}"] = _variant(rng, _body(rng, includes))

    # User memory.
    if rng.random() < 0.4:
        home[".claude/CLAUDE.md"] = _variant(rng, _body(rng, includes))
    if rng.random() < 0.15:
        home[".claude/rules/user.md"] = _frontmatter(rng, rng.random() < 0.4) + _plain(rng)

    # Include targets: most of those named exist, some include further (nested, cycles).
    for rel in dict.fromkeys(includes):
        if rel == "missing.md" or rng.random() < 0.1:
            continue
        nested: list[str] = []
        text = _plain(rng)
        if rng.random() < 0.25:
            extra, target = _include(rng, home=False)
            nested.append(target)
            text += f"Nested {extra}\n"
        if rng.random() < 0.1:
            text += f"Cycle @{rel.replace('~/', '~/')}\n" if not rel.startswith("~/") else ""
        if rel.startswith("~/"):
            home[rel[2:]] = _variant(rng, text)
        else:
            tree[rel] = _variant(rng, text)
        for target in nested:
            if target not in tree and target != "missing.md" and not target.startswith("~/"):
                tree[target] = _plain(rng)

    # Claude Code's own configuration: external includes approved for this project.
    if rng.random() < 0.25:
        approved = rng.choice(["true", "true", "false"])
        home[".claude.json"] = ('{"projects": {"<WS>": {"hasClaudeMdExternalIncludesApproved": '
                                + approved + "}}}")

    # The file the scripted Read names.
    read = None
    if rng.random() < 0.6:
        read = rng.choice(_READS)
        tree[read] = "content\n"
    cwd = "."
    if rng.random() < 0.1:
        cwd = rng.choice(["sub", "src"])
        tree.setdefault(f"{cwd}/keep.txt", "x\n")
    # Skills (their own random stream, so the memory trees stay what they were).
    _skills(random.Random(f"claude-skills-{seed}-{index}"), tree, home, cwd)
    if seed >= READ_SKILLS_SEED and read is not None:
        _read_skills(random.Random(f"claude-read-skills-{seed}-{index}"), tree, read)
    return Scenario(id=f"diff-claude-{seed}-{index:04d}", agents=[AGENT], tree=tree, home=home,
                    cwd=cwd, read=read, generated=True, about=f"layout {layout}")


# ----------------------------------------------------------------------------- skills
# Folder names that sort differently by byte and by localeCompare, and odd ones.
SKILL_NAMES = ("fmt", "Fmt", "deploy", "a-b", "a_b", "a.b", "A", "b2", "B", "10", "9", "review",
               "Über", "zz top", "x:y", "lint")
# Claude Code's built-in skills on 2.1.330 and 2.1.332, in listing order: the listing's user
# and project lines end where the first one they do not hide starts (a project skill named
# `dataviz` hides the built-in one: seed 5400 tree 44).
BUILTIN_SKILLS = ("dataviz", "update-config", "keybindings-help", "code-review")


def _skill_text(rng: random.Random, folder: str) -> str:
    kind = rng.choice(["plain", "plain", "plain", "no-desc", "no-fm", "quoted", "angle", "when",
                       "number", "named", "colon", "block", "empty", "heading-long", "crlf",
                       "escape", "escape", "broken-yaml", "broken-yaml", "bom", "hidden"])
    desc = rng.choice(["Format the code.", "Deploy — carefully ✓", "Run the tests first.",
                       "  padded  "])
    if kind == "plain":
        return f"---\ndescription: {desc}\n---\nBody\n"
    if kind == "no-desc":
        return "---\nname: " + folder + "\n---\n\n" + rng.choice(["First line\nsecond\n",
                                                                       "## A heading\n", ""])
    if kind == "no-fm":
        return rng.choice(["# Title here\n\nbody\n", "just text\n", "**bold** start\n"])
    if kind == "quoted":
        return '---\ndescription: "two\\nlines\\ttab"\n---\n'
    if kind == "angle":
        return "---\ndescription: use <this> & that\n---\n"
    if kind == "when":
        return f"---\ndescription: {desc}\nwhen_to_use: when asked\n---\n"
    if kind == "number":
        return "---\ndescription: 42\n---\n"
    if kind == "named":
        other = rng.choice(["other", "Other Name", "x:y", folder])
        return f"---\nname: {other}\ndescription: named\n---\n"
    if kind == "colon":
        return "---\ndescription: Use this: when colons\n---\n"
    if kind == "block":
        return "---\ndescription: |\n  line one\n  line two\n---\n"
    if kind == "empty":
        return ""
    if kind == "heading-long":
        return "# " + "long heading " * 10 + "\n"
    if kind in ("escape", "broken-yaml", "bom", "hidden"):
        return _hostile_skill(rng, kind, desc)
    return f"---\r\ndescription: {desc}\r\n---\r\nbody\r\n"


# Terminal escapes as a description may hold them: colours, OSC titles and links, DCS, C1
# introducers, two-character escapes, unterminated ones, a lone ESC.
_ESCAPES = ["\x1b[31m", "\x1b[0m", "\x1b[1;32m", "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\",
            "\x1bP1;2qdata\x1b\\", "\x9b31m", "\x9d8;;u\x9c", "\x1b(B", "\x1bM", "\x1b a",
            "\x1b", "\x1b[?25l", "\x1b[1;2:3 m", "\x1b[31", "\x1b\xe9"]
# Broken or odd YAML: unclosed flows, stray indicators, a tab indent, dashes inside a value.
_BROKEN = ["description: [a: b", "description: {x: y", 'description: "unterminated',
           "description: [a, b]", "description: *star and @at", "description: a: b # hash",
           "k9: [a: b\ndescription: fine", "description: a: b\n\tname: t",
           "description: 'it''s: [x'", "description: a---b\nname: dashes",
           "description: 100% `done`", "description: x\n  - y: [z", "description: !tag val",
           "description: >\n  folded: [x\n", "description: |\n  a\n b"]
# Hidden and wide characters: what the listing hides and how its budget counts columns.
_HIDDEN = ["\u200b", "\u00ad", "\ufe0f", "\ue000", "\u2028", "\u2800",
           "\U0001F468\u200d\U0001F469", "\u8a9e\u8a9e", "e\u0301", "\U0001D49C",
           "\U0001F1EB\U0001F1F7", "\u3164", "\x1c"]


def _hostile_skill(rng: random.Random, kind: str, desc: str) -> str:
    if kind == "escape":
        text = desc[:4] + rng.choice(_ESCAPES) + desc[4:] + rng.choice([*_ESCAPES, ""])
        if rng.random() < 0.5:  # written raw in a plain scalar (YAML loads controls as they are)
            return f"---\ndescription: {text}\n---\nbody\n"
        if rng.random() < 0.5:
            return f"---\nname: esc\n---\n{text}\n"
        quoted = text.replace("\\", "\\\\").replace('"', '\\"').replace("\x1b", "\\e")
        return f'---\ndescription: "{quoted}"\nwhen_to_use: "w\\e[4mu"\n---\nbody\n'
    if kind == "broken-yaml":
        return f"---\n{rng.choice(_BROKEN)}\n---\nbody {rng.choice(['one', 'two'])}\n"
    if kind == "bom":
        form = rng.choice(["\ufeff---\ndescription: {d}\n---\nD\n",
                           "\ufeff---\nname: n\n---\nD\n",
                           "\ufeff---\r\ndescription: {d}\r\n---\r\nD\r\n",
                           "\ufeffJust a body\n", "\ufeff\ufeff---\ndescription: {d}\n---\nD\n",
                           "\ufeff\n---\ndescription: {d}\n---\n"])
        return form.replace("{d}", desc.strip())
    hidden = rng.choice(_HIDDEN), rng.choice(_HIDDEN)
    return f"---\ndescription: {desc[:3]}{hidden[0]}{desc[3:]}{hidden[1]}\n---\n"


def _near_budget(rng: random.Random, target: dict[str, TreeValue], prefix: str) -> None:
    """15 to 19 skills whose descriptions bring the listing near Claude Code's budget, counted
    in columns: ASCII words, wide characters (two columns), combining accents (none)."""
    count = rng.randint(15, 19)
    columns = rng.randint(23_000, 25_500) // count - 8
    wide = rng.choice([0, 0, 40, 150])
    accents = rng.choice([0, 0, 60, 120])
    for i in range(count):
        words = max(1, (columns - 2 * wide - 4 * accents) // 5)
        text = "word " * words + "\u8a9e" * wide + "wo\u0301rd" * accents
        target[f"{prefix}.claude/skills/n{i:02d}/SKILL.md"] = f"---\ndescription: {text}\n---\nx\n"


def _skills(rng: random.Random, tree: dict[str, TreeValue], home: dict[str, TreeValue],
            cwd: str) -> None:
    """User and project skills in half the trees: `.claude/skills` in HOME, at the root, in
    the working folder, below it (not listed at start), nested folders (not listed), the same
    name in two places, files that are not skills."""
    if rng.random() < 0.5:
        return
    if rng.random() < 0.2:
        _near_budget(rng, tree, "" if cwd == "." else f"{cwd}/")
    places = [("home", ""), ("tree", ""), ("tree", "" if cwd == "." else cwd), ("tree", "sub")]
    for _ in range(rng.randint(1, 6)):
        where, folder = rng.choice(places)
        name = rng.choice(SKILL_NAMES)
        rel = f"{folder}/.claude/skills/{name}".lstrip("/")
        target = home if where == "home" else tree
        roll = rng.random()
        if roll < 0.08:
            target[f"{rel}/inner/SKILL.md"] = _skill_text(rng, "inner")
        elif roll < 0.12:
            target[f"{rel}/README.md"] = "not a skill\n"
        else:
            target[f"{rel}/SKILL.md"] = _skill_text(rng, name)


# From this seed on, trees with a read may hold `.claude/skills` in the folders of the read
# (found on the read: skills_on_read.py); older seeds keep the trees they had.
READ_SKILLS_SEED = 5400
# Names a skill found on a read may have: the start-up ones, Claude Code's own commands.
READ_SKILL_NAMES = (*SKILL_NAMES, "review", "init", "doctor", "dataviz", "top")


def _read_skills(rng: random.Random, tree: dict[str, TreeValue], read: str) -> None:
    """In half the trees with a read, skills in the folders from the read file's up to the
    root: several per folder, names taken at start or in two folders, hostile texts, entries
    that are not skills."""
    if rng.random() < 0.5:
        return
    folders = []
    folder = os.path.dirname(read)
    while folder:
        folders.append(folder)
        folder = os.path.dirname(folder)
    if rng.random() < 0.3:
        tree[".claude/skills/top/SKILL.md"] = "---\ndescription: At start.\n---\n"
    for _ in range(rng.randint(1, 5)):
        where = rng.choice(folders)
        name = rng.choice(READ_SKILL_NAMES)
        rel = f"{where}/.claude/skills/{name}"
        roll = rng.random()
        if roll < 0.08:
            tree[f"{rel}/README.md"] = "not a skill\n"
        else:
            tree[f"{rel}/SKILL.md"] = _skill_text(rng, name)


IGNORES_FILE = "agent-ignores-file"


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """What differs: the files at start and on read (in order), the start-up payload, and the
    on-read payloads, one per text block Claude Code sent (each ``<system-reminder>`` is a
    block of its own); and a warning that Claude Code does not read a file whose text it sent
    (the file itself or a link to it)."""
    out: list[str] = []
    sent_real = {os.path.realpath(b.path) for b in capture.blocks}
    if any(d.get("code") == IGNORES_FILE and os.path.realpath(d["path"]) in sent_real
           for d in predicted.get("diagnostics", [])):
        out.append("false-ignores-warning")
    sent_startup = [b.path for b in capture.blocks if b.when == "startup"]
    if predicted["startup"] != sent_startup:
        out.append("startup-files")
    sent = "".join(p.text for p in capture.startup)
    if predicted["payloads"] != ([sent] if sent else []):
        out.append("startup-payload")
    if scenario.read:
        sent_on_read = [b.path for b in capture.blocks if b.when == "on-read"]
        if predicted["on_read"] != sent_on_read:
            out.append("on-read-files")
        if predicted["jit_payloads"] != [p.text for p in capture.on_read]:
            out.append("on-read-payload")
    # The skills listing: memlens's lines, then Claude Code's built-in ones.
    listing, sent = predicted["skills"]["listing"], capture.skills_listing or ""
    head = "The following skills are available for use with the Skill tool:\n\n"
    # Listed at start, by the name that hides a built-in one: a folder named like it, shown
    # with its frontmatter name in brackets ("dataviz (esc)": seed 5701, tree 305).
    names = {str(s.get("name", "")).split(" (", 1)[0]
             for s in predicted["skills"].get("skills", [])
             if s.get("offered") and not s.get("onRead")}
    first = "- " + next(b for b in BUILTIN_SKILLS if b not in names) + ": "
    if not sent.startswith((listing + "\n" + first) if listing else head + first):
        out.append("skills-listing")
    return out


def spec(version: str | None = None) -> AgentSpec:
    return AgentSpec(agent=AGENT, version=version or default_version(AGENT), generate=generate,
                     predict=predict_claude, compare=compare, ci_seed=CI_SEED,
                     ci_cases=CI_CASES)
