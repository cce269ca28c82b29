"""Generated trees for Codex CLI (0.169.0, and 0.171.0 which sends the same): ``generate(seed,
index)`` is a pure function of its arguments (``random.Random(f"codex-{seed}-{index}")``), so
tree ``index`` of ``seed`` is always the same.

What real repositories hold, and what breaks a loader, in Codex's terms:

* ``AGENTS.md`` / ``AGENTS.override.md`` at every level from a project root down to the
  working folder (and below it, where Codex must not look), blank and whitespace-only files
  (an empty override still hides ``AGENTS.md``), CRLF, a byte-order mark, unicode text and
  folder names, invalid UTF-8, Rust-trim edge characters (NBSP, U+3000, U+001C), large files
  near the 32 KiB budget with multi-byte characters at the cut, symbolic links (to a file, to a
  folder, dangling), a folder named ``AGENTS.md``;
* ``$CODEX_HOME`` (``HOME/.codex``): the global ``AGENTS.override.md`` / ``AGENTS.md`` (blank
  ones fall through), and ``config.toml`` with ``project_doc_fallback_filenames`` (padded names,
  duplicates, empty strings, names with a slash, ``.``/``..``), ``project_doc_max_bytes``
  (0, tiny, around a file's size, above the default), ``project_root_markers`` (custom
  markers that move the root, an empty list, a marker path with a slash) and a trust entry for
  the working folder (``[projects."<cwd>"] trust_level``; ``<WS>`` is replaced by the staged
  workspace's path when the tree is built);
* a project ``.codex/config.toml`` (read by Codex only for a trusted working folder);
* the root: a ``.git`` folder, a ``.git`` file (worktree), a dangling ``.git`` link, none.

Configs are always valid TOML of the right types (Codex refuses to start otherwise; that
case is a hand-written scenario, not a generated one).
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import AgentSpec, default_version
from tests.conformance.predict import codex as predict_codex
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "codex"
CI_SEED = 31
CI_CASES = 30
FOLDERS = (
    "src", "src/core", "src/core/deep", "docs", "pkg/api", "pkg/web", "app", "über/straße",
    "日本/語", "a b", "v1.2", ".hidden", "node_modules/lib", "tests/unit", "emoji🚀",
    "services/billing/internal",
)
LINES = (
    "# Project guide", "## Build", "Run `make test` before committing.", "- Use tabs.",
    "- Prefer small functions.", "1. numbered step", "Überall ✓ — “quotes”", "こんにちは 🌍",
    "", "   ", "trailing spaces   ", "Tabs\tinside", "See @./docs/style.md (not expanded).",
    "<!-- an html comment -->", "```sh\nnpm test\n```", "~~~\nfenced\n~~~",
    "    indented code", "Mail me@example.com", "\u00a0nbsp-led line", "\u3000ideographic",
    "\x1cinformation separator", "\u200bzero width", "| a | b |\n|---|---|\n| 1 | 2 |",
    "> quoted", "---", "name: not frontmatter",
)
FALLBACKS = (
    "CLAUDE.md", "GEMINI.md", "README.md", "agents.md", " CLAUDE.md ", "CLAUDE.md\t", "",
    "   ", "AGENTS.md", "AGENTS.override.md", "docs/AGENTS.md", ".", "..", "COPILOT.md",
    "notes/CLAUDE.md", "CONTRIBUTING.md", "ünïcode.md",
)
MARKERS = (".git", "package.json", "pyproject.toml", ".hg", "Cargo.toml", ".root", "a b",
           "src/core", ".codex")


def _text(rng: random.Random, low: int = 1, high: int = 5) -> str:
    lines = [rng.choice(LINES) for _ in range(rng.randint(low, high))]
    newline = "\r\n" if rng.random() < 0.15 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    roll = rng.random()
    if roll < 0.75:
        text += newline
    elif roll < 0.82:
        text += newline * 3
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


def _doc(rng: random.Random) -> TreeValue:
    """One memory file's content: usually a few lines, sometimes blank, huge or odd bytes."""
    roll = rng.random()
    if roll < 0.06:
        return ""
    if roll < 0.11:
        return rng.choice(("  \n\n", "\n", "\t", "\u00a0\n", "\u3000", "\r\n\r\n", "\x1c"))
    if roll < 0.16:
        # near the 32 KiB budget, a multi-byte character where the cut may fall
        size = rng.choice((8000, 16380, 16384, 32700, 32766, 32767, 32768, 40000))
        char = rng.choice(("x", "é", "€", "🚀"))
        return {"parts": [{"repeat": "y", "times": size - rng.randint(0, 6)},
                          {"repeat": char, "times": rng.randint(1, 8)}, "\n"]}
    if roll < 0.19:
        return {"hex": rng.choice(("61ff620a", "c328410a", "e282", "efbbbf0a", "410d0a0d"))}
    return _text(rng)


