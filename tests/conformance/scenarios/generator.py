"""Seeded random scenarios: the same (agent, seed, index) always gives the same tree.

Each agent gets ``COUNT`` trees built from its own file names, mixing what the hand-written
scenarios test one at a time: nested folders (unicode names included), imports that resolve,
fail or sit in code spans, CRLF, empty files, frontmatter and comments (Claude), override
files and large files (Codex), a starting folder below the root and a file read in a random
folder. ``MEMLENS_CONFORMANCE_SEED`` picks another family of trees for a local hunt; the
goldens under captured/ belong to the default seed.
"""

from __future__ import annotations

import functools
import json
import os
import random

from tests.conformance.scenarios import Scenario, TreeValue

SEED = int(os.environ.get("MEMLENS_CONFORMANCE_SEED", "12"))
COUNT = int(os.environ.get("MEMLENS_CONFORMANCE_GENERATED", "28"))

FOLDERS = (
    "src", "src/core", "docs", "pkg/api", "pkg/web", "app/deep/er", "über", "日本",
    "a b", "node_modules/lib", ".hidden", "tests/unit",
)
LINES = (
    "Use tabs for indentation.", "Prefer small functions.", "Überall ✓ — “quotes”",
    "こんにちは 🌍", "# Heading", "- bullet item", "Inline `@./x.md` code span.",
    "Mail me@example.com later.", "trailing spaces   ", "", "```\n@./fenced.md\n```",
    "Tabs\tinside", "1. numbered",
)


def _lines(rng: random.Random, low: int = 1, high: int = 4) -> list[str]:
    return [rng.choice(LINES) for _ in range(rng.randint(low, high))]


def _finish(rng: random.Random, lines: list[str]) -> str:
    """Join with LF or (one time in five) CRLF; the last newline is sometimes missing."""
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    return text + (newline if rng.random() < 0.85 else "")


def _folders(rng: random.Random) -> list[str]:
    return sorted(rng.sample(FOLDERS, rng.randint(2, 5)))


def _import_line(rng: random.Random, folder: str, tree: dict[str, TreeValue]) -> str:
    """An import of a notes file that exists (usually), or a failing one."""
    kind = rng.random()
    prefix = f"{folder}/" if folder else ""
    if kind < 0.6:
        name = f"notes{rng.randint(1, 3)}.md"
        tree[f"{prefix}{name}"] = _finish(rng, [*_lines(rng, 1, 2), f"from {name}"])
        return f"See @./{name} for more."
    if kind < 0.75:
        return "Missing: @./missing.md"
    if kind < 0.85:
        return "Ask @someone first."
    return "Parent: @../up.md"


def _read_target(rng: random.Random, folders: list[str], tree: dict[str, TreeValue]) -> str:
    folder = rng.choice(folders)
    name = rng.choice(("x.txt", "main.py", "app.ts", "README.md"))
    path = f"{folder}/{name}"
    tree[path] = "content\n"
    return path


def _cwd(rng: random.Random, folders: list[str], tree: dict[str, TreeValue]) -> str:
    cwd = "." if rng.random() < 0.6 else rng.choice(folders).split("/")[0]
    if cwd != ".":
        tree.setdefault(cwd, None)  # the folder exists even when no file landed in it
    return cwd


def _gemini(rng: random.Random, scenario_id: str, *, settings: bool = False) -> Scenario:
    """With ``settings``, a second random stream also varies Gemini CLI's memory settings
    (classic mode and its folder budget, file names, import format, boundary markers,
    .geminiignore): the loader fuzzer's trees. The tree itself is the same either way."""
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    for folder in ["", *folders]:
        if rng.random() < (0.8 if not folder else 0.55):
            lines = _lines(rng)
            if rng.random() < 0.45:
                lines.insert(rng.randint(0, len(lines)), _import_line(rng, folder, tree))
            tree[f"{folder}/GEMINI.md".lstrip("/")] = _finish(rng, lines)
    if rng.random() < 0.15:
        tree["empty/GEMINI.md"] = ""
    if rng.random() < 0.6:
        home[".gemini/GEMINI.md"] = _finish(rng, _lines(rng))
    read = _read_target(rng, folders, tree) if rng.random() < 0.85 else None
    cwd = _cwd(rng, folders, tree)
    if settings:
        _vary_settings(random.Random(f"settings-{scenario_id}"), folders, tree, home)
    return Scenario(
        id=scenario_id, agents=["gemini"], about="generated",
        tree=tree, home=home, cwd=cwd, read=read, generated=True,
    )


