"""Gemini CLI 0.43.0's generator for the differential runner (core.py): seeded trees for its
memory, its skills listing and its ``save_memory`` tool, and the comparison of what Gemini CLI
sent (and wrote) with memlens's prediction.

Trees mix three parts, each present or not:

* **memory**: GEMINI.md at the root, in ``.gemini/``, in subfolders and HOME; imports that
  resolve, fail, climb, loop, sit in code, carry odd bytes (a NUL in the path); CRLF, a BOM,
  unicode; ``context.fileName`` as a string, a list, a relative path (``docs/CONTEXT.md``),
  with a folder of that name among the files; a read of a file in a subfolder (what loads on
  read, JIT).
* **skills** in every tier Gemini CLI 0.43 reads (extensions, ``~/.gemini/skills``,
  ``~/.agents/skills``, workspace ``.gemini/skills`` and ``.agents/skills``) and where it does
  not look (hidden skill folders, ``node_modules``, the project-memory folder's ``skills/``
  under ``~/.gemini/tmp/<project>/memory``, deeper folders); frontmatter variants: YAML block
  scalars ``|``/``>`` with chomping, duplicate keys, missing or odd names and descriptions
  (numbers, booleans, quotes, unsafe characters), unquoted colons (the fallback line parser),
  indented continuations, comments, BOM, CRLF, text after the closing ``---``, a name shared
  across tiers, one named like the built-in ``skill-creator``, ``SKILL.md`` as a folder.
* **save_memory**: the scripted model calls it (``experimental.memoryV2: false``, or 0.43 has
  no such tool) with facts holding newlines, markdown, leading dashes, ``<>``, unicode; global
  or project scope; the global file (or the configured context file name) existing with and
  without ``## Gemini Added Memories``, a later section, CRLF; the project's ``MEMORY.md``.

``generate(seed, index)`` is pure: the same pair always gives the same tree.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import HERE, AgentSpec
from tests.conformance.predict import gemini as predict_gemini
from tests.conformance.scenarios import Scenario, TreeValue
from tests.conformance.scenarios.generator import _buildable

AGENT = "gemini"
VERSION = "0.43.0"
CI_SEED = 43
CI_CASES = 24  # with the regressions, under 3 minutes of CI on this machine

_TEXT = ["Use tabs.", "Prefer small functions.", "Überall ✓ — “quotes”", "こんにちは 🌍",
         "# Heading", "- bullet", "trailing spaces   ", "", "Tabs\there", "1. numbered",
         "`@./notes.md` in code", "mail me@example.com", "> quoted", "**bold**"]
_FOLDERS = ["src", "docs", "pkg/api", "über", "a b", ".hidden", "src/deep"]


def _nl(rng: random.Random) -> str:
    return "\r\n" if rng.random() < 0.2 else "\n"


def _finish(rng: random.Random, lines: list[str], newline: str | None = None) -> str:
    newline = newline or _nl(rng)
    text = newline.join(lines)
    if rng.random() < 0.85:
        text += newline
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


def _plain(rng: random.Random, low: int = 1, high: int = 3) -> list[str]:
    return [rng.choice(_TEXT) for _ in range(rng.randint(low, high))]


# ----------------------------------------------------------------------------- memory


def _import(rng: random.Random, folder: str, tree: dict[str, TreeValue], depth: int = 0) -> str:
    prefix = f"{folder}/" if folder else ""
    roll = rng.random()
    name = rng.choice(["notes.md", "ü.md", "a b.md", "deep.md", "GEMINI.md", "x.txt"])
    if roll < 0.5:
        if f"{prefix}{name}" not in tree and depth < 4:
            tree[f"{prefix}{name}"] = ""
            body = _plain(rng, 0, 2)
            if rng.random() < 0.4:
                body.append(_import(rng, folder, tree, depth + 1))
            tree[f"{prefix}{name}"] = _finish(rng, body)
        form = rng.choice(["@./{n}", "@{n}", "@./{n}.", "(@./{n})", "@./sub/../{n}",
                           "@<WS>/{p}{n}", "@.//{n}"])
        return "see " + form.format(n=name, p=prefix)
    return rng.choice([
        "missing @./missing.md", "nul @./a\x00b.md", "nul2 @./notes.md\x00x", "folder @./",
        "dir @./src", "up @../GEMINI.md", "abs @/etc/hostname", "home @~/x.md",
        "```\n@./notes.md\n```", "~~~\n@./notes.md\n~~~", "    @./notes.md",
        "<!-- @./notes.md -->", "ask @someone", "@./notes.md@./ü.md",
    ])


def _memory(rng: random.Random, tree: dict[str, TreeValue], home: dict[str, TreeValue],
            settings: dict[str, Any]) -> tuple[list[str], str | None]:
    """Memory files; returns the context file names in use and a file to read (or None)."""
    names = ["GEMINI.md"]
    roll = rng.random()
    if roll < 0.12:
        names = ["AGENTS.md"]
        settings.setdefault("context", {})["fileName"] = "AGENTS.md"
    elif roll < 0.22:
        names = ["AGENTS.md", "GEMINI.md"]
        settings.setdefault("context", {})["fileName"] = names
    elif roll < 0.32:
        names = [rng.choice(["docs/CONTEXT.md", "./CONTEXT.md", "sub/GEMINI.md",
                             "../GEMINI.md"])]
        settings.setdefault("context", {})["fileName"] = (
            names[0] if rng.random() < 0.5 else [names[0], "GEMINI.md"])
        if isinstance(settings["context"]["fileName"], list):
            names = settings["context"]["fileName"]
    folders = sorted(rng.sample(_FOLDERS, rng.randint(0, 3)))
    for where in ["", *folders]:
        if where and rng.random() < 0.5:
            continue
        for name in names:
            if rng.random() < 0.3 and name != names[0]:
                continue
            body = _plain(rng)
            if rng.random() < 0.6:
                body.append(_import(rng, where, tree))
            rel = f"{where}/{name}" if where else name
            tree[rel.removeprefix("./")] = _finish(rng, body)
    if rng.random() < 0.1:
        tree[".gemini/GEMINI.md"] = _finish(rng, _plain(rng))
    if rng.random() < 0.08:
        # a folder named like the context file, among the files that load
        tree[f"{rng.choice(folders) if folders else 'src'}/{names[0]}/keep.txt"] = "x\n"
    if rng.random() < 0.4:
        home[f".gemini/{names[0]}"] = _finish(rng, _plain(rng))
    read = None
    if rng.random() < 0.45:
        where = rng.choice(folders or ["src"])
        read = f"{where}/file.txt"
        tree[read] = "content\n"
    return names, read


# ----------------------------------------------------------------------------- skills

_DESCRIPTIONS = [
    "Formats code.", '"Quoted: with colon"', "'single'", "a: b unquoted colon",
    "|\n  Line one\n  Line two", ">\n  Folded one\n  folded two\n\n  para", "|-\n  strip\n",
    ">+\n  keep\n\n", "|2\n   indented", "multi\n  continued line\n  another", "123", "yes",
    "null", "", "[a, b]", "{x: 1}", "Ünïcödé ✓ 🚀", "tab\there", "<b>tag</b> & amp",
    "x # comment", "- dash", "'it''s'", '"esc \\n \\t \\u00e9"', "2024-01-01", "~",
    "trailing   ", "text\n  name: inner",
]
_NAMES = ["fmt", "lint", "deploy", "skill-creator", "a:b", "x/y", "Deploy", "ünï", "with space",
          "'quoted'", '"dq"', "123", "true", "", "-dash", "name # c", "Fmt"]


def _skill_text(rng: random.Random, name: str | None = None) -> str:
    nl = _nl(rng)
    lines: list[str] = []
    roll = rng.random()
    chosen = name if name is not None else rng.choice(_NAMES)
    if roll < 0.06:
        lines.append(f"description: {rng.choice(_DESCRIPTIONS)}")  # no name
    elif roll < 0.1:
        lines.append(f"name: {chosen}")  # no description
    else:
        pair = [f"name: {chosen}", f"description: {rng.choice(_DESCRIPTIONS)}"]
        if rng.random() < 0.2:
            pair.reverse()
        lines += pair
    if rng.random() < 0.15:
        lines.append(rng.choice([f"name: {rng.choice(_NAMES)}", "description: again",
                                 "  name: nested", "license: MIT", "# a comment",
                                 "metadata:\n  k: v", "\tname: tabbed"]))
    if rng.random() < 0.1:
        lines.insert(0, rng.choice(["version: 1", "", "---x: y", "allowed-tools: [a]"]))
    front = nl.join(line.replace("\n", nl) for line in lines)
    close = rng.choice(["---", "---", "---", "---", "--- trailing", "---x", "----"])
    body = nl.join(_plain(rng, 0, 3))
    head = "---" + rng.choice([nl, nl, nl, " " + nl, nl + nl])
    text = f"{head}{front}{nl}{close}" + (nl + body if rng.random() < 0.9 else "")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    if rng.random() < 0.03:
        text = "no frontmatter" + nl + text
    return text


_TIERS = [
    ("home", ".gemini/skills"), ("home", ".agents/skills"), ("tree", ".gemini/skills"),
    ("tree", ".agents/skills"), ("ext", "skills"), ("projmem", "skills"),
]


def _skills(rng: random.Random, tree: dict[str, TreeValue], home: dict[str, TreeValue]) -> None:
    shared = rng.choice(_NAMES[:4])  # a name more than one tier may use
    for side, base in rng.sample(_TIERS, rng.randint(1, 4)):
        if side == "ext":
            ext = rng.choice(["my-ext", "ext ü"])
            root = f".gemini/extensions/{ext}"
            manifest: dict[str, Any] = {"name": ext.split()[0], "version": "1.0.0"}
            home[f"{root}/gemini-extension.json"] = json.dumps(manifest)
            target, folder = home, f"{root}/{base}"
        elif side == "projmem":
            home[".gemini/projects.json"] = json.dumps({"projects": {"<WS>": "ws"}})
            home[".gemini/tmp/ws/.project_root"] = "<WS>"
            target, folder = home, f".gemini/tmp/ws/memory/{base}"
        else:
            target, folder = (home if side == "home" else tree), base
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            name = shared if rng.random() < 0.25 else None
            if kind < 0.1:
                target[f"{folder}/SKILL.md"] = _skill_text(rng, name)
            elif kind < 0.2:
                hidden = rng.choice([".hidden", ".git", "node_modules", "_under"])
                target[f"{folder}/{hidden}/SKILL.md"] = _skill_text(rng, name)
            elif kind < 0.25:
                target[f"{folder}/deep/er/SKILL.md"] = _skill_text(rng, name)
            elif kind < 0.28:
                target[f"{folder}/asdir/SKILL.md/x.md"] = "x\n"
            elif kind < 0.31:
                target[f"{folder}/lower/skill.md"] = _skill_text(rng, name)
            else:
                sub = rng.choice(["fmt", "lint", "deploy", "zeta", "Alpha", "ü", "b c", "_x",
                                  "1", "z-last"])
                target[f"{folder}/{sub}/SKILL.md"] = _skill_text(rng, name)


# ----------------------------------------------------------------------------- save_memory

_FACTS = [
    "The build uses pnpm.", "line one\nline two", "- leading dash", "--  - many dashes",
    "  spaced  ", "**bold** and `code`", "<script>alert(1)</script>", "Ünïcödé ✓ 🚀 日本",
    "crlf\r\nfact", "## Heading fact", "tab\tfact", "- ", "\u00a0nbsp start", "x" * 300,
    "ends with newline\n", "a > b < c", "\u2028sep", "emoji 👍🏽 zwj 👨‍👩‍👧",
]


def _global_file(rng: random.Random) -> str | None:
    nl = _nl(rng)
    return rng.choice([
        None, "", "Intro" + nl, "Intro", "Intro" + nl + nl,
        f"# Mine{nl}{nl}## Gemini Added Memories{nl}- old{nl}",
        f"## Gemini Added Memories{nl}- a{nl}{nl}## Later{nl}text{nl}",
        f"## Gemini Added Memories{nl}",
        f"Text{nl}## Gemini Added Memories   {nl}- a{nl}- b{nl}{nl}{nl}",
        f"pre ## Gemini Added Memories inline{nl}",
        f"## Gemini Added Memories{nl}- a{nl}### Sub{nl}- b{nl}## Next{nl}",
        "\ufeff## Gemini Added Memories" + nl + "- bom" + nl,
    ])


def _save_memory(rng: random.Random, names: list[str], home: dict[str, TreeValue],
                 settings_home: dict[str, Any]) -> dict[str, Any]:
    settings_home.setdefault("experimental", {})["memoryV2"] = False
    scope = rng.choice(["global", "global", "project", None])
    fact = rng.choice(_FACTS)
    if rng.random() < 0.3:
        fact = rng.choice(_FACTS) + rng.choice([" ", "\n", ""]) + fact
    if scope == "project":
        existing = rng.choice([None, "", "- one\n", "- one", "- one\r\n", "# Index\n\n"])
        if existing is not None:
            home[".gemini/projects.json"] = json.dumps({"projects": {"<WS>": "ws"}})
            home[".gemini/tmp/ws/.project_root"] = "<WS>"
            home[".gemini/tmp/ws/memory/MEMORY.md"] = existing
    else:
        existing = _global_file(rng)
        if existing is not None:
            home[f".gemini/{names[0].removeprefix('./')}"] = existing
    args: dict[str, Any] = {"fact": fact}
    if scope:
        args["scope"] = scope
    return {"name": "save_memory", "args": args}


# ----------------------------------------------------------------------------- the tree


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"gemini43-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    settings_ws: dict[str, Any] = {}
    settings_home: dict[str, Any] = {}
    if rng.random() < 0.9:
        tree[".git"] = None
    parts = rng.choice(["memory", "skills", "save", "memory+skills", "skills+save", "all",
                        "skills", "save"])
    names, read = ["GEMINI.md"], None
    if "memory" in parts or parts == "all" or rng.random() < 0.3:
        names, read = _memory(rng, tree, home, settings_home if rng.random() < 0.5
                              else settings_ws)
    if "skills" in parts or parts == "all":
        _skills(rng, tree, home)
    tool_call = None
    if "save" in parts or parts == "all":
        tool_call = _save_memory(rng, names, home, settings_home)
        read = None  # the scripted turn calls save_memory instead of the read
    if settings_ws:
        tree[".gemini/settings.json"] = json.dumps(settings_ws, ensure_ascii=False)
    if settings_home:
        home[".gemini/settings.json"] = json.dumps(settings_home, ensure_ascii=False)
    tree, home = _buildable(tree), _buildable(home)  # a path both a file and a folder: the folder
    return Scenario(id=f"diff-gemini43-{seed}-{index:04d}", agents=[AGENT], tree=tree, home=home,
                    read=read, tool_call=tool_call, generated=True, about=parts)


# ----------------------------------------------------------------------------- comparison


def _builtin(location: str) -> bool:
    """A skill Gemini CLI ships (its bundle's builtin/ folder): memlens lists the user's own."""
    return "/node_modules/@google/gemini-cli/bundle/builtin/" in location


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """What differs: the memory in the system instruction and in the first user message, what
    loaded on read, the skills listing (entries in order, the built-in ones left out), and the
    files save_memory wrote."""
    out: list[str] = []
    sent = {p.where: p.text for p in capture.startup}
    show = predicted["show"]
    if show["prompt"] != sent.get("systemInstruction", ""):
        out.append("system")
    if show["sessionMemory"] != sent.get("session_context", ""):
        out.append("session")
    if scenario.read and predicted["jit"] != "".join(p.text for p in capture.on_read):
        out.append("on-read")
    listed = [s for s in capture.skills or [] if not _builtin(s["location"])]
    if predicted["skills"] != listed:
        same_set = sorted(map(str, predicted["skills"])) == sorted(map(str, listed))
        out.append("skills:order" if same_set else "skills")
    if scenario.tool_call and predicted["written"] != capture.written:
        out.append("save_memory")
    return out


def climbs_out(scenario: Scenario) -> str | None:
    """G5 (deliberate): a context file name with a `..` segment, which memlens refuses."""
    for where in (scenario.home, scenario.tree):
        text = where.get(".gemini/settings.json")
        try:
            names = json.loads(text).get("context", {}).get("fileName") if isinstance(
                text, str) else None
        except (ValueError, AttributeError):
            continue
        names = [names] if isinstance(names, str) else names or []
        if any(isinstance(n, str) and ".." in n.split("/") for n in names):
            return "G5"
    return None


def spec(version: str | None = None) -> AgentSpec:
    return AgentSpec(agent=AGENT, version=version or VERSION, generate=generate,
                     predict=predict_gemini, compare=compare, ci_seed=CI_SEED,
                     ci_cases=CI_CASES, regressions=HERE / "regressions_gemini43.yaml",
                     deliberate=climbs_out)