def _chain(folders: list[str]) -> list[str]:
    out = {""}
    for folder in folders:
        parts = folder.split("/")
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(out)


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string for what we write


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"{AGENT}-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FOLDERS, rng.randint(1, 4)))
    chain = _chain(folders)
    cwd = "." if rng.random() < 0.3 else rng.choice(chain[1:])
    config: list[str] = []

    # --- the root
    root_kind = rng.random()
    if root_kind < 0.65:
        tree[".git"] = None
    elif root_kind < 0.72:
        tree[".git"] = "gitdir: ../elsewhere/.git/worktrees/ws\n"
    elif root_kind < 0.76:
        tree[".git"] = {"symlink": "missing-git-dir"}
    if rng.random() < 0.12 and len(chain) > 1:
        tree[f"{rng.choice(chain[1:])}/.git"] = None  # a nested repository (submodule)
    if rng.random() < 0.2:
        markers = rng.sample(MARKERS, rng.randint(0, 2))
        config.append(f"project_root_markers = [{', '.join(_toml_str(m) for m in markers)}]")
        for marker in markers:
            where = rng.choice(chain)
            path = f"{where}/{marker}".lstrip("/")
            if marker not in (".git", "src/core", "a b", ".codex"):
                tree.setdefault(path, "{}\n")
            elif marker != ".git":
                tree.setdefault(path, None)

    # --- configured names, budget
    fallbacks: list[str] = []
    if rng.random() < 0.35:
        fallbacks = rng.sample(FALLBACKS, rng.randint(1, 3))
        config.append("project_doc_fallback_filenames = ["
                      + ", ".join(_toml_str(n) for n in fallbacks) + "]")
    if rng.random() < 0.15:
        config.append(f"project_doc_max_bytes = {rng.choice((0, 1, 5, 12, 100, 4096, 65536))}")
    if rng.random() < 0.08:
        level = rng.choice(("trusted", "untrusted"))
        target = "<WS>" if cwd == "." else f"<WS>/{cwd}"
        config.append(f"\n[projects.{_toml_str(target)}]\ntrust_level = {_toml_str(level)}")
    if config or rng.random() < 0.1:
        comment = "# codex settings\n" if rng.random() < 0.3 else ""
        home[".codex/config.toml"] = comment + "\n".join(config) + "\n"

    # --- project docs, folder by folder
    names = [n.strip() for n in fallbacks
             if n.strip() and "/" not in n and n.strip() not in (".", "..")]
    for folder in chain:
        prefix = f"{folder}/" if folder else ""
        if folder:
            tree.setdefault(folder, None)
        if rng.random() < 0.55:
            tree[f"{prefix}AGENTS.md"] = _doc(rng)
        if rng.random() < 0.15:
            tree[f"{prefix}AGENTS.override.md"] = _doc(rng)
        for name in names:
            if rng.random() < 0.35:
                tree[f"{prefix}{name}"] = _doc(rng)
        for name in fallbacks:
            if "/" in name.strip() and rng.random() < 0.5:
                tree[f"{prefix}{name.strip()}"] = _doc(rng)
        odd = rng.random()
        if odd < 0.04:
            tree[f"{prefix}AGENTS.md"] = {"symlink": rng.choice(("../AGENTS.md", "nowhere.md",
                                                                 "docs/real.md"))}
            tree.setdefault(f"{prefix}docs/real.md", _text(rng))
        elif odd < 0.06:
            tree[f"{prefix}AGENTS.override.md/inner.txt"] = "a folder named like a doc\n"
            tree.pop(f"{prefix}AGENTS.override.md", None)
        elif odd < 0.08 and folder:
            tree[f"{prefix}AGENTS.md"] = {"symlink": "/".join([".."] * (folder.count("/") + 1))
                                          + "/AGENTS.md"}

    # --- the global folder
    roll = rng.random()
    if roll < 0.5:
        home[".codex/AGENTS.md"] = _doc(rng)
    if rng.random() < 0.12:
        home[".codex/AGENTS.override.md"] = _doc(rng)
    if rng.random() < 0.03:
        home[".codex/AGENTS.md"] = {"symlink": "../notes/global.md"}
        home["notes/global.md"] = _text(rng)

    # --- a project config (a layer Codex reads only for a trusted working folder)
    if rng.random() < 0.06:
        where = "" if cwd == "." else f"{cwd}/"
        tree[f"{where}.codex/config.toml"] = rng.choice((
            "project_doc_max_bytes = 4\n", 'project_doc_fallback_filenames = ["CLAUDE.md"]\n',
            'project_root_markers = ["package.json"]\n'))

    if cwd != ".":
        tree.setdefault(cwd, None)
    # Skills (their own random stream, so the memory trees stay what they were).
    _skills(random.Random(f"{AGENT}-skills-{seed}-{index}"), tree, home, chain)
    return Scenario(id=f"diff-{AGENT}-{seed}-{index:04d}", agents=[AGENT], about="generated",
                    tree=_buildable(tree), home=_buildable(home), cwd=cwd, generated=True)