def _vary_settings(
    rng: random.Random, folders: list[str], tree: dict[str, TreeValue],
    home: dict[str, TreeValue],
) -> None:
    context: dict[str, object] = {}
    config: dict[str, object] = {"context": context}
    if rng.random() < 0.35:
        config["experimental"] = {"jitContext": False}
        if rng.random() < 0.4:
            context["discoveryMaxDirs"] = rng.randint(1, 6)
    if rng.random() < 0.2:
        context["fileName"] = rng.choice((["AGENTS.md", "GEMINI.md"], "AGENTS.md", ["CONTEXT.md"]))
        for folder in ["", *rng.sample(folders, min(2, len(folders)))]:
            name = rng.choice(("AGENTS.md", "CONTEXT.md"))
            tree[f"{folder}/{name}".lstrip("/")] = _finish(rng, _lines(rng))
    if rng.random() < 0.15:
        context["importFormat"] = "flat"
    if rng.random() < 0.1:
        context["memoryBoundaryMarkers"] = rng.choice(([], ["package.json"], [".git", "pkg"]))
    if rng.random() < 0.2:
        tree[".geminiignore"] = rng.choice(
            (f"{folders[0]}\n", f"{folders[0]}/\n", "GEMINI.md\n", "*.md\n!GEMINI.md\n")
        )
    if rng.random() < 0.1:
        context["fileFiltering"] = {"respectGitIgnore": True}
        tree[".gitignore"] = f"{folders[-1]}\n"
    home[".gemini/settings.json"] = json.dumps(config)


def _rule(rng: random.Random, folders: list[str]) -> str:
    body = _lines(rng, 1, 2)
    if rng.random() < 0.5:
        return _finish(rng, body)
    glob = rng.choice([f"{rng.choice(folders)}/**", "**/*.py", "**/*.ts", "*.md"])
    return _finish(rng, ["---", "paths:", f'  - "{glob}"', "---", *body])


def _claude_memory(rng: random.Random, folder: str, tree: dict[str, TreeValue]) -> str:
    lines = _lines(rng)
    if rng.random() < 0.4:
        lines.insert(rng.randint(0, len(lines)), _import_line(rng, folder, tree))
    if rng.random() < 0.2:
        lines.insert(rng.randint(0, len(lines)), "<!-- a comment -->")
    if rng.random() < 0.2:
        lines = ["---", "description: generated", "---", *lines]
    return _finish(rng, lines)


def _claude(rng: random.Random, scenario_id: str) -> Scenario:
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    where = rng.random()
    if where < 0.65:
        tree["CLAUDE.md"] = _claude_memory(rng, "", tree)
    elif where < 0.8:
        tree[".claude/CLAUDE.md"] = _finish(rng, _lines(rng))
    elif where < 0.9:
        tree["AGENTS.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.3:
        tree["CLAUDE.local.md"] = _finish(rng, _lines(rng, 1, 2))
    for n in range(rng.randint(0, 3)):
        tree[f".claude/rules/r{n}.md"] = _rule(rng, folders)
    for folder in folders:
        if rng.random() < 0.45:
            tree[f"{folder}/CLAUDE.md"] = _claude_memory(rng, folder, tree)
        elif rng.random() < 0.15:
            tree[f"{folder}/AGENTS.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.5:
        home[".claude/CLAUDE.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.2:
        home[".claude/rules/home.md"] = _rule(rng, folders)
    read = _read_target(rng, folders, tree) if rng.random() < 0.85 else None
    return Scenario(
        id=scenario_id, agents=["claude"], about="generated",
        tree=tree, home=home, cwd=_cwd(rng, folders, tree), read=read, generated=True,
    )


def _codex_text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return "z" * rng.choice((9000, 17000, 33000)) + "\n"
    if rng.random() < 0.08:
        return ""
    return _finish(rng, _lines(rng))


def _codex(rng: random.Random, scenario_id: str) -> Scenario:
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    chain = [""]
    for folder in folders:
        parts = folder.split("/")
        chain += ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for folder in sorted(set(chain)):
        prefix = f"{folder}/" if folder else ""
        if rng.random() < 0.55:
            tree[f"{prefix}AGENTS.md"] = _codex_text(rng)
        if rng.random() < 0.15:
            tree[f"{prefix}AGENTS.override.md"] = _codex_text(rng)
        if not folder or rng.random() < 0.3:
            tree.setdefault(f"{prefix}keep.txt", "x\n")  # the folder exists even if empty
    if rng.random() < 0.5:
        home[".codex/AGENTS.md"] = _codex_text(rng)
    if rng.random() < 0.1:
        home[".codex/AGENTS.override.md"] = _codex_text(rng)
    cwd = "." if rng.random() < 0.3 else rng.choice(sorted(set(chain) - {""}))
    tree.setdefault(f"{cwd}/keep.txt" if cwd != "." else "keep.txt", "x\n")
    return Scenario(
        id=scenario_id, agents=["codex"], about="generated",
        tree=tree, home=home, cwd=cwd, generated=True,
    )


_BUILDERS = {"gemini": _gemini, "claude": _claude, "codex": _codex}


def generate(agent: str, seed: int = SEED, count: int = COUNT) -> list[Scenario]:
    builder = _BUILDERS[agent]
    return [
        builder(random.Random(f"{agent}-{seed}-{i}"), f"gen-{agent}-{seed}-{i:02d}")
        for i in range(count)
    ]


def fuzz_gemini(seed: int, count: int) -> list[Scenario]:
    """Gemini trees with varied settings, for the loader fuzzer (test_loader.py)."""
    return [
        _gemini(random.Random(f"gemini-{seed}-{i}"), f"fuzz-gemini-{seed}-{i:03d}", settings=True)
        for i in range(count)
    ]


@functools.cache
def generated() -> tuple[Scenario, ...]:
    return tuple(s for agent in _BUILDERS for s in generate(agent))
