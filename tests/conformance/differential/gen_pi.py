"""Generated trees for pi (0.73.1): ``generate(seed, index)`` is a pure function of its
arguments (``random.Random(f"pi-{seed}-{index}")``), so tree ``index`` of ``seed`` is always the
same.

What real repositories hold, and what breaks a loader, in pi's terms:

* in every folder from the workspace down to the working folder (and below it, where pi must
  not look), any of ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD`` and the names pi
  never reads (``agents.md``, ``Agents.md``, ``claude.md``): several in one folder, so the
  order decides; a folder named like a context file, a dangling link, a link to the parent's
  file (the same text twice), a link to a file elsewhere;
* texts: blank and empty files, CRLF, a byte-order mark, unicode, invalid UTF-8, large files
  (pi has no limit), lines that look like pi's own framing (``## /path``, ``# Project
  Context``, ``Current date:``);
* a repository (``.git``) below the workspace root, so files above it are read too; the
  working folder reached through a link;
* the global folder (HOME/.pi/agent): its context file, SYSTEM.md and APPEND_SYSTEM.md; the
  working folder's and a parent's ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md`` (empty ones,
  folders by those names).
"""

from __future__ import annotations

import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import AgentSpec, default_version
from tests.conformance.predict import pi as predict_pi
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "pi"
CI_SEED = 5
CI_CASES = 8
FOLDERS = (
    "src", "src/core", "src/core/deep", "docs", "pkg/api", "pkg/web", "app", "über/straße",
    "日本/語", "a b", "v1.2", ".hidden", "node_modules/lib", "repo/sub", "emoji🚀",
)
READ = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
NEVER = ("agents.md", "Agents.md", "claude.md", "CLAUDE.markdown")
LINES = (
    "# Project guide", "## Build", "Run `make test` before committing.", "- Use tabs.",
    "Überall ✓ — “quotes”", "こんにちは 🌍", "", "   ", "trailing spaces   ", "Tabs\tinside",
    "See @./docs/style.md (not expanded).", "<!-- an html comment -->", "```sh\nnpm test\n```",
    "## /etc/passwd", "# Project Context", "Project-specific instructions and guidelines:",
    "Current date: 2020-01-01", "Current working directory: /nowhere", "\u200bzero width",
    "> quoted", "---", "name: not frontmatter",
)


def _text(rng: random.Random, low: int = 1, high: int = 5) -> str:
    lines = [rng.choice(LINES) for _ in range(rng.randint(low, high))]
    newline = "\r\n" if rng.random() < 0.15 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    roll = rng.random()
    if roll < 0.75:
        text += newline
    elif roll < 0.82:
        text += newline * 3
    if rng.random() < 0.06:
        text = "\ufeff" + text
    return text


def _doc(rng: random.Random) -> TreeValue:
    roll = rng.random()
    if roll < 0.06:
        return ""
    if roll < 0.11:
        return rng.choice(("  \n\n", "\n", "\t", "\u00a0\n", "\r\n\r\n"))
    if roll < 0.14:
        return {"parts": [{"repeat": rng.choice(("y", "é", "🚀")),
                           "times": rng.choice((5000, 40000, 120000))}, "\n"]}
    if roll < 0.18:
        return {"hex": rng.choice(("61ff620a", "c328410a", "e282", "efbbbf0a", "410d0a0d",
                                   "f09f9a"))}
    return _text(rng)


def _chain(folders: list[str]) -> list[str]:
    out = {""}
    for folder in folders:
        parts = folder.split("/")
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(out)