SKILL_NAMES = ("fmt", "Fmt", "deploy", "a-b", "a_b", "Über", "zz top", "review", "b2", "10",
               "9", "lint")


def _skill_text(rng: random.Random, folder: str) -> str:
    kind = rng.choice(["plain", "plain", "plain", "named", "no-desc", "empty-desc", "no-fm",
                       "long-name", "long-desc", "block", "number", "colon", "crlf", "short"])
    desc = rng.choice(["Format the code.", "Deploy — carefully ✓", "use <this> & that",
                       "  padded\ttab  "])
    if kind == "plain":
        return f"---\ndescription: {desc}\n---\nbody\n"
    if kind == "named":
        name = rng.choice(["other", "fmt", "with space", "ünï", "5"])
        return f"---\nname: {name}\ndescription: {desc}\n---\n"
    if kind == "no-desc":
        return f"---\nname: {folder}\n---\nbody\n"
    if kind == "empty-desc":
        return '---\ndescription: ""\n---\n'
    if kind == "no-fm":
        return "# Title\n\nbody\n"
    if kind == "long-name":
        return "---\nname: " + "n" * rng.choice((64, 65)) + "\ndescription: d\n---\n"
    if kind == "long-desc":
        return "---\ndescription: " + "é" * rng.choice((1024, 1025, 1100)) + "\n---\n"
    if kind == "block":
        return "---\ndescription: |\n  line one\n  line two\n---\n"
    if kind == "number":
        return "---\nname: 7\ndescription: 42\n---\n"
    if kind == "colon":
        return "---\ndescription: Use this: when colons\n---\n"
    if kind == "crlf":
        return f"---\r\ndescription: {desc}\r\n---\r\n"
    return f"---\ndescription: {desc}\nmetadata:\n  short-description: short\n---\n"


def _skills(rng: random.Random, tree: dict[str, TreeValue], home: dict[str, TreeValue],
            chain: list[str]) -> None:
    """Skills in half the trees: `$CODEX_HOME/skills`, `~/.agents/skills`, `.agents/skills`
    along the chain (and below the working folder, where Codex does not look), nested folders,
    hidden ones, the same name twice."""
    if rng.random() < 0.5:
        return
    for _ in range(rng.randint(1, 6)):
        where = rng.choice(["codex-home", "home-agents", "tree", "tree", "tree"])
        name = rng.choice(SKILL_NAMES)
        sub = rng.choice(["", "", "", "group/", ".hidden/", "a/b/c/d/e/f/"])
        text = _skill_text(rng, name)
        if where == "codex-home":
            home[f".codex/skills/{sub}{name}/SKILL.md"] = text
        elif where == "home-agents":
            home[f".agents/skills/{sub}{name}/SKILL.md"] = text
        else:
            folder = rng.choice([*chain, "below"])
            prefix = f"{folder}/" if folder else ""
            tree[f"{prefix}.agents/skills/{sub}{name}/SKILL.md"] = text


def _buildable(tree: dict[str, TreeValue]) -> dict[str, TreeValue]:
    """Drop a file that another entry needs as a folder (a path both a file and a parent)."""
    parents = {"/".join(k.split("/")[:i]) for k in tree for i in range(1, k.count("/") + 1)}
    return {k: v for k, v in tree.items() if v is None or k not in parents}


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """test_codex.py's check: the one `# AGENTS.md instructions` message (or none), byte for
    byte; Codex loads nothing later."""
    sent = [p.text for p in capture.startup]
    found = []
    if not capture.requests:
        found.append("no-request")
    if predicted["payloads"] != sent:
        found.append("payloads")
    if capture.on_read:
        found.append("on-read")
    if (capture.skills_listing or "") != predicted["skills"]["listing"]:
        found.append("skills-listing")
    return found


def spec(version: str | None = None) -> AgentSpec:
    """Codex 0.169.0 by default; ``--agent codex@0.171.0`` runs the newest release against
    the same predictions (the ``codex`` profile)."""
    return AgentSpec(agent=AGENT, version=version or default_version(AGENT), generate=generate,
                     predict=predict_codex, compare=compare, ci_seed=CI_SEED,
                     ci_cases=CI_CASES)