def _context_files(rng: random.Random, tree: dict[str, TreeValue], prefix: str,
                   folder: str) -> None:
    for name in READ:
        if rng.random() < 0.25:
            tree[f"{prefix}{name}"] = _doc(rng)
    if rng.random() < 0.1:
        tree[f"{prefix}{rng.choice(NEVER)}"] = _doc(rng)
    odd = rng.random()
    name = rng.choice(READ)
    if odd < 0.04:
        tree[f"{prefix}{name}/inner.txt"] = "a folder named like a context file\n"
        tree.pop(f"{prefix}{name}", None)
    elif odd < 0.07:
        tree[f"{prefix}{name}"] = {"symlink": rng.choice(("nowhere.md", "docs/real.md"))}
        tree.setdefault(f"{prefix}docs/real.md", _text(rng))
    elif odd < 0.10 and folder:
        tree[f"{prefix}{name}"] = {"symlink": "../" + rng.choice(READ)}


def _prompts(rng: random.Random, files: dict[str, TreeValue], prefix: str,
             chance: float) -> None:
    for name in ("SYSTEM.md", "APPEND_SYSTEM.md"):
        roll = rng.random()
        if roll < chance * 0.15:
            files[f"{prefix}{name}/x"] = "a folder named like a prompt file\n"
        elif roll < chance * 0.3:
            files[f"{prefix}{name}"] = ""
        elif roll < chance:
            files[f"{prefix}{name}"] = _text(rng)


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"{AGENT}-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FOLDERS, rng.randint(1, 4)))
    chain = _chain(folders)
    cwd = "." if rng.random() < 0.25 else rng.choice(chain[1:])
    # A repository below the root: the files above it are read all the same.
    if rng.random() < 0.5 and len(chain) > 1:
        tree[f"{rng.choice(chain[1:])}/.git"] = None
    elif rng.random() < 0.5:
        tree[".git"] = None
    for folder in chain:
        prefix = f"{folder}/" if folder else ""
        if folder:
            tree.setdefault(folder, None)
        _context_files(rng, tree, prefix, folder)
    # Below the working folder: never read at start.
    if rng.random() < 0.4:
        below = ("" if cwd == "." else f"{cwd}/") + "below"
        tree[f"{below}/{rng.choice(READ)}"] = _text(rng)
    # .pi folders: the working folder's, and a parent's (not read).
    where = "" if cwd == "." else f"{cwd}/"
    _prompts(rng, tree, f"{where}.pi/", 0.3)
    if cwd != "." and rng.random() < 0.2:
        _prompts(rng, tree, ".pi/", 0.6)
    # The global folder.
    if rng.random() < 0.6:
        _context_files(rng, home, ".pi/agent/", ".pi/agent")
    _prompts(rng, home, ".pi/agent/", 0.2)
    read = None
    if rng.random() < 0.2:
        read = f"{where}read-me.txt"
        tree[read] = "read me\n"
    # The working folder reached through a link.
    if cwd != "." and rng.random() < 0.08:
        tree["into"] = {"symlink": cwd}
        cwd = "into"
    elif cwd != ".":
        tree.setdefault(cwd, None)
    return Scenario(id=f"diff-{AGENT}-{seed}-{index:04d}", agents=[AGENT], about="generated",
                    tree=_buildable(tree), home=_buildable(home), cwd=cwd, read=read,
                    generated=True)


def _buildable(tree: dict[str, TreeValue]) -> dict[str, TreeValue]:
    """Drop a file that another entry needs as a folder (a path both a file and a parent)."""
    parents = {"/".join(k.split("/")[:i]) for k in tree for i in range(1, k.count("/") + 1)}
    return {k: v for k, v in tree.items() if v is None or k not in parents}


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """test_pi.py's checks: what of the system message comes from files, byte for byte; a
    read adds nothing."""
    sent = [p.text for p in capture.startup]
    found = []
    if not capture.requests:
        found.append("no-request")
    if predicted["payloads"] != sent:
        found.append("payloads")
    if capture.on_read:
        found.append("on-read")
    return found


def spec(version: str | None = None) -> AgentSpec:
    return AgentSpec(agent=AGENT, version=version or default_version(AGENT), generate=generate,
                     predict=predict_pi, compare=compare, ci_seed=CI_SEED, ci_cases=CI_CASES)
